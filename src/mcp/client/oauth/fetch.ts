import { McpOAuthIssuerError, McpOAuthOriginError, McpOAuthResponseTooLargeError, type McpOAuthRefusal } from '../errors';

/** Redirects followed for one OAuth request, each on an allowed origin. */
const MAX_REDIRECTS = 5;

/** What the SDK's transports and `auth()` call to reach a server: the standard fetch's shape. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The fetch a remote server's transport is given: requests to the MCP endpoint itself pass
 * as they are (its streams are bounded where they are read), and every other request, which
 * is OAuth's (protected-resource and authorization-server metadata, registration, tokens,
 * the IdP's token exchange), goes only to an allowed origin (the MCP server's, and those the
 * host named), follows a redirect only to one, and has its response read up to `limit` bytes
 * and handed on whole. Authorization-server metadata must name the issuer its address was
 * made from. A refusal ({@link McpOAuthRefusal}) is thrown and kept in `tripped` too: the SDK
 * may wrap or swallow what its fetch throws, and the source reports this one instead.
 */
export class BoundedOAuthFetch {
  tripped: McpOAuthRefusal | undefined;
  /**
   * Told when the MCP endpoint refuses a request that carried a token (401, other than a DPoP
   * nonce challenge): the token's authorization server may no longer be the server's.
   */
  tokenRefused: (() => void) | undefined;
  private readonly endpoint: string;
  private readonly own: string;

  constructor(
    private readonly server: string,
    endpoint: string,
    private readonly limit: number,
    /** Whether OAuth requests may reach an origin (`scheme://host:port`) besides the endpoint's. */
    private readonly allowed: (origin: string) => boolean = () => false,
    private readonly base: FetchLike = (input, init) => fetch(input, init),
  ) {
    this.endpoint = pathOf(endpoint);
    this.own = new URL(endpoint).origin;
  }

  readonly fetch: FetchLike = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (pathOf(url) === this.endpoint) {
      const response = await this.base(input, init);
      if (response.status === 401 && carriesToken(input, init) && !nonceChallenge(response)) this.tokenRefused?.();
      return response;
    }
    this.checkOrigin(url, 'to reach');
    let response = await this.base(input, { ...init, redirect: 'manual' });
    let at = url;
    for (let hops = 0; isRedirect(response.status); hops++) {
      const location = response.headers.get('location');
      await response.body?.cancel().catch(() => undefined);
      if (location === null || hops === MAX_REDIRECTS) return new Response(null, { status: 502, statusText: 'redirect not followed' });
      at = new URL(location, at).href;
      this.checkOrigin(at, `a redirect from ${originOf(url)} to`);
      // As fetch would: 303, and 301/302 of a POST, go on as a GET without the body.
      const keep = response.status === 307 || response.status === 308 || (init?.method ?? 'GET').toUpperCase() === 'GET';
      const next: RequestInit = { ...init, redirect: 'manual' };
      if (!keep) {
        delete next.body;
        next.method = 'GET';
      }
      response = await this.base(at, next);
    }
    return this.checked(at, await this.bounded(at, response));
  };

  private checkOrigin(url: string, how: string): void {
    const origin = originOf(url);
    if (origin === this.own || this.allowed(origin)) return;
    this.tripped = new McpOAuthOriginError(this.server, origin, how);
    throw this.tripped;
  }

  /** Authorization-server metadata whose `issuer` is not the one its address was made from is refused (RFC 8414, 3.3). */
  private async checked(url: string, response: Response): Promise<Response> {
    const expected = issuerOf(url);
    if (expected === undefined || !response.ok) return response;
    let issuer: unknown;
    try {
      issuer = (JSON.parse(await response.clone().text()) as { issuer?: unknown }).issuer;
    } catch {
      return response; // not JSON: the SDK says so itself
    }
    if (typeof issuer === 'string' && issuerMatches(issuer, expected)) return response;
    this.tripped = new McpOAuthIssuerError(this.server, pathOf(url), typeof issuer === 'string' ? issuer : String(issuer));
    throw this.tripped;
  }

  private async bounded(url: string, response: Response): Promise<Response> {
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > this.limit) {
      await response.body?.cancel().catch(() => undefined);
      throw this.trip(url);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (response.body) {
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > this.limit) {
          await reader.cancel().catch(() => undefined);
          throw this.trip(url);
        }
        chunks.push(value);
      }
    }
    const headers = new Headers(response.headers);
    headers.delete('content-encoding');
    headers.delete('content-length');
    // A null-body status (204, 304) takes no body, not even an empty one.
    const body = response.status === 204 || response.status === 304 ? null : Buffer.concat(chunks);
    return new Response(body, { status: response.status, statusText: response.statusText, headers });
  }

  private trip(url: string): McpOAuthResponseTooLargeError {
    this.tripped = new McpOAuthResponseTooLargeError(this.server, pathOf(url), this.limit);
    return this.tripped;
  }
}

function carriesToken(input: string | URL | Request, init: RequestInit | undefined): boolean {
  return new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)).has('authorization');
}

/** A `use_dpop_nonce` challenge (RFC 9449 section 9) asks for a nonce, not for another token. */
function nonceChallenge(response: Response): boolean {
  return /error\s*=\s*"?use_dpop_nonce/i.test(response.headers.get('www-authenticate') ?? '');
}

function isRedirect(status: number): boolean {
  return status === 301 || status === 302 || status === 303 || status === 307 || status === 308;
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an unreadable URL';
  }
}

const AS_METADATA = '/.well-known/oauth-authorization-server';
const OIDC_METADATA = '/.well-known/openid-configuration';

/**
 * The issuer an authorization-server metadata address was made from (RFC 8414 inserts the
 * well-known segment before the issuer's path; OpenID Connect inserts it or appends it), or
 * `undefined` for any other address.
 */
function issuerOf(url: string): string | undefined {
  const { origin, pathname } = new URL(url);
  for (const prefix of [AS_METADATA, OIDC_METADATA])
    if (pathname === prefix || pathname.startsWith(`${prefix}/`)) return origin + pathname.slice(prefix.length);
  if (pathname.endsWith(OIDC_METADATA)) return origin + pathname.slice(0, -OIDC_METADATA.length);
  return undefined;
}

/**
 * The issuer is the one the address was made from; at an origin's root it may carry a path
 * too, on that origin: a server without protected-resource metadata (MCP 2025-03-26) has its
 * root metadata fetched with no issuer known beforehand, and names its own (`/oauth`).
 */
function issuerMatches(issuer: string, expected: string): boolean {
  if (trimSlash(issuer) === trimSlash(expected)) return true;
  const root = new URL(expected);
  if (root.pathname !== '/') return false;
  try {
    return new URL(issuer).origin === root.origin;
  } catch {
    return false;
  }
}

function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

/** A URL without its query and fragment: what is compared, and what an error may name. */
function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.split(/[?#]/)[0] ?? '';
  }
}
