import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolRegistrationError } from '../../errors';
import { messageOf } from '../../errors/message';
import { failure, newPendingId, pending, sanitizeName } from '../../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../../results/wire';
import type { JsonSchema } from '../../schema/json-schema';
import type { WaitFor } from '../../suspension/answers';
import type { ToolContext, ToolLogLevel } from '../../toolkit/context';
import { defineTool, type FunctionTool } from '../../toolkit/define-tool';
import type { Toolkit } from '../../toolkit/toolkit';
import { readMcpConfig, toolAllowed, type McpEnvironment, type McpServerEntry, type McpServerSpec } from './config';
import { answerSampling } from './sampling';
import type { McpSamplingOptions } from '../types';
import { replyOf, type ElicitationReply } from '../elicitation';
import { McpConfigError, McpConnectionError, McpLoginError, McpLoginRequiredError, McpOAuthResponseTooLargeError } from '../errors';
import { loginOutcome, LoginOAuthProvider, oauthProvider, type LoginOutcome, type StoredOAuthProvider } from './oauth/providers';
import { BoundedOAuthFetch } from './oauth/fetch';
import { DEFAULT_OAUTH_RESPONSE_BYTES, type McpOAuthOptions } from './oauth/store';
import { SecretRedactor } from './redactor';
import { fromMcpResult } from '../results';
import { endMcpCall, startMcpClientCall, type McpCallSite } from '../../telemetry/mcp';
import type { TelemetryOption } from '../../telemetry/options';
import { errorTypeOf, Telemetry } from '../../telemetry/telemetry';

/** Options of an {@link McpToolSource}. */
export interface McpToolSourceOptions {
  /** An `mcp.json` document (Claude Desktop, Cursor or VS Code shape), or servers already parsed. */
  config: unknown;
  /** Where `${VAR}` in the config is looked up. Default `process.env`. */
  env?: McpEnvironment;
  /**
   * Answers a server's elicitation while its call waits: the elicitation becomes a `pending`
   * request (kind `input`, or `authorization` for a URL) given to this function. Without it the
   * client declares no elicitation capability.
   */
  waitFor?: WaitFor;
  /** Told of every elicitation turned into a request, before `waitFor` is asked. */
  onPending?: (request: PendingRequest, server: string) => void;
  /** How long `waitFor` may take before the elicitation is declined, in ms (default 120 000). */
  elicitationTimeoutMs?: number;
  /** How long one call may take without progress, in ms (default 60 000; progress resets it). */
  callTimeoutMs?: number;
  /** How long connecting and listing tools may take per server, all pages together, in ms (default 30 000). */
  connectTimeoutMs?: number;
  /** Most `tools/list` pages read from one server (default 100); a server still giving cursors past it fails. */
  maxListPages?: number;
  /** Longest text output kept from a call (default 1 000 000 characters); the rest is cut, saying so. */
  maxOutputChars?: number;
  /** Most tools taken from one server (default 500). */
  maxToolsPerServer?: number;
  /** The client name servers see. Default `toolnexus`. */
  clientName?: string;
  /**
   * OpenTelemetry: a `tools/call {tool}` CLIENT span per call, its trace context sent in the
   * request's `_meta`; by the global tracer provider unless this picks another or turns it off.
   */
  telemetry?: TelemetryOption;
  /**
   * Answers servers' sampling requests (`sampling/createMessage`) through a model of the
   * host's, when its policy says yes (docs/mcp.md, "Sampling"). Without it the client declares
   * no sampling capability and servers do not ask.
   */
  sampling?: McpSamplingOptions;
  /**
   * OAuth for remote servers that ask for it (docs/mcp.md, "OAuth"): a person's login
   * (the default grant) is reported by `connect()` (`needsLogin`) or suspends the call (a
   * request of kind `authorization`); `client_credentials` and `cross_app` need nobody. Tokens
   * refresh, or are granted again, silently. Without it a 401 fails the server.
   */
  oauth?: McpOAuthOptions;
}

/** A resource of a connected server, as it listed it. */
export interface McpServerResource {
  server: string;
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A prompt of a connected server, as it listed it. */
export interface McpServerPrompt {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; description?: string; required?: boolean }>;
}

/** How connecting went, per server: one server failing leaves the others working. */
export interface McpConnectReport {
  connected: Array<{ server: string; tools: string[] }>;
  failed: Array<{ server: string; error: Error }>;
  /** Servers that need a person to log in at `url` first; `finishLogin(server, code)` connects them. */
  needsLogin: Array<{ server: string; url: string }>;
  /** Servers the config turns off (`"enabled": false` or `"disabled": true`): never started. */
  disabled: string[];
}

