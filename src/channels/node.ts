import type { IncomingMessage, ServerResponse } from 'node:http';

/** The largest webhook body a channel reads (Slack's interactive payloads are far smaller). */
export const MAX_WEBHOOK_BYTES = 1_000_000;

/**
 * A node:http route (`(req, res)`, as Express and Nest take too) over a web handler: the raw
 * body is kept byte for byte, since the platform's signature is over exactly those bytes.
 */
export function nodeRoute(handle: (request: Request) => Promise<Response>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // Behind a body parser the stream is spent: its raw bytes (Nest's `rawBody: true`) are the
    // only copy a signature can be checked against; a parsed body cannot be turned back into them.
    const raw = (req as IncomingMessage & { rawBody?: unknown }).rawBody;
    if (Buffer.isBuffer(raw)) return void answer(handle, req, res, raw);
    if (req.readableEnded) {
      res
        .writeHead(500)
        .end('the request body was read before this route: mount it before any body parser, or keep the raw body (rawBody)');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_WEBHOOK_BYTES) {
        res.writeHead(413).end('request too large');
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!res.headersSent) void answer(handle, req, res, Buffer.concat(chunks));
    });
  };
}

/** Hands `body` to `handle` as a web `Request`, and writes its `Response`. */
async function answer(
  handle: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, item);
  }
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const method = req.method ?? 'POST';
  const withBody = method !== 'GET' && method !== 'HEAD';
  try {
    const response = await handle(new Request(url, { method, headers, ...(withBody ? { body } : {}) }));
    const headersOut: Record<string, string> = {};
    response.headers.forEach((value, name) => (headersOut[name] = value));
    res.writeHead(response.status, headersOut).end(Buffer.from(await response.arrayBuffer()));
  } catch {
    if (!res.headersSent) res.writeHead(500).end('the channel could not handle this request');
  }
}
