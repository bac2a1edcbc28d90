import { createHash } from 'node:crypto';
import { SdkError, SdkErrorCode, UnauthorizedError, type Client, type Tool as McpTool } from '@modelcontextprotocol/client';
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
import { mcpHeaders } from '../../schema/mcp-headers';
import { said } from './failures';
import type { Logins } from './oauth/logins';
import type { SourceSettings } from './options';

const MAX_NAME = 64;

/** Runs a call of a server's tool: what every tool defined here does. */
export type RunRemote = (server: string, tool: McpTool, args: Record<string, unknown>, ctx: ToolContext | undefined) => Promise<ToolResult>;

/**
 * The servers' tools as Toolkit tools: listed (every page, within the bounds), named by
 * {@link mcpToolNames} over every server's tools together, registered on toolkits, and kept up
 * to date when a server says its list changed (or a server connects late): a change may rename
 * another server's tool, which every toolkit `register` filled then sees.
 */
export class RemoteTools {
  /** Each server's listed tools, servers in the order taken: what the names are made from. */
  private readonly listed = new Map<string, McpTool[]>();
  /** Every tool defined, in the order taken. */
  private tools: FunctionTool[] = [];
  /** Which server each defined tool came from, by its name. */
  private readonly serverOf = new Map<string, string>();
  /** The definition of each listed tool: the same object while its name and listing stay. */
  private readonly definitionOfListed = new Map<McpTool, FunctionTool>();
  /** The toolkits `register` filled, with the names it registered there (never a tool of the host's). */
  private readonly registeredIn = new Map<Toolkit, Set<string>>();
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
    this.registeredIn.set(toolkit, new Set(this.tools.map((tool) => tool.name)));
    return this.tools.map((tool) => tool.name);
  }

  /**
   * Takes the tools `connect` listed, every server at once, so that which names collide does
   * not depend on which server answered first.
   */
  take(servers: ReadonlyArray<{ server: string; tools: McpTool[] }>): void {
    for (const { server, tools } of servers) this.listed.set(server, tools);
    this.rename();
  }

  /** Takes a server's tools connected later (a finished login) and registers them where `register` did. */
  add(server: string, tools: McpTool[]): void {
    this.listed.set(server, tools);
    this.rename();
  }

  /** `connect` is done with these servers: a change they announced meanwhile is applied now. */
  connected(servers: string[]): void {
    for (const server of servers) this.settled.add(server);
    for (const server of this.changedEarly) void this.refresh(server);
    this.changedEarly.clear();
  }

  /** Lists every page of a connected server's tools within the deadline and the page limits, unnamed yet. */
  async list(connection: Connection, deadline: number, connectTimeoutMs: number): Promise<McpTool[]> {
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
        // The first page by itself: the SDK's listTools() without a cursor walks every page under its own bounds, not these.
        answer =
          cursor === undefined
            ? await connection.client.request({ method: 'tools/list' }, { timeout: left })
            : await connection.client.listTools({ cursor }, { timeout: left });
      } catch (error) {
        // A server may take `initialize` without a token and want one (or another scope) for tools/list.
        if (error instanceof UnauthorizedError) throw this.logins.required(name, error);
        if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
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
    // SEP-2243: over HTTP in 2026-07-28, a tool whose x-mcp-header annotations are malformed is left out.
    const headers = spec.transport !== 'stdio' && connection.client.getProtocolEra() === 'modern';
    const tools = listed
      .filter((tool) => toolAllowed(spec.tools, tool.name) && !(headers && mcpHeaders(tool.inputSchema).fault !== undefined))
      .slice(0, maxToolsPerServer);
    const seen = new Set<string>();
    for (const tool of tools) {
      if (typeof tool.name !== 'string' || tool.name === '')
        throw new McpConnectionError(`server ${name}: tools/list gave a tool without a name`);
      if (seen.has(tool.name)) throw new McpConnectionError(`server ${name}: tools/list gave the tool ${tool.name.slice(0, 80)} twice`);
      seen.add(tool.name);
    }
    return tools;
  }

  /**
   * A server said its tools changed: list them again and apply the change to every toolkit
   * `register` filled: tools it dropped are unregistered, new ones registered, and tools of
   * other servers renamed where the change made their names collide or stop colliding. A failed
   * listing keeps the tools as they were.
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
    if (!connection || this.connections.closed || !this.listed.has(server)) return;
    const timeout = this.connections.timeoutOf(connection);
    let fresh: McpTool[];
    try {
      fresh = await this.list(connection, performance.now() + timeout, timeout);
    } catch {
      return;
    }
    this.listed.set(server, fresh);
    this.rename();
  }

  /**
   * Names every listed tool again and applies the difference: a tool whose name and listing
   * stayed keeps its definition (and its registration); any other is unregistered where
   * `register` put it and its new definition registered there, unless the host's own tool
   * has that name.
   */
  private rename(): void {
    const pairs = [...this.listed].flatMap(([server, tools]) => tools.map((tool) => ({ server, tool })));
    const names = mcpToolNames(pairs.map(({ server, tool }) => ({ server, tool: tool.name })));
    const next: FunctionTool[] = [];
    const nextServerOf = new Map<string, string>();
    const nextDefinitions = new Map<McpTool, FunctionTool>();
    pairs.forEach(({ server, tool }, index) => {
      const name = names[index];
      if (name === undefined) return;
      const kept = this.definitionOfListed.get(tool);
      const definition = kept?.name === name ? kept : this.definitionOf(server, tool, name);
      next.push(definition);
      nextServerOf.set(name, server);
      nextDefinitions.set(tool, definition);
    });
    const staying = new Set(next);
    const gone = this.tools.filter((tool) => !staying.has(tool));
    const before = new Set(this.tools);
    const arriving = next.filter((tool) => !before.has(tool));
    this.tools = next;
    this.serverOf.clear();
    for (const [name, server] of nextServerOf) this.serverOf.set(name, server);
    this.definitionOfListed.clear();
    for (const [tool, definition] of nextDefinitions) this.definitionOfListed.set(tool, definition);
    for (const [toolkit, ours] of this.registeredIn) {
      for (const tool of gone) if (ours.delete(tool.name)) toolkit.unregister(tool.name);
      const free = arriving.filter((tool) => !toolkit.has(tool.name));
      toolkit.register(...free);
      for (const tool of free) ours.add(tool.name);
    }
  }

  private definitionOf(server: string, tool: McpTool, name: string): FunctionTool {
    const description = tool.description || `${tool.title ?? tool.name} (MCP server ${server})`;
    const annotations = tool.annotations
      ? Object.fromEntries(Object.entries(tool.annotations).filter(([key, value]) => key.endsWith('Hint') && typeof value === 'boolean'))
      : undefined;
    return defineTool({
      name,
      description,
      // The server's schemas pass through as they are: they are JSON Schema objects by the protocol.
      inputSchema: tool.inputSchema as JsonSchema,
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      ...(annotations && Object.keys(annotations).length > 0 ? { annotations } : {}),
      run: (args: Record<string, unknown>, ctx?: ToolContext) => this.run(server, tool, args, ctx),
    });
  }
}