const DEFAULTS = {
  elicitationTimeoutMs: 120_000,
  callTimeoutMs: 60_000,
  connectTimeoutMs: 30_000,
  maxOutputChars: 1_000_000,
  maxToolsPerServer: 500,
  maxListPages: 100,
};
const LOG_LEVELS = new Set<ToolLogLevel>(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
const MAX_STDERR_CHARS = 2000;
/** A server's log lines passed to one call's `ctx.log`; one more says the rest were dropped. */
const MAX_LOG_LINES_PER_CALL = 1000;
const MAX_ERROR_CHARS = 2000;
const MAX_NAME = 64;
const RECONNECT_ATTEMPTS = 3;

interface Connection {
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
}

/**
 * MCP servers as tools of a Toolkit. Connects to every server of an `mcp.json`, lists their
 * tools and registers each as `server_tool` with the server's input schema passed through.
 * A call goes to the server; its progress and log notifications reach the caller's context;
 * an elicitation the server asks during the call becomes a `pending` request answered by
 * `waitFor` (docs/mcp.md).
 *
 * @example
 * ```ts
 * const source = await McpToolSource.fromFile('mcp.json')
 * const report = await source.connect()          // { connected, failed }
 * source.register(toolkit)
 * // ...
 * await source.close()                            // ends stdio child processes
 * ```
 */
export class McpToolSource {
  private readonly entries: McpServerEntry[];
  private readonly disabled: string[];
  private readonly options: McpToolSourceOptions & typeof DEFAULTS;
  private readonly telemetry: Telemetry;
  private readonly connections = new Map<string, Connection>();
  private readonly tools: FunctionTool[] = [];
  private closed = false;
  private connecting = false;
  /** The toolkits `register` filled: a server's changed tool list is applied to them. */
  private readonly registeredIn = new Set<Toolkit>();
  /** Which server each defined tool came from, by its name. */
  private readonly serverOf = new Map<string, string>();
  /** Servers whose tools `connect` took (or refused): a change they announce is applied from then on. */
  private readonly settled = new Set<string>();
  /** Servers that announced a change while `connect` was still listing: applied once it settles them. */
  private readonly changedEarly = new Set<string>();
  /** The refresh under way per server, and whether another change came in while it ran. */
  private readonly refreshing = new Map<string, { again: boolean; done: Promise<void> }>();
  /** How many of a server's log lines each call has been told (at most {@link MAX_LOG_LINES_PER_CALL}). */
  private readonly logLines = new WeakMap<ToolContext, number>();
  /** Per remote server using OAuth: the SDK's provider over the host's store. */
  private readonly providers = new Map<string, StoredOAuthProvider>();
  /** Per remote server using OAuth: the fetch that bounds what its OAuth servers send. */
  private readonly oauthFetches = new Map<string, BoundedOAuthFetch>();
  /** Servers `connect` found needing a login: what `finishLogin` connects them with. */
  private readonly logins = new Map<
    string,
    { spec: McpServerSpec; redactor: SecretRedactor; transport: StreamableHTTPClientTransport | SSEClientTransport }
  >();

  constructor(options: McpToolSourceOptions) {
    const reading = readMcpConfig(options.config, options.env);
    this.entries = reading.entries;
    this.disabled = reading.disabled;
    this.options = { ...DEFAULTS, ...definedOnly(options), config: options.config };
    this.telemetry = new Telemetry(options.telemetry, 'McpToolSource');
    for (const key of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
      const value = this.options[key];
      if (!Number.isFinite(value) || value < 1) throw new McpConfigError(`${key} must be a positive number, got ${String(value)}`);
    }
  }

  /** A source for the `mcp.json` at `path`. */
  static async fromFile(path: string, options: Omit<McpToolSourceOptions, 'config'> = {}): Promise<McpToolSource> {
    let document: unknown;
    try {
      document = JSON.parse(await readFile(path, 'utf8'));
    } catch (error) {
      throw new McpConfigError(`cannot read the MCP config ${path}: ${messageOf(error)}`, { cause: error });
    }
    return new McpToolSource({ ...options, config: document });
  }

  /** Connects to every server at once and lists its tools; a server that fails is reported, not thrown. */
  async connect(): Promise<McpConnectReport> {
    if (this.connecting) throw new McpConnectionError('connect() was already called on this McpToolSource');
    this.connecting = true;
    const report: McpConnectReport = { connected: [], failed: [], needsLogin: [], disabled: this.disabled.slice() };
    const outcomes = await Promise.all(
      this.entries.map(async (entry): Promise<{ server: string; error: Error } | { server: string; tools: FunctionTool[] }> => {
        if ('error' in entry) return { server: entry.name, error: entry.error };
        const redactor = new SecretRedactor(entry.spec.secrets);
        try {
          return { server: entry.name, tools: await this.open(entry.name, entry.spec, redactor) };
        } catch (error) {
          const login = this.connections.get(entry.name)?.transport;
          await this.drop(entry.name);
          if (error instanceof McpLoginRequiredError && login) {
            this.logins.set(entry.name, { spec: entry.spec, redactor, transport: login });
            return { server: entry.name, error };
          }
          // OAuth's own errors keep their class: their messages are made here, redacted already.
          if (error instanceof McpLoginError || error instanceof McpOAuthResponseTooLargeError) return { server: entry.name, error };
          const redacted = redactor.error(error);
          return { server: entry.name, error: error instanceof McpConnectionError ? redacted : new McpConnectionError(redacted.message) };
        }
      }),
    );
    // A server's tools are taken all together or not at all; config order decides who keeps a name.
    const taken = new Set<string>();
    for (const outcome of outcomes) {
      if ('error' in outcome && outcome.error instanceof McpLoginRequiredError) {
        report.needsLogin.push({ server: outcome.server, url: outcome.error.url });
        continue;
      }
      if ('error' in outcome) {
        report.failed.push({ server: outcome.server, error: outcome.error });
        continue;
      }
      const clash = outcome.tools.find((tool) => taken.has(tool.name));
      if (clash) {
        await this.drop(outcome.server);
        const error = new McpConnectionError(`server ${outcome.server}: its tool name ${clash.name} is taken by another server's tool`);
        report.failed.push({ server: outcome.server, error });
        continue;
      }
      for (const tool of outcome.tools) {
        taken.add(tool.name);
        this.serverOf.set(tool.name, outcome.server);
      }
      this.tools.push(...outcome.tools);
      report.connected.push({ server: outcome.server, tools: outcome.tools.map((tool) => tool.name) });
    }
    for (const outcome of outcomes) this.settled.add(outcome.server);
    for (const server of this.changedEarly) void this.refresh(server);
    this.changedEarly.clear();
    return report;
  }

  /** The connected servers' tools, ready for `toolkit.register(...)`. */
  toolDefinitions(): FunctionTool[] {
    return this.tools.slice();
  }

  /**
   * Registers every connected server's tools on `toolkit`; returns their names. All or nothing:
   * when a name is already registered there, nothing is and {@link ToolRegistrationError} names it.
   */
  register(toolkit: Toolkit): string[] {
    const taken = this.tools.filter((tool) => toolkit.has(tool.name)).map((tool) => tool.name);
    if (taken.length > 0)
      throw new ToolRegistrationError(`the toolkit already has tools named ${taken.slice(0, 10).join(', ')}; no MCP tool was registered`);
    toolkit.register(...this.tools);
    this.registeredIn.add(toolkit);
    return this.tools.map((tool) => tool.name);
  }

  /**
   * Finishes the login `connect()` reported (`needsLogin`) or a call suspended for: exchanges
   * the code for tokens (PKCE), then connects the server, lists its tools and registers them
   * on every toolkit `register` filled. `codeOrRedirect` is the whole URL the browser was sent
   * back to: its `state` must be the login's, or {@link McpLoginStateError} refuses it and
   * nothing changes (the right redirect still finishes the login). One with
   * `error=access_denied` is a refused consent, thrown as {@link McpLoginError}. A bare code
   * (no URL) has no state to check: it is taken here, where the host hands it over itself,
   * and never from a request's answer. Resolves to the server's tool names.
   */
  async finishLogin(server: string, codeOrRedirect: string): Promise<string[]> {
    return this.finishLoginWith(server, loginOutcome(codeOrRedirect));
  }

  private async finishLoginWith(server: string, outcome: LoginOutcome): Promise<string[]> {
    const provider = this.providers.get(server);
    const waiting = this.logins.get(server);
    const connection = this.connections.get(server);
    const transport = waiting?.transport ?? connection?.transport;
    if (!(provider instanceof LoginOAuthProvider) || !transport) throw new McpLoginError(`server ${server}: no login is under way for it`);
    if (!('code' in outcome && outcome.bare)) await provider.checkState(outcome.state);
    if ('error' in outcome) {
      await provider.invalidateCredentials('verifier');
      const refused =
        outcome.error === 'access_denied' ? 'the consent was refused' : `the authorization server said ${outcome.error.slice(0, 100)}`;
      throw new McpLoginError(
        `server ${server}: login not completed: ${refused}${outcome.description ? ` (${outcome.description.slice(0, 300)})` : ''}`,
      );
    }
    try {
      await transport.finishAuth(outcome.code);
    } catch (error) {
      const redactor = waiting?.redactor ?? connection?.redactor;
      throw new McpLoginError(
        `server ${server}: the code was not taken: ${redactor ? redactor.text(said(error)) : 'see the authorization server'}`,
      );
    }
    // A login's state is good for one redirect.
    await provider.forgetState();
    if (!waiting) return this.tools.filter((tool) => this.serverOf.get(tool.name) === server).map((tool) => tool.name);
    this.logins.delete(server);
    let tools: FunctionTool[];
    try {
      tools = await this.open(server, waiting.spec, waiting.redactor);
    } catch (error) {
      const again = this.connections.get(server)?.transport;
      await this.drop(server);
      if (error instanceof McpLoginRequiredError) {
        this.logins.set(server, { ...waiting, transport: again ?? waiting.transport });
        throw error;
      }
      throw error instanceof McpConnectionError ? waiting.redactor.error(error) : new McpConnectionError(waiting.redactor.text(said(error)));
    }
    const clash = tools.find((tool) => this.serverOf.has(tool.name));
    if (clash) {
      await this.drop(server);
      throw new McpConnectionError(`server ${server}: its tool name ${clash.name} is taken by another server's tool`);
    }
    for (const tool of tools) this.serverOf.set(tool.name, server);
    this.tools.push(...tools);
    for (const toolkit of this.registeredIn) toolkit.register(...tools.filter((tool) => !toolkit.has(tool.name)));
    return tools.map((tool) => tool.name);
  }

  /** The resources of every connected server (or of one), every page within the listing bounds. */
  async resources(server?: string): Promise<McpServerResource[]> {
    const found: McpServerResource[] = [];
    for (const connection of this.connectionsOf(server)) {
      if (!connection.client.getServerCapabilities()?.resources) continue;
      await this.pages(connection, 'resources/list', async (cursor) => {
        const page = await connection.client.listResources(cursor === undefined ? {} : { cursor }, { timeout: this.timeoutOf(connection) });
        for (const item of page.resources)
          found.push(
            connection.redactor.deep({
              server: connection.name,
              ...pick(item, ['uri', 'name', 'title', 'description', 'mimeType']),
            }) as McpServerResource,
          );
        return page.nextCursor;
      });
    }
    return found;
  }

  /** Reads a resource of `server`: its text and base64 contents, bounded by `maxOutputChars` and redacted. */
  async readResource(server: string, uri: string): Promise<Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>> {
    const connection = this.connectionOf(server);
    const answer = await this.asked(connection, 'resources/read', () =>
      connection.client.readResource({ uri }, { timeout: this.timeoutOf(connection) }),
    );
    const contents = answer.contents.map(
      (item) => pick(item, ['uri', 'mimeType', 'text', 'blob']) as { uri: string; mimeType?: string; text?: string; blob?: string },
    );
    this.bounded(connection, `resource ${uri}`, contents);
    return connection.redactor.deep(contents);
  }

  /** The prompts of every connected server (or of one). */
  async prompts(server?: string): Promise<McpServerPrompt[]> {
    const found: McpServerPrompt[] = [];
    for (const connection of this.connectionsOf(server)) {
      if (!connection.client.getServerCapabilities()?.prompts) continue;
      await this.pages(connection, 'prompts/list', async (cursor) => {
        const page = await connection.client.listPrompts(cursor === undefined ? {} : { cursor }, { timeout: this.timeoutOf(connection) });
        for (const item of page.prompts)
          found.push(
            connection.redactor.deep({
              server: connection.name,
              ...pick(item, ['name', 'title', 'description', 'arguments']),
            }) as McpServerPrompt,
          );
        return page.nextCursor;
      });
    }
    return found;
  }

  /** A prompt of `server` with its arguments: its messages, bounded (`maxOutputChars`, 1000 messages) and redacted. */
  async getPrompt(
    server: string,
    name: string,
    args: Record<string, string> = {},
  ): Promise<{ description?: string; messages: Array<{ role: 'user' | 'assistant'; content: Record<string, unknown> }> }> {
    const connection = this.connectionOf(server);
    const answer = await this.asked(connection, 'prompts/get', () =>
      connection.client.getPrompt({ name, arguments: args }, { timeout: this.timeoutOf(connection) }),
    );
    if (answer.messages.length > MAX_PROMPT_MESSAGES)
      throw new McpConnectionError(
        `server ${server}: prompt ${name} has ${answer.messages.length} messages; at most ${MAX_PROMPT_MESSAGES} are read`,
      );
    const messages = answer.messages.map((message) => ({ role: message.role, content: { ...message.content } }));
    this.bounded(connection, `prompt ${name}`, messages);
    return connection.redactor.deep({ ...(answer.description !== undefined ? { description: answer.description } : {}), messages });
  }

  /**
   * A prompt of `server` as a runner's instructions: the text of its messages, a blank line
   * between them (other content named, not included): `new AgentRunner({ systemPrompt })`.
   */
  async instructions(server: string, name: string, args: Record<string, string> = {}): Promise<string> {
    const { messages } = await this.getPrompt(server, name, args);
    return messages
      .map((message) => {
        const content = message.content as { type?: unknown; text?: unknown; resource?: { text?: unknown } };
        if (content.type === 'text' && typeof content.text === 'string') return content.text;
        if (content.type === 'resource' && typeof content.resource?.text === 'string') return content.resource.text;
        return `[${String(content.type)} content]`;
      })
      .join('\n\n');
  }

  /** Closes every connection: stdio servers' child processes end, HTTP sessions are closed. */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.allSettled(open.map((connection) => connection.client.close()));
  }

  /** Connects, lists every page of tools within the time and page limits, and defines them; nothing is kept on failure. */
  private async open(name: string, spec: McpServerSpec, redactor: SecretRedactor): Promise<FunctionTool[]> {
    const connection: Connection = { name, spec, client: this.newClient(name), stderr: '', active: new Set(), redactor };
    const connectTimeoutMs = spec.timeoutMs ?? this.options.connectTimeoutMs;
    const deadline = performance.now() + connectTimeoutMs;
    this.connections.set(name, connection);
    await this.start(connection);
    return this.listTools(connection, deadline, connectTimeoutMs);
  }

  /** Lists every page of a connected server's tools within the deadline and the page limits, and defines them. */
  private async listTools(connection: Connection, deadline: number, connectTimeoutMs: number): Promise<FunctionTool[]> {
    const { name, spec } = connection;
    const listed: McpTool[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const left = Math.floor(deadline - performance.now());
      if (left < 1) throw new McpConnectionError(`server ${name}: connecting and listing its tools took over ${connectTimeoutMs} ms`);
      let answer: Awaited<ReturnType<Client['listTools']>>;
      try {
        answer = await connection.client.listTools(cursor === undefined ? {} : { cursor }, { timeout: left });
      } catch (error) {
        // A server may take `initialize` without a token and want one (or another scope) for tools/list.
        if (error instanceof UnauthorizedError) throw this.loginRequired(name, error);
        if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number))
          throw new McpConnectionError(`server ${name}: connecting and listing its tools took over ${connectTimeoutMs} ms`);
        throw new McpConnectionError(`server ${name}: tools/list failed (page ${page}): ${said(error)}`);
      }
      listed.push(...answer.tools);
      const next = answer.nextCursor;
      if (next === undefined || listed.length >= this.options.maxToolsPerServer) break;
      if (cursors.has(next)) throw new McpConnectionError(`server ${name}: tools/list gave a cursor it gave before (page ${page})`);
      if (page >= this.options.maxListPages)
        throw new McpConnectionError(
          `server ${name}: tools/list gave ${page} pages and still a next cursor (maxListPages ${this.options.maxListPages})`,
        );
      cursors.add(next);
      cursor = next;
    }
    const tools = listed.filter((tool) => toolAllowed(spec.tools, tool.name)).slice(0, this.options.maxToolsPerServer);
    const seen = new Set<string>();
    for (const tool of tools) {
      if (typeof tool.name !== 'string' || tool.name === '')
        throw new McpConnectionError(`server ${name}: tools/list gave a tool without a name`);
      if (seen.has(tool.name)) throw new McpConnectionError(`server ${name}: tools/list gave the tool ${tool.name.slice(0, 80)} twice`);
      seen.add(tool.name);
    }
    return tools.map((tool) => this.definitionOf(connection, tool));
  }

  /** Forgets and closes a server's connection (its listing failed, or its names are taken). */
  private async drop(server: string): Promise<void> {
    const connection = this.connections.get(server);
    this.connections.delete(server);
    await connection?.client.close().catch(() => undefined);
  }

  /** Connects `connection.client` over the spec's transport; HTTP falls back to SSE unless the config named one. */
  private async start(connection: Connection): Promise<void> {
    const { spec, name } = connection;
    const timeout = spec.timeoutMs ?? this.options.connectTimeoutMs;
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
    const authProvider = this.providerOf(name, spec, connection.redactor);
    const bounded = this.oauthFetches.get(name);
    // Only this attempt's overflow is reported: one the SDK got past before (an optional document) is not.
    if (bounded) bounded.tripped = undefined;
    const auth = authProvider && bounded ? { authProvider, fetch: bounded.fetch } : {};
    if ((connection.http ?? spec.transport) === 'http') {
      const transport = new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: init, ...auth });
      connection.transport = transport;
      try {
        await connection.client.connect(transport, { timeout });
        connection.http = 'http';
        return;
      } catch (error) {
        await transport.close().catch(() => undefined);
        const refused = this.oauthFailure(name, error, connection.redactor);
        if (refused) throw refused;
        if (error instanceof UnauthorizedError) throw this.loginRequired(name, error);
        // No HTTP answer at all says nothing about which transport the server speaks.
        if (spec.explicit || connection.http === 'http' || isConnectionLost(error))
          throw new McpConnectionError(`server ${name}: ${connection.redactor.text(said(error))}`, {
            cause: connection.redactor.error(error),
          });
        connection.client = this.newClient(name);
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
      const refused = this.oauthFailure(name, error, connection.redactor);
      if (refused) throw refused;
      if (error instanceof UnauthorizedError) throw this.loginRequired(name, error);
      throw new McpConnectionError(`server ${name}: neither Streamable HTTP nor SSE answered: ${connection.redactor.text(said(error))}`, {
        cause: connection.redactor.error(error),
      });
    }
  }

  /**
   * A call the server refused for want of a login (its tokens expired and would not refresh, or
   * it wants another scope): suspended as a request of kind `authorization` with the URL.
   */
  private loginPending(server: string, tool: string, login: Error): ToolResult {
    if (!(login instanceof McpLoginRequiredError)) return failure(`MCP server ${server}, tool ${tool}: ${login.message}`);
    return pending({
      kind: 'authorization',
      prompt: `Log in to the MCP server ${server} to continue (tool ${tool})`,
      url: login.url,
      data: { mcpServer: server },
    });
  }

  /**
   * On the replay after a login request this source made: a refusal ends the call; an answer
   * carrying `code` (or the `redirect` URL) finishes the login first. An answer without one
   * means the host called `finishLogin` itself. `undefined` when the call should go ahead.
   */
  private async loginAnswered(server: string, ctx: ToolContext | undefined): Promise<ToolResult | undefined> {
    const request = ctx?.replay?.request;
    const answer = ctx?.answer;
    if (!request || !answer || request.kind !== 'authorization' || request.data?.mcpServer !== server || answer.id !== request.id)
      return undefined;
    if (!answer.ok) return failure(`MCP server ${server}: the login was ${answer.reason ?? 'declined'}, so the call did not run`);
    const redirect = answer.data?.redirect;
    const outcome = typeof redirect === 'string' ? loginOutcome(redirect) : undefined;
    // An answer is wire data: only a redirect, whose state ties it to this login, is taken.
    if ((outcome && 'code' in outcome && outcome.bare) || (!outcome && answer.data?.code !== undefined))
      return failure(
        `MCP server ${server}: a login request is answered with the redirect URL (data.redirect), whose state is checked; a bare code is taken only by finishLogin`,
      );
    if (!outcome) return undefined;
    try {
      await this.finishLoginWith(server, outcome);
      return undefined;
    } catch (error) {
      return failure(messageOf(error));
    }
  }

  /** The OAuth provider of a remote server the `oauth` option covers; made once per server. */
  private providerOf(server: string, spec: McpServerSpec, redactor: SecretRedactor): StoredOAuthProvider | undefined {
    if (spec.transport === 'stdio') return undefined;
    const own = spec.oauth;
    const oauth = this.options.oauth;
    if (own === false) return undefined;
    if (!oauth) {
      if (own === undefined) return undefined;
      throw new McpConfigError(
        `server ${server}: its config asks for oauth, but this McpToolSource has no oauth option (a store and a redirect URL)`,
      );
    }
    if (own === undefined && oauth.servers && !oauth.servers.includes(server)) return undefined;
    let provider = this.providers.get(server);
    if (!provider) {
      const limit = oauth.maxResponseBytes ?? DEFAULT_OAUTH_RESPONSE_BYTES;
      if (!Number.isInteger(limit) || limit < 1) throw new McpConfigError(`oauth.maxResponseBytes must be a positive whole number`);
      const bounded = new BoundedOAuthFetch(server, spec.url, limit);
      provider = oauthProvider(server, spec.url, { ...oauth, ...own }, redactor, bounded.fetch);
      this.providers.set(server, provider);
      this.oauthFetches.set(server, bounded);
    }
    return provider;
  }

  /**
   * What OAuth itself failed with, if it did: an OAuth response over the bound (whatever the
   * SDK made of it), or, for a grant that needs no person, the authorization server's refusal.
   */
  private oauthFailure(server: string, error: unknown, redactor: SecretRedactor): Error | undefined {
    const bounded = this.oauthFetches.get(server);
    const tripped = bounded?.tripped;
    if (bounded && tripped) {
      bounded.tripped = undefined;
      return tripped;
    }
    if (error instanceof McpLoginError || error instanceof McpOAuthResponseTooLargeError) return error;
    const provider = this.providers.get(server);
    if (!provider || provider instanceof LoginOAuthProvider || error instanceof UnauthorizedError) return undefined;
    if (!(error instanceof Error) || !('errorCode' in error)) return undefined;
    const grant = provider.clientMetadata.grant_types?.[0] ?? 'OAuth';
    return new McpLoginError(`server ${server}: the authorization server refused the ${grant} grant: ${redactor.text(said(error))}`);
  }

  /** The transport refused for want of a login: the URL the provider was handed, or a plain failure. */
  private loginRequired(server: string, error: UnauthorizedError): Error {
    const provider = this.providers.get(server);
    const url = provider?.loginUrl;
    if (provider) provider.loginUrl = undefined;
    if (!url) return new McpLoginError(`server ${server}: authorization failed (${said(error)})`);
    return new McpLoginRequiredError(`server ${server}: a login is needed at its authorization server`, server, url.href);
  }

  private newClient(server: string): Client {
    const client = new Client(
      { name: this.options.clientName ?? 'toolnexus', version: '1.0.0' },
      {
        capabilities: {
          ...(this.options.waitFor ? { elicitation: { form: {}, url: {} } } : {}),
          ...(this.options.sampling ? { sampling: {} } : {}),
        },
      },
    );
    const sampling = this.options.sampling;
    if (sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, (request, extra) =>
        answerSampling(server, request.params, sampling, this.options.waitFor, extra.signal),
      );
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresh(server));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const connection = this.connections.get(server);
      if (!connection) return;
      const level = LOG_LEVELS.has(notification.params.level) ? notification.params.level : 'info';
      const data = notification.params.data;
      const text = typeof data === 'string' ? data : (JSON.stringify(data) ?? '');
      for (const ctx of connection.active) {
        // A server that logs without end must not flood the host's log: a bounded number per call.
        const told = this.logLines.get(ctx) ?? 0;
        if (told > MAX_LOG_LINES_PER_CALL) continue;
        this.logLines.set(ctx, told + 1);
        if (told === MAX_LOG_LINES_PER_CALL)
          ctx.log?.('warning', `[${server}] more log lines than ${MAX_LOG_LINES_PER_CALL} in one call; the rest are dropped`);
        else ctx.log?.(level, `[${server}] ${connection.redactor.text(text.slice(0, 10_000))}`);
      }
    });
    if (this.options.waitFor) {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        const reply = await this.elicited(server, request.params);
        return reply.content === undefined
          ? { action: reply.action }
          : { action: reply.action, content: reply.content as Record<string, string> };
      });
    }
    return client;
  }

  /** A server's elicitation, asked as a pending request of this library while the call waits. */
  private async elicited(
    server: string,
    params: { message: string; mode?: string; url?: string; requestedSchema?: unknown },
  ): Promise<ElicitationReply> {
    const waitFor = this.options.waitFor as WaitFor;
    const redactor = this.connections.get(server)?.redactor;
    if (redactor) params = redactor.deep(params);
    const request: PendingRequest = {
      id: newPendingId(),
      kind: params.mode === 'url' ? 'authorization' : 'input',
      prompt: params.message,
      data: { server, ...(params.requestedSchema !== undefined ? { schema: params.requestedSchema } : {}) },
    };
    if (params.mode === 'url' && typeof params.url === 'string') request.url = params.url;
    try {
      this.options.onPending?.(request, server);
    } catch {
      // a listener that throws does not decide the answer
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.options.elicitationTimeoutMs);
    });
    try {
      const answer: Answer | undefined = await Promise.race([Promise.resolve(waitFor(request)), timedOut]);
      if (!answer || answer.id !== request.id) return { action: 'decline' };
      const reply = replyOf(answer);
      return reply.action === 'accept' ? { action: 'accept', content: withDefaults(params.requestedSchema, reply.content ?? {}) } : reply;
    } catch {
      return { action: 'decline' };
    } finally {
      clearTimeout(timer);
    }
  }

  private connectionsOf(server: string | undefined): Connection[] {
    if (server === undefined) return [...this.connections.values()];
    return [this.connectionOf(server)];
  }

  private connectionOf(server: string): Connection {
    const connection = this.closed ? undefined : this.connections.get(server);
    if (!connection) throw new McpConnectionError(`MCP server ${server} is not connected`);
    return connection;
  }

  private timeoutOf(connection: Connection): number {
    return connection.spec.timeoutMs ?? this.options.callTimeoutMs;
  }

  /** Reads pages of a list until it ends, within `maxListPages`; a cursor given twice fails. */
  private async pages(
    connection: Connection,
    what: string,
    page: (cursor: string | undefined) => Promise<string | undefined>,
  ): Promise<void> {
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let count = 1; ; count++) {
      const next = await this.asked(connection, what, () => page(cursor));
      if (next === undefined) return;
      if (seen.has(next) || count >= this.options.maxListPages)
        throw new McpConnectionError(
          `server ${connection.name}: ${what} gave ${count} pages and still a next cursor (maxListPages ${this.options.maxListPages})`,
        );
      seen.add(next);
      cursor = next;
    }
  }

  /** A request to a server, its failure said with the server's secrets redacted. */
  private async asked<T>(connection: Connection, what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (error instanceof McpConnectionError) throw error;
      throw new McpConnectionError(`server ${connection.name}: ${what} failed: ${connection.redactor.text(said(error))}`);
    }
  }

  /** Refuses what a server sent past `maxOutputChars` of JSON, rather than handing it on. */
  private bounded(connection: Connection, what: string, value: unknown): void {
    const size = JSON.stringify(value)?.length ?? 0;
    if (size > this.options.maxOutputChars)
      throw new McpConnectionError(
        `server ${connection.name}: ${what} is ${size} characters; at most ${this.options.maxOutputChars} are read`,
      );
  }

  /**
   * A server said its tools changed: list them again and apply the change to every toolkit
   * `register` filled: tools it dropped are unregistered, new ones registered (unless another
   * server's tool has the name). A failed listing keeps the tools as they were.
   */
  private refresh(server: string): Promise<void> {
    // However many notifications arrive, one listing runs at a time and at most one follows it.
    const running = this.refreshing.get(server);
    if (running) {
      running.again = true;
      return running.done;
    }
    const state = { again: false, done: Promise.resolve() };
    state.done = (async () => {
      try {
        do {
          state.again = false;
          await this.refreshOnce(server);
        } while (state.again && !this.closed);
      } finally {
        this.refreshing.delete(server);
      }
    })();
    this.refreshing.set(server, state);
    return state.done;
  }

  private async refreshOnce(server: string): Promise<void> {
    if (!this.settled.has(server)) {
      this.changedEarly.add(server);
      return;
    }
    const connection = this.connections.get(server);
    if (!connection || this.closed) return;
    const timeout = this.timeoutOf(connection);
    let fresh: FunctionTool[];
    try {
      fresh = await this.listTools(connection, performance.now() + timeout, timeout);
    } catch {
      return;
    }
    const prefix = (tool: FunctionTool): boolean => this.serverOf.get(tool.name) === server;
    const old = this.tools.filter(prefix);
    const others = new Set(this.tools.filter((tool) => !prefix(tool)).map((tool) => tool.name));
    const kept = fresh.filter((tool) => !others.has(tool.name));
    for (const tool of old) this.tools.splice(this.tools.indexOf(tool), 1);
    for (const tool of old) this.serverOf.delete(tool.name);
    for (const tool of kept) this.serverOf.set(tool.name, server);
    this.tools.push(...kept);
    for (const toolkit of this.registeredIn) {
      for (const tool of old) toolkit.unregister(tool.name);
      toolkit.register(...kept.filter((tool) => !toolkit.has(tool.name)));
    }
  }

  private definitionOf(connection: Connection, tool: McpTool): FunctionTool {
    const name = mcpToolName(connection.name, tool.name);
    const description = tool.description || `${tool.title ?? tool.name} (MCP server ${connection.name})`;
    const annotations = tool.annotations
      ? Object.fromEntries(Object.entries(tool.annotations).filter(([key, value]) => key.endsWith('Hint') && typeof value === 'boolean'))
      : undefined;
    return defineTool({
      name,
      description,
      // The server's schemas pass through as they are: they are JSON Schema objects by the protocol.
      inputSchema: tool.inputSchema as JsonSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as JsonSchema } : {}),
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
      run: (args: Record<string, unknown>, ctx?: ToolContext) => this.call(connection.name, tool, args, ctx),
    });
  }

  private async call(server: string, tool: McpTool, args: Record<string, unknown>, ctx: ToolContext | undefined): Promise<ToolResult> {
    const connection = this.connections.get(server);
    if (!connection || this.closed) return failure(`MCP server ${server} is not connected`);
    const login = await this.loginAnswered(server, ctx);
    if (login) return login;
    const result = await this.callRedacted(connection, tool, args, ctx);
    return connection.redactor.deep(result);
  }

  private async callRedacted(
    connection: Connection,
    tool: McpTool,
    args: Record<string, unknown>,
    ctx: ToolContext | undefined,
  ): Promise<ToolResult> {
    const server = connection.name;
    const callCtx: ToolContext = ctx ?? {};
    connection.active.add(callCtx);
    try {
      try {
        return await this.callOnce(connection, tool.name, args, ctx);
      } catch (error) {
        if (connection.spec.transport === 'stdio') throw error;
        if (isDroppedSession(error)) {
          // The server forgot the session (it restarted) and said so: nothing ran, so open a new one and ask again once.
          await this.reconnect(connection);
          return await this.callOnce(connection, tool.name, args, ctx);
        }
        if (!isConnectionLost(error)) throw error;
        await this.reconnect(connection);
        // The request may have reached the server before the connection broke: only a tool that
        // says repeating it changes nothing is asked again.
        if (tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true) {
          for (let attempt = 1; ; attempt++) {
            try {
              return await this.callOnce(connection, tool.name, args, ctx);
            } catch (again) {
              if (attempt >= RECONNECT_ATTEMPTS || !isConnectionLost(again)) throw again;
            }
          }
        }
        return failure(
          `MCP server ${server}, tool ${tool.name}: the connection was lost during the call (${said(error)}), so it may or may not have run; ` +
            'a new session is open for the next call',
        );
      }
    } catch (error) {
      if (error instanceof UnauthorizedError) return this.loginPending(server, tool.name, this.loginRequired(server, error));
      // A reconnect (the session was lost) that finds the login gone.
      if (error instanceof McpLoginRequiredError) return this.loginPending(server, tool.name, error);
      if (ctx?.signal?.aborted) return failure(`${server}_${tool.name} cancelled`);
      return failure(`MCP server ${server}, tool ${tool.name}: ${said(error)}`);
    } finally {
      connection.active.delete(callCtx);
    }
  }

  /**
   * A new client and session for `connection`. fetch may hand out another pooled socket the old
   * server closed, so a lost connection is tried again a few times before giving up.
   */
  private async reconnect(connection: Connection): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await connection.client.close().catch(() => undefined);
      connection.client = this.newClient(connection.name);
      try {
        await this.start(connection);
        return;
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        if (attempt >= RECONNECT_ATTEMPTS || !(isConnectionLost(error) || isConnectionLost(cause))) throw error;
      }
    }
  }

  private async callOnce(
    connection: Connection,
    tool: string,
    args: Record<string, unknown>,
    ctx: ToolContext | undefined,
  ): Promise<ToolResult> {
    const tracing = this.telemetry.active();
    if (!tracing) return this.request(connection, tool, args, ctx, undefined);
    const sessionId = (connection.client.transport as { sessionId?: string } | undefined)?.sessionId;
    const site: McpCallSite = { transport: connection.spec.transport === 'stdio' ? 'pipe' : 'tcp' };
    if (sessionId !== undefined) site.sessionId = sessionId;
    const { span, meta } = startMcpClientCall(tracing, tool, site);
    let result: ToolResult;
    try {
      result = await tracing.within(tracing.contextOf(span), () => this.request(connection, tool, args, ctx, meta));
    } catch (error) {
      endMcpCall(tracing, span, { thrown: errorTypeOf(error) });
      throw error;
    }
    endMcpCall(tracing, span, result);
    return result;
  }

  private async request(
    connection: Connection,
    tool: string,
    args: Record<string, unknown>,
    ctx: ToolContext | undefined,
    meta: Record<string, string> | undefined,
  ): Promise<ToolResult> {
    const progress = ctx?.progress;
    const params = meta && Object.keys(meta).length > 0 ? { name: tool, arguments: args, _meta: meta } : { name: tool, arguments: args };
    const result = await connection.client.callTool(params, undefined, {
      timeout: connection.spec.timeoutMs ?? this.options.callTimeoutMs,
      resetTimeoutOnProgress: true,
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
      ...(progress
        ? {
            onprogress: (update: { progress: number; total?: number; message?: string }) =>
              progress(update.progress, update.total, update.message),
          }
        : {}),
    });
    return fromMcpResult(result as { content?: unknown; isError?: unknown; structuredContent?: unknown }, this.options.maxOutputChars);
  }
}

