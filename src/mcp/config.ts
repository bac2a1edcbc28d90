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
    }
) & {
  /**
   * What is masked in every message about this server: its `env` and `headers` values and every
   * value a `${VAR}` put into the config (docs/mcp.md, "What is masked").
   */
  secrets: string[];
};

/** One server of a config: its spec, or why it cannot be used (the others still are). */
export type McpServerEntry = { name: string; spec: McpServerSpec } | { name: string; error: McpConfigError };

/** What a config's variables are looked up in (default: `process.env`). */
export type McpEnvironment = Record<string, string | undefined>;

const MAX_SERVERS = 100;

/**
 * Reads the `mcp.json` shapes users already have: `{ "mcpServers": { … } }` (Claude Desktop,
 * Cursor), `{ "servers": { … } }` (VS Code's `.vscode/mcp.json`) and `{ "mcp": { "servers": … } }`
 * (VS Code settings). Each server is `{ command, args?, env?, cwd? }` (stdio) or `{ url, headers? }`
 * (HTTP; `type: "sse"` for the older transport). `${VAR}` and `${env:VAR}` in `env`, `headers`
 * and `url` are replaced from `env`; a missing variable makes that one server an error entry.
 * Servers with `"disabled": true` are left out.
 *
 * @throws {@link McpConfigError} when the document itself is not such a config.
 */
export function parseMcpConfig(document: unknown, env: McpEnvironment = process.env): McpServerEntry[] {
  const servers = serversOf(document);
  const names = Object.keys(servers);
  if (names.length > MAX_SERVERS) throw new McpConfigError(`the config lists ${names.length} servers; at most ${MAX_SERVERS} are read`);
  const entries: McpServerEntry[] = [];
  for (const name of names) {
    const raw = servers[name];
    if (isObject(raw) && raw.disabled === true) continue;
    try {
      entries.push({ name, spec: specOf(name, raw, env) });
    } catch (error) {
      entries.push({ name, error: error instanceof McpConfigError ? error : new McpConfigError(`server ${name}: ${String(error)}`) });
    }
  }
  return entries;
}

function serversOf(document: unknown): Record<string, unknown> {
  if (!isObject(document)) throw new McpConfigError('an MCP config must be a JSON object');
  const candidate = document.mcpServers ?? document.servers ?? (isObject(document.mcp) ? document.mcp.servers : undefined);
  if (!isObject(candidate)) throw new McpConfigError('an MCP config needs "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)');
  return candidate;
}

function specOf(name: string, raw: unknown, env: McpEnvironment): McpServerSpec {
  if (!isObject(raw)) throw new McpConfigError(`server ${name}: not an object`);
  const secrets: string[] = [];
  const type = raw.type;
  if (type !== undefined && typeof type !== 'string') throw new McpConfigError(`server ${name}: type must be a string`);
  const isStdio = type === 'stdio' || (type === undefined && raw.command !== undefined);
  if (isStdio) {
    if (typeof raw.command !== 'string' || raw.command === '') throw new McpConfigError(`server ${name}: a stdio server needs a command`);
    const args = raw.args ?? [];
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string'))
      throw new McpConfigError(`server ${name}: args must be strings`);
    if (raw.cwd !== undefined && typeof raw.cwd !== 'string') throw new McpConfigError(`server ${name}: cwd must be a string`);
    const spec: McpServerSpec = {
      transport: 'stdio',
      command: raw.command,
      args: args.slice(),
      env: expandAll(name, 'env', raw.env, env, secrets),
      secrets: [...new Set(secrets)],
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
  return {
    transport,
    url,
    headers: expandAll(name, 'headers', raw.headers, env, secrets),
    explicit: type !== undefined,
    secrets: [...new Set(secrets)],
  };
}

function httpTransportOf(name: string, type: string | undefined): 'http' | 'sse' {
  if (type === undefined || type === 'http' || type === 'streamable-http' || type === 'streamableHttp') return 'http';
  if (type === 'sse') return 'sse';
  throw new McpConfigError(`server ${name}: unknown type ${JSON.stringify(type)} (stdio, http or sse)`);
}

/** Every value is a secret too: an env or header value is masked whole, whether a `${VAR}` made it or not. */
function expandAll(server: string, field: string, raw: unknown, env: McpEnvironment, secrets: string[]): Record<string, string> {
  if (raw === undefined) return {};
  if (!isObject(raw)) throw new McpConfigError(`server ${server}: ${field} must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string') throw new McpConfigError(`server ${server}: ${field}.${key} must be a string`);
    out[key] = expand(server, `${field}.${key}`, value, env, secrets);
    secrets.push(out[key]);
  }
  return out;
}

/** `${VAR}` and `${env:VAR}` replaced; the message names the variable, never a value. */
function expand(server: string, where: string, text: string, env: McpEnvironment, secrets: string[]): string {
  return text.replace(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, variable: string) => {
    const value = env[variable];
    if (value === undefined) throw new McpConfigError(`server ${server}: ${where} uses \${${variable}}, which is not set`);
    secrets.push(value);
    return value;
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
