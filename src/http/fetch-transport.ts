import type { Attempt } from './attempt';
import { concatChunks, declaredLength, readStreamCapped } from './body';
import { refusalDetail, RequestRefused, type Reply, type ReplyHeaders, type Transport } from './transport';

/**
 * The transport over a `fetch`: the one a user passes a model (`options.fetch`: a proxy's,
 * an instrumented one, a test double), or the platform's for webhooks. Redirects are never
 * followed (`redirect: 'manual'`): the request carries the key, or a signed delivery.
 */
export class FetchTransport implements Transport {
  constructor(
    private readonly fetch: typeof globalThis.fetch,
    private readonly url: string,
  ) {}

  async send(headers: Readonly<Record<string, string>>, body: string, attempt: Attempt): Promise<Reply> {
    try {
      const response = await this.fetch(this.url, { method: 'POST', headers, body, signal: attempt.signal, redirect: 'manual' });
      return new FetchReply(response);
    } catch (error) {
      if (isLocalRefusal(error, attempt.signal)) throw new RequestRefused(refusalDetail(error));
      throw error;
    }
  }
}

class FetchReply implements Reply {
  readonly status: number;
  readonly statusText: string;
  readonly headers: ReplyHeaders;
  readonly isRedirect: boolean;

  constructor(private readonly response: Response) {
    this.status = response.status;
    this.statusText = response.statusText;
    this.headers = response.headers;
    // `opaqueredirect` is what a browser's fetch gives in manual mode: no status, no headers.
    this.isRedirect = (response.status >= 300 && response.status < 400) || response.type === 'opaqueredirect';
  }

  async text(limit: number): Promise<string | undefined> {
    if (!this.response.body) return '';
    // A declared length within the limit, not compressed, bounds the body by itself (HTTP/1.1
    // framing ends it there): let fetch read it in one go, without a chunk loop here.
    if (declaredLength(this.headers) >= 0 && isIdentity(this.headers)) return this.response.text();
    const bytes = await readStreamCapped(this.response.body as ReadableStream<Uint8Array>, limit);
    return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
  }

  async prefix(limit: number): Promise<string> {
    if (!this.response.body) return '';
    const reader = (this.response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      while (total < limit) {
        const { done, value } = await reader.read();
        if (done) break;
        const room = limit - total;
        const kept = value.byteLength > room ? value.subarray(0, room) : value;
        chunks.push(kept);
        total += kept.byteLength;
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    return new TextDecoder().decode(concatChunks(chunks, total));
  }

  chunks(): ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> {
    return (this.response.body as ReadableStream<Uint8Array> | null) ?? NO_BYTES;
  }

  async discard(): Promise<void> {
    await this.response.body?.cancel().catch(() => undefined);
  }
}

/** The chunks of a body that has none. */
const NO_BYTES: AsyncIterable<Uint8Array> = { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) };

/**
 * A `fetch` that rejected without touching the network: undici's network failures are
 * `TypeError('fetch failed')` with a cause, aborts are the signal's; anything else thrown
 * as a TypeError (an invalid header value, an unparseable URL) was refused locally, and
 * will be refused again on every retry.
 */
function isLocalRefusal(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return false;
  if (!(error instanceof TypeError) && (error as { name?: unknown } | null)?.name !== 'TypeError') return false;
  const { message, cause } = error as { message?: unknown; cause?: unknown };
  return message !== 'fetch failed' && cause === undefined;
}

/** No content coding: the bytes read are the bytes declared (a compressed body can inflate past its length). */
function isIdentity(headers: ReplyHeaders): boolean {
  const coding = headers.get('content-encoding');
  return coding === null || coding.trim().toLowerCase() === 'identity' || coding.trim() === '';
}
