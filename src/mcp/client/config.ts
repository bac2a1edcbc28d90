import { expandVariables } from '../../http/variables';
import { McpConfigError } from './errors';

/** How to reach one MCP server, after `${ENV}` expansion. */
export type McpServerSpec = (
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | {
      /** `http`: Streamable HTTP, falling back to the older HTTP+SSE transport when the server refuses it; `sse`: HTTP+SSE only. */
      transport: 'http' | 'sse';
      url: string;
      headers: Record<string, string>;
      /** True when the config named the transport, so no fallback is tried. */
      explicit: boolean;
      /**
       * The server's `oauth`: `false` never logs in; an object names its scope or a client
       * registered beforehand (docs/mcp.md, "OAuth"). Absent: the source's `oauth` option decides.
       */
      oauth?: false | McpServerOAuth;
    }
) & {
  /**
   * What is redacted in every message about this server: its `env` and `headers` values and every
   * value a `${VAR}` put into the config (docs/mcp.md, "What is redacted").
   */
  secrets: string[];
  /** The server's own `timeout` (ms): bounds connecting, each `tools/list` phase and each call, in place of the source's defaults. */
  timeoutMs?: number;
  /**
   * The server's `tools` map, keyed by its own tool names: with a `true` in it, only those are
   * taken (an allow-list); with only `false`s, those are left out. Empty or absent: every tool.
   */
  tools?: Record<string, boolean>;
};

/** A server's own OAuth settings in the config; the store and redirect URL are the source's. */
export interface McpServerOAuth {
  scope?: string;
  clientId?: string;
  /** Redacted like a header; `${VAR}` is expanded in it. */
  clientSecret?: string;
  /** DPoP-bound tokens for this server (ES256), or not, whatever the source's `oauth.dpop` says. */
  dpop?: boolean;
}

/** One server of a config: its spec, or why it cannot be used (the others still are). */
export type McpServerEntry = { name: string; spec: McpServerSpec } | { name: string; error: McpConfigError };

/** What a config's variables are looked up in (default: `process.env`). */
export type McpEnvironment = Record<string, string | undefined>;

const MAX_SERVERS = 100;
/** The longest `timeout` a server may set: ten minutes. */
const MAX_TIMEOUT_MS = 600_000;
/**
 * Top-level keys of upstream toolnexus's config that sit beside a bare server map and are not
 * servers (its SPEC §2, "Reserved sibling keys").
 */
const RESERVED_KEYS = new Set(['builtins', 'agents', 'a2a', 'mcpServer', '$schema']);

/** A config read whole: its usable and failed servers, and the ones it turns off. */
export interface McpConfigReading {
  entries: McpServerEntry[];
  /** Servers with `"enabled": false` or `"disabled": true`: never started. */
  disabled: string[];
}

/**
 * Reads the `mcp.json` shapes in use, in this precedence (the first key present wins; the others
 * are not read):
 *
 * 1. `{ "mcpServers": { … } }`: Claude Desktop, Cursor, upstream toolnexus;
 * 2. `{ "servers": { … } }`: VS Code's `.vscode/mcp.json`;
 * 3. `{ "mcp": { "servers": { … } } }` (VS Code settings) or `{ "mcp": { … } }` (upstream toolnexus);
 * 4. a bare map of servers, less upstream's sibling sections (`builtins`, `agents`, `a2a`, `mcpServer`).
 *
 * A server is stdio when it has a `command` (a string with `args`, or an array: program, then
 * arguments) or `type` `stdio` / `local`; HTTP when it has a `url` or `type` `http`,
 * `streamable-http`, `sse` or `remote` (`remote` and no type try Streamable HTTP, then SSE).
 * `env` (or upstream's `environment`), `cwd`, `headers`, `oauth`, `timeout` (ms), `tools` (an allow- or
 * drop-list by the server's own tool names) and `enabled: false` / `disabled: true` are read.
 * `${VAR}`, `${env:VAR}` and `${VAR:-fallback}` in `env`, `headers` and `url` are replaced from
 * `env`; a variable that is not set and has no fallback makes that one server an error entry
 * (upstream toolnexus sends an empty string instead; a missing token is refused here, not sent
 * empty).
 *
 * @throws {@link McpConfigError} when the document itself is not such a config.
 */
export function parseMcpConfig(document: unknown, env: McpEnvironment = process.env): McpServerEntry[] {
  return readMcpConfig(document, env).entries;
}

