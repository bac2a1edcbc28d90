import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type CreateMessageRequest,
  type CreateMessageResult,
  type LoggingMessageNotification,
  type VersionNegotiationOptions,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ToolContext } from '../../toolkit/context';
import type { ElicitationReply } from '../elicitation';
import type { McpServerSpec } from './config';
import { McpConnectionError } from './errors';
import { isConnectionLost, said } from './failures';
import type { Logins } from './oauth/logins';
import type { McpProtocolVersion, SourceSettings } from './options';
import { ChangeStream } from './listen';
import type { SecretRedactor } from './redactor';

const MAX_STDERR_CHARS = 2000;
/** How often a session lost to a dropped socket is opened again, and an idempotent call asked again. */
export const RECONNECT_ATTEMPTS = 3;
/** The longest a stdio server's silence to `server/discover` is waited for before it is taken for a 2025 one. */
const STDIO_PROBE_MS = 5_000;
/** The longest `connect()` waits for a 2026-07-28 server to acknowledge its change stream (it goes on opening after). */
const LISTEN_ACK_MS = 5_000;

/** One server's session, and what its calls and notifications need of it. */
export interface Connection {
  readonly name: string;
  readonly spec: McpServerSpec;
  client: Client;
  stderr: string;
  /** The contexts of this server's calls now running: its log lines go to them. */
  readonly active: Set<ToolContext>;
  /** The transport in use (HTTP or SSE), for finishing a login a call needed. */
  transport?: StreamableHTTPClientTransport | SSEClientTransport;
  /** The HTTP transport that answered the first time; a reconnect uses it again. */
  http?: 'http' | 'sse';
  /** The server's configured secrets, redacted in everything made from what it says. */
  readonly redactor: SecretRedactor;
  /** A 2026-07-28 server's `subscriptions/listen` stream, the only way that revision tells of list changes. */
  changes?: ChangeStream;
}

/** A server's elicitation request, the fields read of it. */
export interface ElicitParams {
  message: string;
  mode?: string;
  url?: string;
  requestedSchema?: unknown;
}

/** What a server asks or tells its client, handed to the parts of the source that answer it. */
export interface ServerRequests {
  toolsChanged(server: string): Promise<void>;
  logged(connection: Connection, params: LoggingMessageNotification['params']): void;
  elicited(server: string, params: ElicitParams): Promise<ElicitationReply>;
  sampled(server: string, params: CreateMessageRequest['params'], signal: AbortSignal): Promise<CreateMessageResult>;
}

/**
 * The source's sessions, one per server: connecting over stdio, Streamable HTTP or SSE (with
 * OAuth through {@link Logins}), reconnecting a lost session, and closing them all.
 */
export class Connections {
  private readonly open = new Map<string, Connection>();
  /** Set by `close()`: nothing is connected, called or refreshed from then on. */
  closed = false;

  constructor(
    private readonly settings: SourceSettings,
    private readonly logins: Logins,
    private readonly requests: ServerRequests,
  ) {}

  /** The server's connection, even after `close()` (a notification still in flight reads it). */
  get(server: string): Connection | undefined {
    return this.open.get(server);
  }

  /** The connection of `server`, or every connection when `server` is undefined. */
  of(server: string | undefined): Connection[] {
    if (server === undefined) return [...this.open.values()];
    return [this.connected(server)];
  }

  /** The connection of `server`; throws when it is not connected (or the source is closed). */
  connected(server: string): Connection {
    const connection = this.closed ? undefined : this.open.get(server);
    if (!connection) throw new McpConnectionError(`MCP server ${server} is not connected`);
    return connection;
  }

  /** How long one request to the server may take. */
  timeoutOf(connection: Connection): number {
    return connection.spec.timeoutMs ?? this.settings.callTimeoutMs;
  }

