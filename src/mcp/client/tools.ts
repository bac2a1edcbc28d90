import { createHash } from 'node:crypto';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { ToolRegistrationError } from '../../errors';
import { sanitizeName } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { JsonSchema } from '../../results/json-schema';
import type { ToolContext } from '../../toolkit/context';
import { defineTool, type FunctionTool } from '../../toolkit/define-tool';
import type { Toolkit } from '../../toolkit/toolkit';
import { toolAllowed } from './config';
import type { Connection, Connections } from './connection';
import { McpConnectionError } from './errors';
import { said } from './failures';
import type { Logins } from './oauth/logins';
import type { SourceSettings } from './options';

const MAX_NAME = 64;

/** Runs a call of a server's tool: what every tool defined here does. */
export type RunRemote = (server: string, tool: McpTool, args: Record<string, unknown>, ctx: ToolContext | undefined) => Promise<ToolResult>;

/**
 * The servers' tools as Toolkit tools: listed (every page, within the bounds), named
 * `server_tool`, registered on toolkits, and kept up to date when a server says its list
 * changed.
 */
export class RemoteTools {
  private readonly tools: FunctionTool[] = [];
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

  constructor(
    private readonly settings: SourceSettings,
    private readonly connections: Connections,
    private readonly logins: Logins,
    private readonly run: RunRemote,
  ) {}

  /** Every tool taken, in the order taken. */
  definitions(): FunctionTool[] {
    return this.tools.slice();
  }

  /** Whether a tool of that name is taken already. */
  has(name: string): boolean {
    return this.serverOf.has(name);
  }

  /** The names of the tools taken from `server`. */
  namesOf(server: string): string[] {
    return this.tools.filter((tool) => this.serverOf.get(tool.name) === server).map((tool) => tool.name);
  }

  /** Registers every tool on `toolkit`, all or nothing, and keeps it up to date from then on. */
  register(toolkit: Toolkit): string[] {
    const taken = this.tools.filter((tool) => toolkit.has(tool.name)).map((tool) => tool.name);
    if (taken.length > 0)
      throw new ToolRegistrationError(`the toolkit already has tools named ${taken.slice(0, 10).join(', ')}; no MCP tool was registered`);
    toolkit.register(...this.tools);
    this.registeredIn.add(toolkit);
    return this.tools.map((tool) => tool.name);
  }

  /** Takes a server's tools, their names checked free by the caller (`connect`, which registers nothing itself). */
  take(server: string, tools: FunctionTool[]): void {
    for (const tool of tools) this.serverOf.set(tool.name, server);
    this.tools.push(...tools);
  }

  /** Takes a server's tools connected later (a finished login) and registers them where `register` did. */
  add(server: string, tools: FunctionTool[]): void {
    this.take(server, tools);
    for (const toolkit of this.registeredIn) toolkit.register(...tools.filter((tool) => !toolkit.has(tool.name)));
  }

  /** `connect` is done with these servers: a change they announced meanwhile is applied now. */
  connected(servers: string[]): void {
    for (const server of servers) this.settled.add(server);
    for (const server of this.changedEarly) void this.refresh(server);
    this.changedEarly.clear();
  }

  /** Lists every page of a connected server's tools within the deadline and the page limits, and defines them. */
  async list(connection: Connection, deadline: number, connectTimeoutMs: number): Promise<FunctionTool[]> {
    const { name, spec } = connection;
    const { maxToolsPerServer, maxListPages } = this.settings;
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
        if (error instanceof UnauthorizedError) throw this.logins.required(name, error);
        if (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number))
          throw new McpConnectionError(`server ${name}: connecting and listing its tools took over ${connectTimeoutMs} ms`);
        throw new McpConnectionError(`server ${name}: tools/list failed (page ${page}): ${said(error)}`);
      }
      listed.push(...answer.tools);
      const next = answer.nextCursor;
      if (next === undefined || listed.length >= maxToolsPerServer) break;
      if (cursors.has(next)) throw new McpConnectionError(`server ${name}: tools/list gave a cursor it gave before (page ${page})`);
      if (page >= maxListPages)
        throw new McpConnectionError(
          `server ${name}: tools/list gave ${page} pages and still a next cursor (maxListPages ${maxListPages})`,
        );
      cursors.add(next);
      cursor = next;
    }
    const tools = listed.filter((tool) => toolAllowed(spec.tools, tool.name)).slice(0, maxToolsPerServer);
    const seen = new Set<string>();
    for (const tool of tools) {
      if (typeof tool.name !== 'string' || tool.name === '')
        throw new McpConnectionError(`server ${name}: tools/list gave a tool without a name`);
      if (seen.has(tool.name)) throw new McpConnectionError(`server ${name}: tools/list gave the tool ${tool.name.slice(0, 80)} twice`);
      seen.add(tool.name);
    }
    return tools.map((tool) => this.definitionOf(connection, tool));
  }

  /**
   * A server said its tools changed: list them again and apply the change to every toolkit
   * `register` filled: tools it dropped are unregistered, new ones registered (unless another
   * server's tool has the name). A failed listing keeps the tools as they were.
   */
  refresh(server: string): Promise<void> {
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
        } while (state.again && !this.connections.closed);
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
    if (!connection || this.connections.closed) return;
    const timeout = this.connections.timeoutOf(connection);
    let fresh: FunctionTool[];
    try {
      fresh = await this.list(connection, performance.now() + timeout, timeout);
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
      run: (args: Record<string, unknown>, ctx?: ToolContext) => this.run(connection.name, tool, args, ctx),
    });
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
