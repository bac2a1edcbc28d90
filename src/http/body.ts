import { ModelResponseTooLargeError } from '../errors';
import type { Reply, ReplyHeaders } from './transport';

/**
 * Reads a whole body as text, refusing it once more than `limit` bytes have come: a
 * `content-length` over the limit is refused before reading, and a body without one is
 * counted while it arrives (decoded, so a compressed body cannot inflate past it), so
 * memory stays near the limit whatever the server sends.
 */
export async function readCapped(provider: string, reply: Reply, limit: number, option: string): Promise<string> {
  if (declaredLength(reply.headers) > limit) {
    await reply.discard();
    throw new ModelResponseTooLargeError(provider, 'a response body', limit, option);
  }
  const text = await reply.text(limit);
  if (text === undefined) throw new ModelResponseTooLargeError(provider, 'a response body', limit, option);
  return text;
}

/** The `content-length` a response declares, or -1 when it declares none (or nonsense). */
export function declaredLength(headers: ReplyHeaders): number {
  const header = headers.get('content-length');
  const length = header === null ? Number.NaN : Number(header);
  return Number.isFinite(length) ? length : -1;
}

/**
 * Every byte of `body`, or `undefined` once more than `limit` have come (the rest is not read):
 * what a `fetch` reply reads when its length is not known up front.
 */
export async function readStreamCapped(body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) return undefined;
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  // A fetch stream's chunks are ArrayBuffer-backed.
  return concatChunks(chunks, total) as Uint8Array<ArrayBuffer>;
}

/** `chunks` (of `total` bytes) as one array; one chunk, the common case, is returned without a copy. */
export function concatChunks(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}
