import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InvalidArgumentError } from '../errors';
import type { ResumeCoordinator } from '../suspension/coordinator';
import { BoundedEventStore } from './event-store';
import { coordinatorOf, createMcpServer } from './server';
import type { McpServerOptions, McpToolHost } from './types';

/** {@link serveMcp} over stdin/stdout: what Claude Desktop and VS Code start as a child process. */
export interface McpStdioOptions extends McpServerOptions {
  transport: 'stdio';
  /** Streams to use instead of the process's own (tests). */
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/** {@link serveMcp} over Streamable HTTP, one MCP session per client. */
export interface McpHttpOptions extends McpServerOptions {
  transport: 'http';
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind; default `127.0.0.1`. */
  host?: string;
  /** The endpoint's path; default `/mcp`. */
  path?: string;
  /** Largest request body in bytes (default 4 MiB); a larger one is answered 413. */
  maxBodyBytes?: number;
  /** Most sessions open at once (default 100); past it `initialize` is answered 503. */
  maxSessions?: number;
  /** Events kept per session for resuming a dropped stream (default 1000). */
  maxEventsPerSession?: number;
  /** The `retry` an SSE stream tells clients to wait before reconnecting, in ms (default 1000). */
  retryIntervalMs?: number;
  /**
   * `Host` header values (and `Origin` hosts) accepted: DNS-rebinding protection. Default: when
   * bound to a loopback address, `localhost`, `127.0.0.1` and `[::1]`, bare or with the bound port;
   * otherwise any.
   */
  allowedHosts?: string[];
}

/** A running MCP server. */
export interface McpServerHandle {
  /** The coordinator calls go through (and whose store keeps unanswered suspensions). */
  readonly coordinator: ResumeCoordinator;
  /** Stops serving: closes every session (and, over HTTP, the listening socket). */
  close(): Promise<void>;
}

/** A running Streamable HTTP MCP server. */
export interface McpHttpServerHandle extends McpServerHandle {
  /** The endpoint clients connect to, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  /** How many sessions are open. */
  sessionCount(): number;
}

const DEFAULT_MAX_BODY = 4 * 1024 * 1024;

/**
 * Serves a Toolkit (or a ResumeCoordinator with its store) to MCP clients: `tools/list` from
 * the tools' schemas, `tools/call` through the coordinator, suspensions asked through the
 * client's elicitation (docs/mcp.md).
 *
 * @example
 * ```ts
 * await serveMcp(toolkit, { transport: 'stdio' })                  // for Claude Desktop, VS Code
 * const http = await serveMcp(toolkit, { transport: 'http', port: 3000 })
 * ```
 */
export function serveMcp(host: McpToolHost, options: McpStdioOptions): Promise<McpServerHandle>;
export function serveMcp(host: McpToolHost, options: McpHttpOptions): Promise<McpHttpServerHandle>;
export async function serveMcp(host: McpToolHost, options: McpStdioOptions | McpHttpOptions): Promise<McpServerHandle> {
  const coordinator = coordinatorOf(host);
  if (options?.transport === 'stdio') {
    const server = createMcpServer(coordinator, options);
    const transport = new StdioServerTransport(
      options.stdin as NodeJS.ReadStream | undefined,
      options.stdout as NodeJS.WriteStream | undefined,
    );
    await server.connect(transport);
    return { coordinator, close: () => server.close() };
  }
  if (options?.transport === 'http') return serveHttp(coordinator, options);
  throw new InvalidArgumentError(`serveMcp needs { transport: 'stdio' } or { transport: 'http' }`);
}

interface Session {
  server: Server;
  transport: StreamableHTTPServerTransport;
}

async function serveHttp(coordinator: ResumeCoordinator, options: McpHttpOptions): Promise<McpHttpServerHandle> {
  const path = options.path ?? '/mcp';
  const maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY);
  const maxSessions = positive('maxSessions', options.maxSessions, 100);
  const maxEvents = positive('maxEventsPerSession', options.maxEventsPerSession, 1000);
  const retryInterval = positive('retryIntervalMs', options.retryIntervalMs, 1000);
  const sessions = new Map<string, Session>();
  let allowedHosts: Set<string> | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return reply(res, 404, 'not found');
    if (allowedHosts && !originAllowed(req, allowedHosts)) return rpcError(res, 403, -32000, 'host or origin not allowed');
    const sessionId = header(req, 'mcp-session-id');
    if (req.method === 'POST') {
      const body = await readJson(req, maxBodyBytes);
      if ('status' in body) return rpcError(res, body.status, body.status === 413 ? -32000 : -32700, body.message);
      if (sessionId !== undefined) {
        const session = sessions.get(sessionId);
        if (!session) return rpcError(res, 404, -32001, 'session not found');
        return session.transport.handleRequest(req, res, body.value);
      }
      if (!isInitializeRequest(body.value)) return rpcError(res, 400, -32000, 'no mcp-session-id, and not an initialize request');
      if (sessions.size >= maxSessions) return rpcError(res, 503, -32000, 'too many sessions');
      const server = createMcpServer(coordinator, options);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new BoundedEventStore(maxEvents),
        retryInterval,
        onsessioninitialized: (id) => {
          sessions.set(id, { server, transport });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      return transport.handleRequest(req, res, body.value);
    }
    if (req.method === 'GET' || req.method === 'DELETE') {
      const session = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (!session) return rpcError(res, sessionId === undefined ? 400 : 404, -32001, 'session not found');
      return session.transport.handleRequest(req, res);
    }
    res.setHeader('allow', 'GET, POST, DELETE');
    return reply(res, 405, 'method not allowed');
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) rpcError(res, 500, -32603, 'internal error');
      else res.end();
    });
  });
  const bindHost = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, bindHost, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const port = (http.address() as AddressInfo).port;
  if (options.allowedHosts) allowedHosts = new Set(options.allowedHosts.map((name) => name.toLowerCase()));
  else if (isLoopback(bindHost)) allowedHosts = new Set(['localhost', '127.0.0.1', '[::1]'].flatMap((name) => [name, `${name}:${port}`]));
  const shownHost = bindHost.includes(':') ? `[${bindHost}]` : bindHost;
  return {
    coordinator,
    url: `http://${shownHost}:${port}${path}`,
    sessionCount: () => sessions.size,
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((session) => session.server.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The Host header, and the Origin's host when a browser sent one, are both on the list. */
function originAllowed(req: IncomingMessage, allowed: Set<string>): boolean {
  if (!allowed.has((req.headers.host ?? '').toLowerCase())) return false;
  const origin = header(req, 'origin');
  if (origin === undefined) return true;
  try {
    return allowed.has(new URL(origin).host.toLowerCase());
  } catch {
    return false;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readJson(req: IncomingMessage, limit: number): Promise<{ value: unknown } | { status: number; message: string }> {
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

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(text);
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}