  /** Connects a new session for `name`; kept (so a login can be finished over its transport) even when connecting fails. */
  async connect(name: string, spec: McpServerSpec, redactor: SecretRedactor): Promise<Connection> {
    const connection: Connection = { name, spec, client: this.newClient(name, spec), stderr: '', active: new Set(), redactor };
    this.open.set(name, connection);
    await this.start(connection);
    await this.listen(connection);
    return connection;
  }

  /**
   * A new client and session for `connection`. fetch may hand out another pooled socket the old
   * server closed, so a lost connection is tried again a few times before giving up.
   */
  async reconnect(connection: Connection): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await this.closeClient(connection);
      connection.client = this.newClient(connection.name, connection.spec);
      try {
        await this.start(connection);
        await this.listen(connection);
        // A new session may list other tools than the lost one did (the server restarted).
        if (connection.changes) void this.requests.toolsChanged(connection.name);
        return;
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        if (attempt >= RECONNECT_ATTEMPTS || !(isConnectionLost(error) || isConnectionLost(cause))) throw error;
      }
    }
  }

  /** Forgets and closes a server's connection (its listing failed, or its names are taken). */
  async drop(server: string): Promise<void> {
    const connection = this.open.get(server);
    this.open.delete(server);
    if (connection) await this.closeClient(connection);
  }

  /** Closes every connection: stdio servers' child processes end, HTTP sessions are closed. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.open.values()];
    this.open.clear();
    await Promise.allSettled(open.map((connection) => this.closeClient(connection)));
  }

  /**
   * Opens a 2026-07-28 server's change stream, awaiting its acknowledgement so that no change
   * after `connect()` goes unseen; a 2025-11-25 session's changes come unsolicited instead.
   */
  private async listen(connection: Connection): Promise<void> {
    const client = connection.client;
    const filter = ChangeStream.filterOf(client);
    if (!filter) return;
    const timeoutMs = connection.spec.timeoutMs ?? this.settings.connectTimeoutMs;
    const changes = new ChangeStream(client, filter, timeoutMs, {
      wanted: () => !this.closed && connection.client === client && this.open.get(connection.name) === connection,
      reopened: () => {
        if (filter.toolsListChanged) void this.requests.toolsChanged(connection.name);
      },
    });
    connection.changes = changes;
    // A server (or a proxy) that buffers the stream never acknowledges it: connecting waits a bounded part of its time.
    await changes.open(Math.min(timeoutMs, LISTEN_ACK_MS));
  }

  /** Stops a connection's change stream, then its client (a stdio server's child process ends). */
  private async closeClient(connection: Connection): Promise<void> {
    const changes = connection.changes;
    connection.changes = undefined;
    await changes?.close();
    await connection.client.close().catch(() => undefined);
  }

  /** Connects `connection.client` over the spec's transport; HTTP falls back to SSE unless the config named one. */
  private async start(connection: Connection): Promise<void> {
    const { spec, name } = connection;
    const timeout = spec.timeoutMs ?? this.settings.connectTimeoutMs;
    if (spec.transport === 'stdio') {
      const transport = new StdioClientTransport({
        command: spec.command,
        args: spec.args,
        env: { ...getDefaultEnvironment(), ...spec.env },
        ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => {
        connection.stderr = (connection.stderr + chunk.toString('utf8')).slice(-MAX_STDERR_CHARS);
      });
      try {
        await connection.client.connect(transport, { timeout });
      } catch (error) {
        await transport.close().catch(() => undefined);
        const stderr = connection.redactor.text(connection.stderr.trim());
        throw new McpConnectionError(
          `server ${name}: ${connection.redactor.text(said(error))}${stderr ? ` (its stderr: ${stderr.slice(-500)})` : ''}`,
          {
            cause: connection.redactor.error(error),
          },
        );
      }
      return;
    }
    const init = { headers: spec.headers };
    // The issuer of authorization-server metadata is checked by the bounded OAuth fetch (RFC 8414 3.3, with
    // the MCP 2025-03-26 root-metadata allowance), so the SDK's stricter check of the same is not repeated.
    const auth = { ...this.logins.authOf(name, spec, connection.redactor), skipIssuerMetadataValidation: true };
    if ((connection.http ?? spec.transport) === 'http') {
      const transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: init, ...auth });
      connection.transport = transport;
      try {
        await connection.client.connect(transport, { timeout });
        connection.http = 'http';
        return;
      } catch (error) {
        await transport.close().catch(() => undefined);
        const refused = this.logins.failure(name, error, connection.redactor);
        if (refused) throw refused;
        if (error instanceof UnauthorizedError) throw this.logins.required(name, error);
        // No HTTP answer at all says nothing about which transport the server speaks.
        if (spec.explicit || connection.http === 'http' || isConnectionLost(error))
          throw new McpConnectionError(`server ${name}: ${connection.redactor.text(said(error))}`, {
            cause: connection.redactor.error(error),
          });
        connection.client = this.newClient(name, spec);
      }
    }
    const sse = new SSEClientTransport(new URL(spec.url), {
      requestInit: init,
      eventSourceInit: { fetch: withHeaders(spec.headers) },
      ...auth,
    });
    connection.transport = sse;
    try {
      await connection.client.connect(sse, { timeout });
      connection.http = 'sse';
    } catch (error) {
      await sse.close().catch(() => undefined);
      const refused = this.logins.failure(name, error, connection.redactor);
      if (refused) throw refused;
      if (error instanceof UnauthorizedError) throw this.logins.required(name, error);
      throw new McpConnectionError(`server ${name}: neither Streamable HTTP nor SSE answered: ${connection.redactor.text(said(error))}`, {
        cause: connection.redactor.error(error),
      });
    }
  }

  private newClient(server: string, spec: McpServerSpec): Client {
    const { waitFor, sampling } = this.settings;
    const timeoutMs = spec.timeoutMs ?? this.settings.connectTimeoutMs;
    const client = new Client(
      { name: this.settings.clientName ?? 'toolnexus', version: '1.0.0' },
      {
        capabilities: {
          ...(waitFor ? { elicitation: { form: {}, url: {} } } : {}),
          ...(sampling ? { sampling: {} } : {}),
        },
        versionNegotiation: negotiation(this.settings.protocolVersion, spec, timeoutMs),
      },
    );
    if (sampling) {
      client.setRequestHandler('sampling/createMessage', (request, ctx) =>
        this.requests.sampled(server, request.params, ctx.mcpReq.signal),
      );
    }
    client.setNotificationHandler('notifications/tools/list_changed', () => this.requests.toolsChanged(server));
    client.setNotificationHandler('notifications/message', (notification) => {
      const connection = this.open.get(server);
      if (connection) this.requests.logged(connection, notification.params);
    });
    if (waitFor) {
      client.setRequestHandler('elicitation/create', async (request) => {
        const reply = await this.requests.elicited(server, request.params);
        return reply.content === undefined
          ? { action: reply.action }
          : { action: reply.action, content: reply.content as Record<string, string> };
      });
    }
    return client;
  }
}

/**
 * How the client picks its revision. `auto` speaks both eras from one client: `server/discover`
 * first, the 2025-11-25 `initialize` when the server does not speak 2026-07-28. A stdio server
 * that ignores the unknown probe is a 2025 one (the SDK reads its silence so), so its probe
 * waits a bounded part of the connect time. A pinned revision never falls back.
 */
function negotiation(version: McpProtocolVersion, spec: McpServerSpec, timeoutMs: number): VersionNegotiationOptions {
  if (version === '2025-11-25') return { mode: 'legacy' };
  const probe = spec.transport === 'stdio' ? { probe: { timeoutMs: Math.min(timeoutMs, STDIO_PROBE_MS) } } : {};
  return { mode: version === 'auto' ? 'auto' : { pin: version }, ...probe };
}

/** A fetch that adds the config's headers, for the SSE transport's event stream. */
function withHeaders(headers: Record<string, string>): typeof fetch {
  return (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [key, value] of Object.entries(headers)) merged.set(key, value);
    return fetch(input, { ...init, headers: merged });
  };
}
