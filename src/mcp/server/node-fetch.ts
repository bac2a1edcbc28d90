import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A Node request, whose JSON body serveMcp already read (and bounded), as the web-standard
 * `Request` the SDK's per-request handler takes. Aborted when the client goes away, which
 * cancels the exchange (2026-07-28 has no `notifications/cancelled` over HTTP: closing the
 * response stream is the cancellation).
 */
export function webRequestOf(req: IncomingMessage, res: ServerResponse, body: unknown): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  headers.delete('content-length');
  const aborted = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) aborted.abort();
  });
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  return new Request(url, {
    method: req.method ?? 'POST',
    headers,
    ...(req.method === 'GET' || req.method === 'HEAD' ? {} : { body: JSON.stringify(body) }),
    signal: aborted.signal,
  });
}

/** Writes a web `Response` to a Node response, streaming its body (an SSE stream stays open until it ends). */
export async function sendWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  // Headers go out now: an SSE stream's first event may be a while coming.
  res.flushHeaders();
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  res.once('close', () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
  } catch {
    // The client went away, or the stream was cancelled: nothing more to write.
  } finally {
    res.end();
  }
}
