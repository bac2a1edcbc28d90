import type { IncomingMessage } from 'node:http';
import { InvalidArgumentError } from '../../errors';
import type { Authorize, BearerTokens } from '../../inbox/auth';
import type { Principal } from '../../suspension/audit';

/**
 * Who may use an MCP endpoint over HTTP: the inbox's {@link Authorize} hook (read a bearer
 * token, a header set by an authenticating proxy, …), or static {@link BearerTokens}
 * (`bearerToken(process.env.MCP_TOKEN)`), of which only the `Authorization: Bearer` header is
 * read: an MCP client sends no cookies.
 */
export type McpAuthorize = Authorize | BearerTokens;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]', '::0']);

/**
 * The `Host` values a server bound to `bindHost:port` accepts by default: the loopback names
 * and the bound address itself (unless it is a wildcard such as `0.0.0.0`, whose names the
 * server cannot know), each with the port (bare too on port 80, where clients leave it out).
 */
export function defaultAllowedHosts(bindHost: string, port: number): string[] {
  const names = new Set(LOOPBACK_NAMES);
  if (!WILDCARDS.has(bindHost)) names.add(hostName(bindHost));
  return [...names].flatMap((name) => (port === 80 ? [name, `${name}:80`] : [`${name}:${port}`]));
}

/** Normalizes a host name as a URL does (`::ffff:127.0.0.1` → `[::ffff:7f00:1]`), lowercased. */
function hostName(host: string): string {
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  try {
    return new URL(`http://${bracketed}`).hostname.toLowerCase();
  } catch {
    return bracketed.toLowerCase();
  }
}

/** A `Host` value (`name` or `name:port`) normalized for comparing. */
function normalizedHost(value: string): string {
  try {
    return new URL(`http://${value}`).host.toLowerCase();
  } catch {
    return value.toLowerCase();
  }
}

/** The checks every HTTP request to serveMcp passes before it reaches a session. */
export class HttpGuard {
  private readonly hosts: Set<string>;
  private readonly origins: Set<string>;

  constructor(allowedHosts: readonly string[], allowedOrigins: readonly string[] | undefined) {
    for (const list of [allowedHosts, allowedOrigins ?? []]) {
      if (!Array.isArray(list) || !list.every((item) => typeof item === 'string' && item !== ''))
        throw new InvalidArgumentError('allowedHosts and allowedOrigins must be lists of non-empty strings');
    }
    this.hosts = new Set(allowedHosts.map(normalizedHost));
    this.origins = new Set(
      allowedOrigins === undefined
        ? [...this.hosts].flatMap((host) => [`http://${host}`, `https://${host}`].map(originOf).filter(isString))
        : allowedOrigins.map((origin) => {
            const parsed = originOf(origin);
            if (parsed === undefined) throw new InvalidArgumentError(`allowedOrigins: ${JSON.stringify(origin)} is not an origin`);
            return parsed;
          }),
    );
  }

  /**
   * Why the request's `Host` or `Origin` is refused, or `undefined`. A `Host` not on the list
   * is a DNS-rebinding page (its name resolves to this server) or a client using a name the
   * operator did not list; an `Origin` not on the list is a page of another site.
   */
  hostProblem(request: IncomingMessage): string | undefined {
    const host = request.headers.host;
    if (typeof host !== 'string' || !this.hosts.has(normalizedHost(host))) return 'host not allowed';
    const origin = request.headers.origin;
    if (origin === undefined) return undefined;
    const parsed = typeof origin === 'string' ? originOf(origin) : undefined;
    return parsed !== undefined && this.origins.has(parsed) ? undefined : 'origin not allowed';
  }
}

/** Who is asking, per `authorize`; `undefined` refuses (401). */
export async function principalOf(authorize: McpAuthorize, request: IncomingMessage): Promise<Principal | undefined> {
  if (typeof authorize === 'function') return (await authorize(request)) ?? undefined;
  const header = request.headers.authorization;
  if (typeof header !== 'string' || !/^bearer\s/i.test(header)) return undefined;
  return authorize.byToken(header.slice(7).trim());
}

function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

function isString(value: string | undefined): value is string {
  return value !== undefined;
}