/**
 * `server_tool` when that name says unambiguously which server and tool it is: the server name
 * of letters, digits and `-` (so the first `_` splits it), the tool name of letters, digits, `_`
 * and `-`, 64 characters at most (the longest name model APIs take). Any other pair gets the
 * sanitized name, cut, and `_` plus 8 hex digits of SHA-256 of the pair: stable (the same pair
 * always gets the same name, whatever else is connected) and distinct (`do.it` and `do_it`;
 * server `gh` tool `enterprise_merge` and server `gh_enterprise` tool `merge`). docs/mcp.md.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${server}_${tool}`;
  if (/^[A-Za-z0-9-]+$/.test(server) && /^[A-Za-z0-9_-]+$/.test(tool) && plain.length <= MAX_NAME) return plain;
  const suffix = createHash('sha256').update(`${server}\u0000${tool}`, 'utf8').digest('hex').slice(0, 8);
  return `${sanitizeName(plain).slice(0, MAX_NAME - suffix.length - 1)}_${suffix}`;
}

/** What a server's failure says, with its HTTP status, cut to a length a message can carry (a hostile body may be huge). */
function said(error: unknown): string {
  const status = error instanceof StreamableHTTPError && typeof error.code === 'number' && error.code > 0 ? `HTTP ${error.code}: ` : '';
  const text = `${status}${messageOf(error)}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… (cut)` : text;
}

