/**
 * serveMcp's Streamable HTTP endpoint on 127.0.0.1: a stream closed mid-call is resumed by the
 * SDK client (Last-Event-ID), and everything an outsider sends is bounded or refused: other
 * Hosts and Origins (DNS rebinding), large bodies, unknown sessions, the cap on sessions.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Tool, Toolkit } from '../../src';
import { serveMcp, type McpHttpServerHandle, type McpToolContext } from '../../src/mcp';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/** A raw HTTP request, so the test can send the Host header a browser under DNS rebinding would. */
function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('serveMcp over Streamable HTTP', () => {
  let server: McpHttpServerHandle;
  const seen: { closeStream?: string } = {};

  @Tool({ name: 'poll_me', description: 'Closes its own event stream before it answers' })
  class PollMeTool {
    async run(_args: object, ctx?: McpToolContext): Promise<string> {
      seen.closeStream = typeof ctx?.mcp.closeStream;
      ctx?.mcp.closeStream?.();
      await new Promise((resolve) => setTimeout(resolve, 100));
      return 'answered after the stream closed';
    }
  }

  beforeAll(async () => {
    server = await serveMcp(new Toolkit().register(PollMeTool), {
      transport: 'http',
      maxBodyBytes: 2000,
      maxSessions: 2,
      retryIntervalMs: 50,
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it('resumes a call whose SSE stream closed mid-call: the client reconnects with Last-Event-ID and gets the result', async () => {
    const client = new Client({ name: 'poller', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const result = await client.callTool({ name: 'poll_me', arguments: {} });
      expect(seen.closeStream).toBe('function');
      expect(result.content).toEqual([{ type: 'text', text: 'answered after the stream closed' }]);
    } finally {
      await client.close();
    }
  });

  it('refuses another Host or Origin (DNS rebinding) with 403, and accepts localhost ones', async () => {
    const port = new URL(server.url).port;
    expect(await raw(server.url, { headers: { host: 'evil.example.test' }, body: INITIALIZE })).toMatchObject({ status: 403 });
    expect(await raw(server.url, { headers: { origin: 'http://evil.example.test' }, body: INITIALIZE })).toMatchObject({ status: 403 });
    const ok = await raw(server.url, { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` }, body: INITIALIZE });
    expect(ok.status).toBe(200);
  });

  it('bounds the request body, and refuses bodies that are not JSON', async () => {
    const big = await raw(server.url, {
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5000) } }),
    });
    expect(big.status).toBe(413);
    expect(JSON.parse(big.body)).toMatchObject({ error: { message: 'request body over 2000 bytes' } });
    expect(await raw(server.url, { body: '{not json' })).toMatchObject({ status: 400 });
  });

  it('answers an unknown session 404 (so a client starts a new one), and a request without one 400', async () => {
    const unknown = await raw(server.url, {
      headers: { 'mcp-session-id': 'no-such-session' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    expect(unknown.status).toBe(404);
    const none = await raw(server.url, { body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
    expect(none.status).toBe(400);
    expect(await raw(server.url.replace('/mcp', '/other'), { body: INITIALIZE })).toMatchObject({ status: 404 });
  });

  it('caps the number of open sessions (a new one takes the place of the least recently used idle one), and close() ends them', async () => {
    const other = await serveMcp(new Toolkit(), { transport: 'http', maxSessions: 1 });
    const first = new Client({ name: 'one', version: '1' });
    await first.connect(new StreamableHTTPClientTransport(new URL(other.url)));
    expect(other.sessionCount()).toBe(1);
    const second = await raw(other.url, { body: INITIALIZE });
    expect(second.status).toBe(200);
    expect(other.sessionCount()).toBe(1);
    await other.close();
    expect(other.sessionCount()).toBe(0);
    await first.close();
  });

  it('ends a session its 2025-11-25 client terminates (DELETE): its place is free, its id then unknown', async () => {
    const client = new Client({ name: 'leaving', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url));
    await client.connect(transport);
    const sessionId = transport.sessionId as string;
    const before = server.sessionCount();
    await transport.terminateSession();
    expect(server.sessionCount()).toBe(before - 1);
    const after = await raw(server.url, {
      headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
    });
    expect(after.status).toBe(404);
    await client.close();
  });
});
