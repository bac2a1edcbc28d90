import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isInitializeRequest, isLegacyRequest, WebStandardStreamableHTTPServerTransport, type Server } from '@modelcontextprotocol/server';
import { InvalidArgumentError } from '../../errors';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { Principal } from '../../suspension/audit';
import { BoundedEventStore, EventBudget } from './event-store';
import { principalOf, type HttpGuard, type McpAuthorize } from './http-guard';
import { authInfoOf, modernHandler } from './modern';
import { sendWebResponse, webRequestOf } from './node-fetch';
import { mrtrSettingsOf } from './mrtr';
import { positive } from './bounds';
import { createMcpServer } from './server';
import { paramHeaderMismatch } from './param-headers';
import { taskNameMismatch } from './tasks';
import type { McpServerOptions } from './types';

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;
/** SEP-2243: a routing or `Mcp-Param-*` header that disagrees with the body. */
const HEADER_MISMATCH = -32020;

/** The Streamable HTTP endpoint's options, wherever it is served: `serveMcp`'s own server, or a host's (the Nest module). */
export interface McpEndpointOptions extends McpServerOptions {
  /** Largest request body in bytes (default 4 MiB); a larger one is answered 413. */
  maxBodyBytes?: number;
  /**
   * Most sessions open at once (default 100). When all are taken, a new client's `initialize`
   * closes the least recently used session that has no request in flight, so whoever can reach
   * the port cannot lock everyone else out by opening sessions and leaving them; that session's
   * next request gets 404 and its client starts a new one. Only when every session has a request
   * in flight is `initialize` answered 503.
   */
  maxSessions?: number;
  /**
   * Most sessions one principal (named by `authorize`) holds at once (default `maxSessions`, no
   * bound of its own). Past it, that principal's own least recently used idle session is closed
   * (503 when all of its sessions are busy), so one token cannot hold every place with calls it
   * keeps in flight.
   */
  maxSessionsPerPrincipal?: number;
  /** Events kept per session for resuming a dropped stream (default 1000). */
  maxEventsPerSession?: number;
  /** Bytes (of the events' JSON) kept per session for resuming a dropped stream (default 4 MiB). */
  maxEventBytesPerSession?: number;
  /** Bytes kept for resuming by all sessions together (default 64 MiB). */
  maxEventBytes?: number;
  /** The `retry` an SSE stream tells clients to wait before reconnecting, in ms (default 1000). */
  retryIntervalMs?: number;
  /**
   * A session with no request for this long is closed, in ms (default 1 800 000, 30 minutes):
   * a client that walked away gives its place back. A session with a request still open (a
   * call, an event stream) is not idle.
   */
  sessionIdleMs?: number;
  /** Where the time comes from, for session expiry (default `Date`); tests pass a fake one. */
  clock?: { now(): number };
  /**
   * Who may use the endpoint, checked on every request: a function of the request answering
   * the principal (or `undefined` to refuse with 401), or `bearerToken(process.env.MCP_TOKEN)`
   * from `toolnexus-ts/inbox`. Default: no check (keep the server on loopback, or put it
   * behind a proxy that authenticates). A session belongs to the principal that opened it.
   */
  authorize?: McpAuthorize;
}

/** The Streamable HTTP endpoint as a request handler: both eras, its sessions, bounds and checks, on a server of its caller's. */
export interface McpEndpoint {
  /** Serves one request (never rejects: a failure is a JSON-RPC 500). */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** How many sessions are open. */
  sessionCount(): number;
  /** The bytes the sessions' event stores hold together. */
  eventBytes(): number;
  /** Closes every session, the 2026-07-28 handler's open streams, and stops the idle sweep. */
  close(): Promise<void>;
}

interface Session {
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  events: BoundedEventStore;
  /** The principal that opened the session, when `authorize` is set: nobody else may use it. */
  principal?: Principal;
  /** When the last request began or ended, by `clock`. */
  lastSeen: number;
  /** Requests of this session still open: while any is, the session is not idle. */
  open: number;
  /**
   * JSON-RPC requests of the client not yet answered: while any is, the session is never closed
   * to make room. Counted apart from `open` because a call outlives its HTTP request when its
   * stream closes early (SSE polling), and a standing GET stream is no call.
   */
  inFlight: Set<string | number>;
}

/**
 * The endpoint `serveMcp` serves over HTTP, as a handler a host mounts on its own server (the
 * Nest module): `guardOf` gives the `Host`/`Origin` check for a request (the bound port is the
 * server's), and `path`, when given, is the only path served (404 elsewhere). Each request is
 * served in its own era (docs/mcp.md, "Two eras"): a 2026-07-28 request (its version in its own
 * `_meta`) by the stateless {@link modernHandler}, suspensions as MRTR round trips or tasks;
 * every other one by the 2025-11-25 sessions (the SDK's Streamable HTTP transport, one per
 * session, with our bounded event store), suspensions as elicitations.
 */
