import type { IncomingMessage, ServerResponse } from 'node:http';

/** The largest webhook body a channel reads (Slack's interactive payloads are far smaller). */
export const MAX_WEBHOOK_BYTES = 1_000_000;

/**
 * A node:http route (`(req, res)`, as Express and Nest take too) over a web handler: the raw
 * body is kept byte for byte, since the platform's signature is over exactly those bytes.
 */
export function nodeRoute(handle: (request: Request) => Promise<Response>): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
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
      if (res.headersSent) return;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, item);
      }
      const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
      const method = req.method ?? 'POST';
      const body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.concat(chunks);
      handle(new Request(url, { method, headers, ...(body ? { body } : {}) }))
        .then(async (response) => {
          const headersOut: Record<string, string> = {};
          response.headers.forEach((value, name) => (headersOut[name] = value));
          res.writeHead(response.status, headersOut).end(Buffer.from(await response.arrayBuffer()));
        })
        .catch(() => {
          if (!res.headersSent) res.writeHead(500).end('the channel could not handle this request');
        });
    });
  };
}
