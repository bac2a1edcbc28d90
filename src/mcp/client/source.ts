import { readFile } from 'node:fs/promises';
import type { Tool as McpTool } from '@modelcontextprotocol/client';
import { messageOf } from '../../errors/message';
import { Telemetry } from '../../telemetry/telemetry';
import type { SkillDefinition } from '../../skills/types';
import type { FunctionTool } from '../../toolkit/define-tool';
import type { Toolkit } from '../../toolkit/toolkit';
import { RemoteCalls } from './call';
import { RemoteCatalog } from './catalog';
import { readMcpConfig, type McpServerEntry, type McpServerSpec } from './config';
import { Connections } from './connection';
import { McpConfigError, McpConnectionError, McpLoginError, McpLoginRequiredError, isOAuthRefusal } from './errors';
import { said } from './failures';
import { Logins } from './oauth/logins';
import { loginOutcome, type LoginOutcome } from './oauth/outcome';
import { sourceSettings, type McpToolSourceOptions, type SourceSettings } from './options';
import { SecretRedactor } from './redactor';
import { RemoteTools } from './tools';
import type { McpConnectReport, McpServerPrompt, McpServerResource } from './types';

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
  private readonly settings: SourceSettings;
  private readonly logins: Logins;
  private readonly connections: Connections;
  private readonly tools: RemoteTools;
  private readonly calls: RemoteCalls;
  private readonly catalog: RemoteCatalog;
  private connecting = false;

  constructor(options: McpToolSourceOptions) {
    const reading = readMcpConfig(options.config, options.env);
    this.entries = reading.entries;
    this.disabled = reading.disabled;
    const telemetry = new Telemetry(options.telemetry, 'McpToolSource');
    this.settings = sourceSettings(options);
    this.logins = new Logins(this.settings.oauth);
    this.connections = new Connections(this.settings, this.logins, {
      toolsChanged: (server) => this.tools.refresh(server),
      logged: (connection, params) => this.calls.logged(connection, params),
      elicited: (server, params) => this.calls.elicited(server, params),
      sampled: (server, params, signal) => this.calls.sampled(server, params, signal),
    });
    this.calls = new RemoteCalls(this.settings, telemetry, this.connections, this.logins, (server, outcome) =>
      this.finishLoginWith(server, outcome),
    );
    this.tools = new RemoteTools(this.settings, this.connections, this.logins, (server, tool, args, ctx) =>
      this.calls.call(server, tool, args, ctx),
    );
    this.catalog = new RemoteCatalog(this.settings, this.connections);
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
      this.entries.map(async (entry): Promise<{ server: string; error: Error } | { server: string; tools: McpTool[] }> => {
        if ('error' in entry) return { server: entry.name, error: entry.error };
        const redactor = new SecretRedactor(entry.spec.secrets);
        try {
          return { server: entry.name, tools: await this.open(entry.name, entry.spec, redactor) };
        } catch (error) {
          const login = this.connections.get(entry.name)?.transport;
          await this.connections.drop(entry.name);
          if (error instanceof McpLoginRequiredError && login) {
            this.logins.wait(entry.name, { spec: entry.spec, redactor, transport: login });
            return { server: entry.name, error };
          }
          // OAuth's own errors keep their class: their messages are made here, redacted already.
          if (error instanceof McpLoginError || isOAuthRefusal(error)) return { server: entry.name, error };
          const redacted = redactor.error(error);
          return { server: entry.name, error: error instanceof McpConnectionError ? redacted : new McpConnectionError(redacted.message) };
        }
      }),
    );
    // A server's tools are taken all together or not at all, every server's at once: names are made over all of them.
    const listed: Array<{ server: string; tools: McpTool[] }> = [];
    for (const outcome of outcomes) {
      if ('error' in outcome && outcome.error instanceof McpLoginRequiredError) {
        report.needsLogin.push({ server: outcome.server, url: outcome.error.url });
        continue;
      }
      if ('error' in outcome) {
        report.failed.push({ server: outcome.server, error: outcome.error });
        continue;
      }
      listed.push(outcome);
    }
    this.tools.take(listed);
    for (const { server } of listed) report.connected.push({ server, tools: this.tools.namesOf(server) });
    this.tools.connected(outcomes.map((outcome) => outcome.server));
    return report;
  }

  /** The connected servers' tools, ready for `toolkit.register(...)`. */
  toolDefinitions(): FunctionTool[] {
    return this.tools.definitions();
  }

  /**
   * Registers every connected server's tools on `toolkit`; returns their names. All or nothing:
   * when a name is already registered there, nothing is and {@link ToolRegistrationError} names it.
   */
  register(toolkit: Toolkit): string[] {
    return this.tools.register(toolkit);
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

  /** The resources of every connected server (or of one), every page within the listing bounds. */
  async resources(server?: string): Promise<McpServerResource[]> {
    return this.catalog.resources(server);
  }

  /** Reads a resource of `server`: its text and base64 contents, bounded by `maxOutputChars` and redacted. */
  async readResource(server: string, uri: string): Promise<Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>> {
    return this.catalog.readResource(server, uri);
  }

  /**
   * The skills of every connected server that serves the Skills extension (or of one), as
   * definitions for `loadSkills({ skills })` beside the host's own (docs/mcp.md, "Skills over
   * MCP"): named `server_name`, each file read only when the model loads it and verified
   * against the server's digests first. Reads the listings only; at most `maxSkillsPerServer`
   * per server.
   *
   * @example
   * ```ts
   * const skills = loadSkills({ dirs: './skills', skills: await source.skills() })
   * const runner = new AgentRunner({ model, toolkit, skills })
   * ```
   */
  async skills(server?: string): Promise<SkillDefinition[]> {
    return this.catalog.skills(server);
  }

  /** The prompts of every connected server (or of one). */
  async prompts(server?: string): Promise<McpServerPrompt[]> {
    return this.catalog.prompts(server);
  }

  /** A prompt of `server` with its arguments: its messages, bounded (`maxOutputChars`, 1000 messages) and redacted. */
  async getPrompt(
    server: string,
    name: string,
    args: Record<string, string> = {},
  ): Promise<{ description?: string; messages: Array<{ role: 'user' | 'assistant'; content: Record<string, unknown> }> }> {
    return this.catalog.getPrompt(server, name, args);
  }

  /**
   * A prompt of `server` as a runner's instructions: the text of its messages, a blank line
   * between them (other content named, not included): `new AgentRunner({ systemPrompt })`.
   */
  async instructions(server: string, name: string, args: Record<string, string> = {}): Promise<string> {
    return this.catalog.instructions(server, name, args);
  }

  /** Closes every connection: stdio servers' child processes end, HTTP sessions are closed. */
  async close(): Promise<void> {
    await this.connections.close();
  }

  /** Connects, lists every page of tools within the time and page limits, and defines them; nothing is kept on failure. */
  private async open(name: string, spec: McpServerSpec, redactor: SecretRedactor): Promise<McpTool[]> {
    const connectTimeoutMs = spec.timeoutMs ?? this.settings.connectTimeoutMs;
    const deadline = performance.now() + connectTimeoutMs;
    const connection = await this.connections.connect(name, spec, redactor);
    return this.tools.list(connection, deadline, connectTimeoutMs);
  }

  private async finishLoginWith(server: string, outcome: LoginOutcome): Promise<string[]> {
    const waiting = await this.logins.exchange(server, outcome, this.connections.get(server));
    if (!waiting) return this.tools.namesOf(server);
    let tools: McpTool[];
    try {
      tools = await this.open(server, waiting.spec, waiting.redactor);
    } catch (error) {
      const again = this.connections.get(server)?.transport;
      await this.connections.drop(server);
      if (error instanceof McpLoginRequiredError) {
        this.logins.wait(server, { ...waiting, transport: again ?? waiting.transport });
        throw error;
      }
      throw error instanceof McpConnectionError
        ? waiting.redactor.error(error)
        : new McpConnectionError(waiting.redactor.text(said(error)));
    }
    this.tools.add(server, tools);
    return this.tools.namesOf(server);
  }
}
