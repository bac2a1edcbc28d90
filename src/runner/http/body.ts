import { ModelResponseTooLargeError } from '../../errors';

/**
 * Reads a whole body as text, refusing it once more than `limit` bytes have come: a
 * `content-length` over the limit is refused before reading, and a body without one is
 * counted while it streams, so memory stays near the limit whatever the server sends.
 */
export async function readCapped(provider: string, response: Response, limit: number, option: string): Promise<string> {
  if (declaredLength(response) > limit) {
    await discard(response);
    throw new ModelResponseTooLargeError(provider, 'a response body', limit, option);
  }
  if (!response.body) return '';
  // A declared length within the limit, not compressed, bounds the body by itself (HTTP/1.1
  // framing ends it there): let undici read it in one go, without a chunk loop here.
  if (declaredLength(response) >= 0 && isIdentity(response)) return response.text();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) throw new ModelResponseTooLargeError(provider, 'a response body', limit, option);
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return new TextDecoder().decode(concat(chunks, total));
}

/**
 * Reads at most `limit` bytes of an error body (enough for the provider's message) and
 * drops the rest unread, so a huge error body costs `limit` bytes per attempt, not its size.
 */
export async function readPrefix(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
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
  return new TextDecoder().decode(concat(chunks, total));
}

/** Releases a body that will not be read. */
export async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined);
}

function declaredLength(response: Response): number {
  const header = response.headers.get('content-length');
  const length = header === null ? Number.NaN : Number(header);
  return Number.isFinite(length) ? length : -1;
}

/** No content coding: the bytes read are the bytes declared (a compressed body can inflate past its length). */
function isIdentity(response: Response): boolean {
  const coding = response.headers.get('content-encoding');
  return coding === null || coding.trim().toLowerCase() === 'identity' || coding.trim() === '';
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const all = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}
