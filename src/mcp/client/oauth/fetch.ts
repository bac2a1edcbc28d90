import { McpOAuthResponseTooLargeError } from '../errors';

/** What the SDK's transports and `auth()` call to reach a server: the standard fetch's shape. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * The fetch a remote server's transport is given: requests to the MCP endpoint itself pass
 * as they are (its streams are bounded where they are read), and every other response, which
 * is OAuth's (protected-resource and authorization-server metadata, registration, tokens,
 * the IdP's token exchange), is read up to `limit` bytes and handed on whole. A longer body
 * stops the read with an {@link McpOAuthResponseTooLargeError}, kept in `tripped` too: the
 * SDK may wrap or swallow what its fetch throws, and the source reports this one instead.
 */
export class BoundedOAuthFetch {
  tripped: McpOAuthResponseTooLargeError | undefined;
  private readonly endpoint: string;

  constructor(
    private readonly server: string,
    endpoint: string,
    private readonly limit: number,
    private readonly base: FetchLike = (input, init) => fetch(input, init),
  ) {
    this.endpoint = pathOf(endpoint);
  }

  readonly fetch: FetchLike = async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const response = await this.base(input, init);
    if (pathOf(url) === this.endpoint) return response;
    return this.bounded(url, response);
  };

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

/** A URL without its query and fragment: what is compared, and what an error may name. */
function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.split(/[?#]/)[0] ?? '';
  }
}