export function mcpEndpoint(
  coordinator: ResumeCoordinator,
  options: McpEndpointOptions,
  guardOf: (req: IncomingMessage) => HttpGuard,
  path?: string,
): McpEndpoint {
  const maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY);
  const maxSessions = positive('maxSessions', options.maxSessions, 100);
  const maxPerPrincipal = positive('maxSessionsPerPrincipal', options.maxSessionsPerPrincipal, maxSessions);
  const maxEvents = positive('maxEventsPerSession', options.maxEventsPerSession, 1000);
  const maxEventBytes = positive('maxEventBytesPerSession', options.maxEventBytesPerSession, 4 * 1024 * 1024);
  const budget = new EventBudget(positive('maxEventBytes', options.maxEventBytes, 64 * 1024 * 1024));
  const retryInterval = positive('retryIntervalMs', options.retryIntervalMs, 1000);
  const idleMs = positive('sessionIdleMs', options.sessionIdleMs, 30 * 60_000);
  const clock = options.clock ?? Date;
  const authorize = options.authorize;
  if (authorize !== undefined && typeof authorize !== 'function' && typeof authorize?.byToken !== 'function')
    throw new InvalidArgumentError('authorize must be a function of the request or bearerToken(...)');
  const sessions = new Map<string, Session>();
  const modern = modernHandler(coordinator, options, mrtrSettingsOf(options, clock), maxBodyBytes);

  const drop = (id: string): Session | undefined => {
    const session = sessions.get(id);
    if (!session) return undefined;
    sessions.delete(id);
    session.events.clear();
    return session;
  };
  /** Closes the sessions idle for `idleMs`: one request (or the sweep timer) at a time finds them. */
  const expireIdle = async (): Promise<void> => {
    const now = clock.now();
    const idle = [...sessions].filter(([, session]) => session.open === 0 && now - session.lastSeen >= idleMs);
    await Promise.allSettled(idle.map(([id]) => drop(id)?.server.close() ?? Promise.resolve()));
  };
  /**
   * Makes room for one more session among `candidates`: closes the least recently used one with
   * no call in flight. False when every one is busy.
   */
  const evictIdlest = (candidates: Array<[string, Session]>): boolean => {
    let idlest: [string, Session] | undefined;
    for (const entry of candidates) {
      if (entry[1].inFlight.size > 0) continue;
      if (!idlest || entry[1].lastSeen < idlest[1].lastSeen) idlest = entry;
    }
    if (!idlest) return false;
    void drop(idlest[0])
      ?.server.close()
      .catch(() => undefined);
    return true;
  };
  /** Whether a new session of `principal` fits, after closing idle ones to make room. */
  const admit = (principal: Principal | undefined): boolean => {
    if (principal) {
      const own = [...sessions].filter(([, session]) => session.principal?.id === principal.id);
      if (own.length >= maxPerPrincipal && !evictIdlest(own)) return false;
    }
    if (sessions.size < maxSessions) return true;
    return evictIdlest([...sessions]);
  };
  /** Keeps `session.inFlight` to the client's requests the server has not answered yet. */
  const countCalls = (transport: WebStandardStreamableHTTPServerTransport, session: () => Session | undefined): void => {
    const received = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const calls = session()?.inFlight;
      if (calls && 'method' in message) {
        if ('id' in message && message.id !== undefined) calls.add(message.id);
        // A cancelled call may never be answered (the SDK drops its reply).
        else if (message.method === 'notifications/cancelled') {
          const cancelled = (message.params as { requestId?: string | number } | undefined)?.requestId;
          if (cancelled !== undefined) calls.delete(cancelled);
        }
      }
      received?.(message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = (message, sendOptions) => {
      if (!('method' in message) && 'id' in message && message.id !== undefined) session()?.inFlight.delete(message.id);
      return send(message, sendOptions);
    };
  };
  /** Marks a session busy until the response ends. */
  const track = (session: Session, res: ServerResponse): void => {
    session.open++;
    session.lastSeen = clock.now();
    res.once('close', () => {
      session.open--;
      session.lastSeen = clock.now();
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refused = guardOf(req).hostProblem(req);
    if (refused) return rpcError(res, 403, -32000, refused);
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (path !== undefined && url.pathname !== path) return reply(res, 404, 'not found');
    let principal: Principal | undefined;
    if (authorize !== undefined) {
      principal = await principalOf(authorize, req);
      if (!principal) {
        res.setHeader('www-authenticate', 'Bearer');
        return rpcError(res, 401, -32000, 'unauthorized');
      }
    }
    await expireIdle();
    const sessionId = header(req, 'mcp-session-id');
    const sessionFor = (id: string): Session | 'forbidden' | undefined => {
      const session = sessions.get(id);
      if (session && authorize !== undefined && session.principal?.id !== principal?.id) return 'forbidden';
      return session;
    };
    if (req.method === 'POST') {
      const body = await readJson(req, maxBodyBytes);
      if ('status' in body) return rpcError(res, body.status, body.status === 413 ? -32000 : -32700, body.message);
      if (sessionId === undefined) {
        // Which era, as the SDK's own handler would classify it: 2026-07-28 carries its version per request.
        const web = webRequestOf(req, res, body.value);
        if (!(await isLegacyRequest(web, body.value, { maxRequestBodySize: maxBodyBytes }))) {
          const mismatch =
            taskNameMismatch(body.value, header(req, 'mcp-name')) ??
            paramHeaderMismatch(body.value, req.headers, (tool) => coordinator.toolkit.get(tool)?.inputSchema);
          if (mismatch) return rpcError(res, 400, HEADER_MISMATCH, mismatch.message, mismatch.id);
          const response = await modern.handler.fetch(web, {
            parsedBody: body.value,
            ...(principal ? { authInfo: authInfoOf(principal) } : {}),
          });
          return sendWebResponse(response, res);
        }
      }
      if (sessionId !== undefined) {
        const session = sessionFor(sessionId);
        if (session === 'forbidden') return rpcError(res, 403, -32000, 'the session belongs to another principal');
        if (!session) return rpcError(res, 404, -32001, 'session not found');
        track(session, res);
        return serveSession(session.transport, req, res, body.value);
      }
      if (!isInitializeRequest(body.value)) return rpcError(res, 400, -32000, 'no mcp-session-id, and not an initialize request');
      if (!admit(principal)) return rpcError(res, 503, -32000, 'too many sessions, all with calls in flight');
      const server = createMcpServer(coordinator, options, principal);
      const events = new BoundedEventStore({ maxEvents, maxBytes: maxEventBytes, budget });
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: events,
        retryInterval,
        onsessioninitialized: (id) => {
          const session: Session = { server, transport, events, lastSeen: clock.now(), open: 0, inFlight: new Set() };
          if (principal) session.principal = principal;
          sessions.set(id, session);
          track(session, res);
        },
        onsessionclosed: (id) => {
          drop(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) drop(transport.sessionId);
        else events.clear();
      };
      await server.connect(transport);
      countCalls(transport, () => (transport.sessionId === undefined ? undefined : sessions.get(transport.sessionId)));
      // Between admit() and onsessioninitialized only microtasks run (the body is parsed), so no
      // other initialize can take the place meanwhile.
      return serveSession(transport, req, res, body.value);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const session = sessionId === undefined ? undefined : sessionFor(sessionId);
      if (session === 'forbidden') return rpcError(res, 403, -32000, 'the session belongs to another principal');
      if (!session) return rpcError(res, sessionId === undefined ? 400 : 404, -32001, 'session not found');
      track(session, res);
      return serveSession(session.transport, req, res);
    }
    res.setHeader('allow', 'GET, POST, DELETE');
    return reply(res, 405, 'method not allowed');
  };

  // Sessions expire even when no request comes to find them.
  const sweep = setInterval(() => void expireIdle(), Math.min(idleMs, 60_000));
  sweep.unref();
  return {
    handle: (req, res) =>
      handle(req, res).catch(() => {
        if (!res.headersSent) rpcError(res, 500, -32603, 'internal error');
        else res.end();
      }),
    sessionCount: () => sessions.size,
    eventBytes: () => budget.used,
    async close() {
      clearInterval(sweep);
      await modern.close();
      const open = [...sessions.keys()].map((id) => drop(id) as Session);
      await Promise.allSettled(open.map((session) => session.server.close()));
    },
  };
}

/**
 * One request of a 2025-11-25 session, through the SDK's web-standard transport: the body
 * serveMcp already read (and bounded) is handed over parsed; the response, a JSON body or an
 * SSE stream, is written to `res` as it comes.
 */
async function serveSession(
  transport: WebStandardStreamableHTTPServerTransport,
  req: IncomingMessage,
  res: ServerResponse,
  body?: unknown,
): Promise<void> {
  const response = await transport.handleRequest(webRequestOf(req, res, body), body === undefined ? {} : { parsedBody: body });
  return sendWebResponse(response, res);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readJson(req: IncomingMessage, limit: number): Promise<{ value: unknown } | { status: number; message: string }> {
  // Mounted in a framework (the Nest module), a body parser may have read the body already and handed it over.
  if (req.readableEnded) return parsedJson((req as IncomingMessage & { body?: unknown }).body, limit);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return { status: 413, message: `request body over ${limit} bytes` };
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return { status: 413, message: `request body over ${limit} bytes` };
    chunks.push(chunk as Buffer);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown };
  } catch {
    return { status: 400, message: 'the request body is not JSON' };
  }
}

/** A body a framework's parser read (JSON as a value, or text or bytes it kept as they were), as {@link readJson} would give it. */
function parsedJson(body: unknown, limit: number): { value: unknown } | { status: number; message: string } {
  if (body === undefined) return { status: 400, message: 'the request body was read before the MCP endpoint saw it and not handed over' };
  const text = typeof body === 'string' ? body : Buffer.isBuffer(body) ? body.toString('utf8') : undefined;
  if (Buffer.byteLength(text ?? JSON.stringify(body) ?? '') > limit) return { status: 413, message: `request body over ${limit} bytes` };
  if (text === undefined) return { value: body };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { status: 400, message: 'the request body is not JSON' };
  }
}

function rpcError(res: ServerResponse, status: number, code: number, message: string, id: string | number | null = null): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id }));
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}
