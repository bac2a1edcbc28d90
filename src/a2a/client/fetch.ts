import { readStreamCapped } from '../../http/body';
import { expandVariables } from '../../http/variables';
import type { SecretRedactor } from '../../mcp/client/redactor';
import { A2AAgentError } from './errors';
import type { A2AEnvironment } from './options';

/**
 * The headers with `${VAR}`, `${env:VAR}` and `${VAR:-fallback}` replaced from `env`, read at
 * call time (a rotated token is picked up); every value is told to `redactor` before it is
 * sent. A missing variable is refused rather than sent empty; the error names it, never a value.
 */
export function expandHeaders(headers: Record<string, string>, env: A2AEnvironment, redactor: SecretRedactor): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(headers)) {
    out[key] = expandVariables(
      raw,
      (variable) => env[variable],
      (variable) =>
        new A2AAgentError(`header ${key} uses \${${variable}}, which is not set (write \${${variable}:-} for an explicit empty value)`),
    );
  }
  redactor.add(Object.values(out));
  return out;
}

/** What {@link boundedFetch} needs: the request headers (resolved per request), the bounds. */
export interface FetchBounds {
  fetch: typeof globalThis.fetch;
  headers: () => Record<string, string>;
  maxResponseBytes: number;
  /** One request's own limit, besides the caller's signal (the card has no other). */
  timeoutMs: number;
  /**
   * The origins the headers may go to: the card's own, and those the host listed. A card names
   * the agent's endpoint, so a card that was tampered with could name another host to collect
   * the credentials: a request elsewhere is refused before it is sent.
   */
  origins: ReadonlySet<string>;
}

/**
 * The `fetch` the SDK's card resolver and JSON-RPC transport are given: it adds the tool's
 * headers, never follows a redirect (the request carries them: a 3xx fails instead of sending
 * them to another origin), times each request out, and reads at most `maxResponseBytes` of a
 * response, failing past it instead of buffering what a hostile agent sends without end.
 * Node's fetch keeps connections alive between requests to one agent.
 */
export function boundedFetch(bounds: FetchBounds): typeof globalThis.fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers);
    const own = bounds.headers();
    if (Object.keys(own).length > 0) {
      const target = new URL(input instanceof Request ? input.url : input).origin;
      if (!bounds.origins.has(target))
        throw new A2AAgentError(
          `the agent's endpoint is at ${target}, not at the origin its card came from; its headers are not sent there (list the origin in headerOrigins to allow it)`,
        );
    }
    for (const [key, value] of Object.entries(own)) headers.set(key, value);
    const timeout = AbortSignal.timeout(bounds.timeoutMs);
    const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const response = await bounds.fetch(input, { ...init, headers, signal, redirect: 'manual' });
    if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
      await response.body?.cancel().catch(() => undefined);
      throw new A2AAgentError(
        `the agent answered HTTP ${response.status} (a redirect, not followed: it would carry the headers elsewhere)`,
      );
    }
    const body = await readBounded(response, bounds.maxResponseBytes);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

async function readBounded(response: Response, limit: number): Promise<Uint8Array<ArrayBuffer> | null> {
  if (!response.body) return null;
  const declared = Number(response.headers.get('content-length') ?? '-1');
  if (declared > limit) {
    await response.body.cancel().catch(() => undefined);
    throw tooLarge(limit);
  }
  const bytes = await readStreamCapped(response.body as ReadableStream<Uint8Array>, limit);
  if (bytes === undefined) throw tooLarge(limit);
  return bytes;
}

function tooLarge(limit: number): A2AAgentError {
  return new A2AAgentError(`the agent's response is over ${limit} bytes (maxResponseBytes); it was not read`);
}