/** {@link parseMcpConfig}, also naming the servers the config turns off. */
export function readMcpConfig(document: unknown, env: McpEnvironment = process.env): McpConfigReading {
  const servers = serversOf(document);
  const names = Object.keys(servers);
  if (names.length > MAX_SERVERS) throw new McpConfigError(`the config lists ${names.length} servers; at most ${MAX_SERVERS} are read`);
  const reading: McpConfigReading = { entries: [], disabled: [] };
  for (const name of names) {
    const raw = servers[name];
    try {
      if (isObject(raw) && !enabledOf(name, raw)) {
        reading.disabled.push(name);
        continue;
      }
      reading.entries.push({ name, spec: specOf(name, raw, env) });
    } catch (error) {
      reading.entries.push({
        name,
        error: error instanceof McpConfigError ? error : new McpConfigError(`server ${name}: ${String(error)}`),
      });
    }
  }
  return reading;
}

function serversOf(document: unknown): Record<string, unknown> {
  if (!isObject(document)) throw new McpConfigError('an MCP config must be a JSON object');
  for (const key of ['mcpServers', 'servers'] as const) {
    if (document[key] === undefined) continue;
    if (!isObject(document[key])) throw new McpConfigError(`"${key}" must be an object of servers`);
    return document[key];
  }
  if (document.mcp !== undefined) {
    const mcp = document.mcp;
    if (!isObject(mcp)) throw new McpConfigError('"mcp" must be an object of servers');
    // VS Code settings nest the map under "servers"; upstream's "mcp" is the map itself (a server
    // named "servers" there has a command or url of its own).
    if (isObject(mcp.servers) && !looksLikeServer(mcp.servers)) return mcp.servers;
    return mcp;
  }
  return Object.fromEntries(Object.entries(document).filter(([key]) => !RESERVED_KEYS.has(key)));
}

function looksLikeServer(value: Record<string, unknown>): boolean {
  return value.command !== undefined || value.url !== undefined || typeof value.type === 'string';
}

function enabledOf(name: string, raw: Record<string, unknown>): boolean {
  for (const key of ['enabled', 'disabled'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'boolean') throw new McpConfigError(`server ${name}: ${key} must be true or false`);
  }
  return raw.disabled !== true && raw.enabled !== false;
}