/**
 * The names the model sees for MCP tools, one per `{ server, tool }` pair (server names are
 * unique, and so are a server's tool names), in the pairs' order: upstream toolnexus's
 * `sanitize(server)_sanitize(tool)` (SPEC §0.2), cut to the 64 characters model APIs take,
 * wherever that name is unique among all the pairs.
 *
 * Pairs whose plain names collide ALL get `_` plus 8 hex digits of the SHA-256 of the pair
 * (the plain name cut to make room), so the result depends on the set of pairs only, never on
 * their order: a server listing first cannot keep a name another server's tool also maps to,
 * and a hostile server cannot take a trusted server's name by copying it (it only makes both
 * suffixed). A suffixed name that meets another name again is suffixed anew from the pair and
 * the round, the same way; a pair still colliding after as many rounds as there are pairs
 * (two 32-bit hashes of distinct pairs equal every round) gets no name, and its tool is left out.
 */
export function mcpToolNames(pairs: ReadonlyArray<{ server: string; tool: string }>): Array<string | undefined> {
  const names: Array<string | undefined> = pairs.map(({ server, tool }) => sanitizeName(`${server}_${tool}`).slice(0, MAX_NAME));
  for (let round = 1; round <= pairs.length + 1; round++) {
    const holders = new Map<string, number[]>();
    names.forEach((name, index) => {
      if (name === undefined) return;
      const indexes = holders.get(name);
      if (indexes) indexes.push(index);
      else holders.set(name, [index]);
    });
    const colliding = [...holders.values()].filter((indexes) => indexes.length > 1).flat();
    if (colliding.length === 0) return names;
    for (const index of colliding) names[index] = suffixed(pairs[index]!, round);
  }
  // Unreachable but for repeated hash collisions: a name the toolkit would refuse is no name.
  const counts = new Map<string, number>();
  for (const name of names) if (name !== undefined) counts.set(name, (counts.get(name) ?? 0) + 1);
  return names.map((name) => (name !== undefined && counts.get(name) === 1 ? name : undefined));
}

/** The pair's plain name cut, `_`, and 8 hex digits of SHA-256 of the pair (and of the round after the first). */
function suffixed({ server, tool }: { server: string; tool: string }, round: number): string {
  const hashed = round === 1 ? `${server}\u0000${tool}` : `${round}\u0000${server}\u0000${tool}`;
  const suffix = createHash('sha256').update(hashed, 'utf8').digest('hex').slice(0, 8);
  return `${sanitizeName(`${server}_${tool}`).slice(0, MAX_NAME - suffix.length - 1)}_${suffix}`;
}