function isDroppedSession(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** fetch's own failure: the socket closed or was refused, with no HTTP answer. */
function isConnectionLost(error: unknown): boolean {
  // By name, not instanceof: fetch's TypeError comes from Node's own realm, not a sandbox's (jest's).
  return (
    typeof error === 'object' && error !== null && (error as Error).name === 'TypeError' && (error as Error).message === 'fetch failed'
  );
}

/** A fetch that adds the config's headers, for the SSE transport's event stream. */
function withHeaders(headers: Record<string, string>): typeof fetch {
  return (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [key, value] of Object.entries(headers)) merged.set(key, value);
    return fetch(input, { ...init, headers: merged });
  };
}

/** The accepted content with the schema's `default` filled in for every field the answer left out (SEP-1034). */
function withDefaults(schema: unknown, content: Record<string, unknown>): Record<string, unknown> {
  const properties = (schema as { properties?: unknown } | undefined)?.properties;
  if (typeof properties !== 'object' || properties === null) return content;
  const filled = { ...content };
  for (const [key, field] of Object.entries(properties as Record<string, unknown>)) {
    const fallback = (field as { default?: unknown } | null)?.default;
    if (!(key in filled) && fallback !== undefined) filled[key] = fallback;
  }
  return filled;
}

/** The listed fields of `item` that are there, nothing else a server sent. */
function pick<T extends object, K extends string>(item: T, keys: readonly K[]): Partial<Record<K, unknown>> {
  const out: Partial<Record<K, unknown>> = {};
  for (const key of keys) {
    const value = (item as Record<string, unknown>)[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

const MAX_PROMPT_MESSAGES = 1000;

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
