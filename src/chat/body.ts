import type { IncomingMessage } from 'node:http';
import { ChatRequestError } from './errors';

/** Reads a web request's body as text, refusing one over `limit` bytes (413) before reading past it. */
export async function readWebBody(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
  if (!request.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = (await reader.read()) as { done: boolean; value?: Uint8Array };
    if (next.done || !next.value) break;
    const value = next.value;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const tooLarge = (limit: number) => new ChatRequestError(413, 'too_large', `the request body is larger than ${limit} bytes`);

/** The body as JSON, or 400 `bad_body`. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ChatRequestError(400, 'bad_body', 'the body is not JSON');
  }
}

/** Reads a node request's body as text, refusing one over `limit` bytes (413) before reading past it. */
export function readNodeBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    request.resume();
    return Promise.reject(tooLarge(limit));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/**
 * A web `ReadableStream` of the SSE text `texts` yields, one chunk per string, read as the page
 * reads. A page gone away (the stream cancelled) either lets the writer finish unread
 * (`'drain'`: a run goes on to its end, so its session records what ran) or stops it (`'stop'`:
 * a reconnect, which only reads).
 */
export function sseBody(texts: AsyncIterable<string>, onCancel: 'drain' | 'stop'): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = texts[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
    async cancel() {
      if (onCancel === 'stop') await iterator.return?.(undefined);
      else while (!(await iterator.next()).done);
    },
  });
}