function specOf(name: string, raw: unknown, env: McpEnvironment): McpServerSpec {
  if (!isObject(raw)) throw new McpConfigError(`server ${name}: not an object`);
  const secrets: string[] = [];
  const type = raw.type;
  if (type !== undefined && typeof type !== 'string') throw new McpConfigError(`server ${name}: type must be a string`);
  const common = { ...timeoutOf(name, raw.timeout), ...toolsOf(name, raw.tools) };
  const isStdio = type === 'stdio' || type === 'local' || (type === undefined && raw.command !== undefined);
  if (isStdio) {
    const { command, args } = commandOf(name, raw.command, raw.args);
    if (raw.cwd !== undefined && typeof raw.cwd !== 'string') throw new McpConfigError(`server ${name}: cwd must be a string`);
    if (raw.env !== undefined && raw.environment !== undefined)
      throw new McpConfigError(`server ${name}: give env or environment, not both`);
    const spec: McpServerSpec = {
      transport: 'stdio',
      command,
      args,
      env: expandAll(name, raw.env !== undefined ? 'env' : 'environment', raw.env ?? raw.environment, env, secrets),
      secrets: [...new Set(secrets)],
      ...common,
    };
    if (typeof raw.cwd === 'string') spec.cwd = raw.cwd;
    return spec;
  }
  const transport = httpTransportOf(name, type);
  if (typeof raw.url !== 'string') throw new McpConfigError(`server ${name}: needs a command (stdio) or a url (HTTP)`);
  const url = expand(name, 'url', raw.url, env, secrets);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new McpConfigError(`server ${name}: url is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new McpConfigError(`server ${name}: url must be http or https`);
  const headers = expandAll(name, 'headers', raw.headers, env, secrets);
  const oauth = oauthOf(name, raw.oauth, env, secrets);
  return {
    transport,
    url,
    headers,
    explicit: type !== undefined && type !== 'remote',
    ...(oauth !== undefined ? { oauth } : {}),
    secrets: [...new Set(secrets)],
    ...common,
  };
}

/** `oauth`: `false`, `true` (the source's settings), or `{ scope, clientId, clientSecret }` (upstream toolnexus's shape) with `dpop`. */
function oauthOf(name: string, raw: unknown, env: McpEnvironment, secrets: string[]): false | McpServerOAuth | undefined {
  if (raw === undefined || raw === true) return raw === true ? {} : undefined;
  if (raw === false) return false;
  if (!isObject(raw))
    throw new McpConfigError(`server ${name}: oauth must be true, false or an object (scope, clientId, clientSecret, dpop)`);
  const out: McpServerOAuth = {};
  if (raw.dpop !== undefined) {
    if (typeof raw.dpop !== 'boolean') throw new McpConfigError(`server ${name}: oauth.dpop must be true or false`);
    out.dpop = raw.dpop;
  }
  for (const key of ['scope', 'clientId', 'clientSecret'] as const) {
    const value = raw[key];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new McpConfigError(`server ${name}: oauth.${key} must be a string`);
    out[key] = key === 'clientSecret' ? expand(name, 'oauth.clientSecret', value, env, secrets) : value;
  }
  if (out.clientSecret) secrets.push(out.clientSecret);
  return out;
}

/** `command` as a string (with `args`) or as upstream's array: the program, then its arguments (`args` appended). */
function commandOf(name: string, command: unknown, rawArgs: unknown): { command: string; args: string[] } {
  const args = rawArgs ?? [];
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))
    throw new McpConfigError(`server ${name}: args must be strings`);
  if (typeof command === 'string' && command !== '') return { command, args: args.slice() };
  if (Array.isArray(command) && command.length > 0 && command.every((part) => typeof part === 'string') && command[0] !== '')
    return { command: command[0] as string, args: [...command.slice(1), ...args] };
  throw new McpConfigError(`server ${name}: a stdio server needs a command (a string, or an array of strings: program, then arguments)`);
}

function timeoutOf(name: string, timeout: unknown): { timeoutMs?: number } {
  if (timeout === undefined) return {};
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MAX_TIMEOUT_MS)
    throw new McpConfigError(`server ${name}: timeout must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  return { timeoutMs: timeout };
}

function toolsOf(name: string, tools: unknown): { tools?: Record<string, boolean> } {
  if (tools === undefined) return {};
  if (!isObject(tools) || !Object.values(tools).every((value) => typeof value === 'boolean'))
    throw new McpConfigError(`server ${name}: tools must map tool names to true or false`);
  return Object.keys(tools).length === 0 ? {} : { tools: { ...(tools as Record<string, boolean>) } };
}

function httpTransportOf(name: string, type: string | undefined): 'http' | 'sse' {
  if (type === undefined || type === 'remote' || type === 'http' || type === 'streamable-http' || type === 'streamableHttp') return 'http';
  if (type === 'sse') return 'sse';
  throw new McpConfigError(`server ${name}: unknown type ${JSON.stringify(type)} (stdio or local, http, sse or remote)`);
}

/**
 * Whether a server's tool is taken under its `tools` map: any `true` makes the map an
 * allow-list; only `false`s make it a drop-list; names the server does not have are ignored.
 */
export function toolAllowed(tools: Record<string, boolean> | undefined, tool: string): boolean {
  if (tools === undefined) return true;
  const allowList = Object.values(tools).some((value) => value);
  return allowList ? tools[tool] === true : tools[tool] !== false;
}

/** Every value is a secret too: an env or header value is redacted whole, whether a `${VAR}` made it or not. */
function expandAll(server: string, field: string, raw: unknown, env: McpEnvironment, secrets: string[]): Record<string, string> {
  if (raw === undefined) return {};
  if (!isObject(raw)) throw new McpConfigError(`server ${server}: ${field} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string') throw new McpConfigError(`server ${server}: ${field}.${key} must be a string`);
    out[key] = expand(server, `${field}.${key}`, value, env, secrets);
    if (out[key] !== '') secrets.push(out[key]);
  }
  return out;
}

/** `${VAR}`, `${env:VAR}` and `${VAR:-fallback}` replaced; the message names the variable, never a value. */
function expand(server: string, where: string, text: string, env: McpEnvironment, secrets: string[]): string {
  return expandVariables(
    text,
    (variable) => env[variable],
    (variable) =>
      new McpConfigError(
        `server ${server}: ${where} uses \${${variable}}, which is not set (a missing variable is refused rather than sent empty; write \${${variable}:-} for an explicit empty value)`,
      ),
    (value) => secrets.push(value),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
