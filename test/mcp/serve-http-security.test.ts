/**
 * serveMcp over Streamable HTTP on 127.0.0.1, attacked the way issue 20 found it open: Host and
 * Origin checked whatever the bind address (0.0.0.0, `::ffff:127.0.0.1`, a LAN address), an
 * `authorize` hook with bearer tokens, sessions that expire when their client walks away
 * (a fake clock), event stores bounded in bytes, and elicitation answers checked against the
 * form asked. See docs/mcp.md ("HTTP: who may connect") and docs/deploying.md ("Security").
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Tool, Toolkit } from '../../src';
import { ResumeCoordinator } from '../../src/suspension';
import { bearerTokens } from '../../src/inbox';
import { serveMcp, type McpHttpServerHandle, type McpToolContext } from '../../src/mcp';
import { BoundedEventStore, EventBudget } from '../../src/mcp/server/event-store';
import { defaultAllowedHosts } from '../../src/mcp/server/http-guard';
import { mcpTestToolkit } from '../fixtures/mcp-tools';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

interface RawReply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A raw HTTP request to 127.0.0.1, with whatever Host and Origin a hostile page would send. */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawReply> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port,
        path: target.pathname,
        method: options.method ?? 'POST',
        headers: {
          host: target.host,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

async function connected(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

describe('serveMcp over HTTP checks Host and Origin whatever it is bound to', () => {
  it.each(['0.0.0.0', '::ffff:127.0.0.1', '127.0.0.1'])(
    'bound to %s: a DNS-rebinding Host and a cross-origin Origin are refused 403; its own names open a session',
    async (bindHost) => {
      const server = await serveMcp(new Toolkit(), { transport: 'http', host: bindHost });
      try {
        const port = new URL(server.url).port;
        const rebinding = await raw(server.url, { headers: { host: `attacker.example.test:${port}` }, body: INITIALIZE });
        expect(rebinding.status).toBe(403);
        expect(JSON.parse(rebinding.body)).toMatchObject({ error: { message: 'host not allowed' } });
        const crossOrigin = await raw(server.url, { headers: { origin: 'https://attacker.example.test' }, body: INITIALIZE });
        expect(crossOrigin.status).toBe(403);
        expect(JSON.parse(crossOrigin.body)).toMatchObject({ error: { message: 'origin not allowed' } });
        expect((await raw(server.url, { headers: { origin: 'null' }, body: INITIALIZE })).status).toBe(403);
        // Same-origin pages and the loopback names pass; the SDK client connects to the url given.
        expect(
          (await raw(server.url, { headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` }, body: INITIALIZE })).status,
        ).toBe(200);
        const client = await connected(server.url);
        expect((await client.listTools()).tools).toEqual([]);
        await client.close();
        expect(server.sessionCount()).toBeLessThanOrEqual(2);
      } finally {
        await server.close();
      }
    },
  );

  it('a LAN address or a wildcard bind accepts, by default, only its own address and the loopback names', () => {
    expect(defaultAllowedHosts('192.168.1.5', 3000)).toEqual(['localhost:3000', '127.0.0.1:3000', '[::1]:3000', '192.168.1.5:3000']);
    expect(defaultAllowedHosts('0.0.0.0', 3000)).toEqual(['localhost:3000', '127.0.0.1:3000', '[::1]:3000']);
    expect(defaultAllowedHosts('::', 80)).toEqual(['localhost', 'localhost:80', '127.0.0.1', '127.0.0.1:80', '[::1]', '[::1]:80']);
    expect(defaultAllowedHosts('::ffff:127.0.0.1', 3000)).toContain('[::ffff:7f00:1]:3000');
  });

  it('allowedHosts replaces the default list; allowedOrigins lets one other site in', async () => {
    const server = await serveMcp(new Toolkit(), {
      transport: 'http',
      host: '0.0.0.0',
      allowedHosts: ['mcp.internal.example'],
      allowedOrigins: ['https://console.example'],
    });
    try {
      const port = new URL(server.url).port;
      expect((await raw(server.url, { headers: { host: 'mcp.internal.example' }, body: INITIALIZE })).status).toBe(200);
      expect((await raw(server.url, { headers: { host: `127.0.0.1:${port}` }, body: INITIALIZE })).status).toBe(403);
      const fromConsole = { host: 'mcp.internal.example', origin: 'https://console.example' };
      expect((await raw(server.url, { headers: fromConsole, body: INITIALIZE })).status).toBe(200);
      const fromElsewhere = { host: 'mcp.internal.example', origin: 'https://mcp.internal.example' };
      expect((await raw(server.url, { headers: fromElsewhere, body: INITIALIZE })).status).toBe(403);
    } finally {
      await server.close();
    }
  });
});

describe('serveMcp over HTTP with authorize', () => {
  const alice = 'alice-token-0123456789abcdef';
  const bob = 'bob-token-0123456789abcdef';
  const seen: Array<string | undefined> = [];

  @Tool({ name: 'whoami', description: 'Says who opened the session' })
  class WhoAmI {
    run(_args: object, ctx?: McpToolContext): string {
      seen.push(ctx?.mcp.principal?.id);
      return ctx?.mcp.principal?.id ?? 'nobody';
    }
  }

  let server: McpHttpServerHandle;
  beforeAll(async () => {
    server = await serveMcp(new Toolkit().register(WhoAmI), {
      transport: 'http',
      authorize: bearerTokens([
        { token: alice, principal: { id: 'alice' } },
        { token: bob, principal: { id: 'bob' } },
      ]),
    });
  });
  afterAll(() => server.close());

  it('refuses a request without a token or with a wrong one: 401 with WWW-Authenticate, no session opened', async () => {
    const none = await raw(server.url, { body: INITIALIZE });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const wrong = await raw(server.url, { headers: { authorization: 'Bearer not-a-token-of-anyone' }, body: INITIALIZE });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain('not-a-token');
    expect(server.sessionCount()).toBe(0);
  });

  it('lets a token holder in, tells the tool who it is, and keeps the session to them', async () => {
    const client = await connected(server.url, { authorization: `Bearer ${alice}` });
    try {
      expect(await client.callTool({ name: 'whoami', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'alice' }] });
      const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId as string;
      const ping = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'ping' });
      const asBob = await raw(server.url, {
        headers: { authorization: `Bearer ${bob}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' },
        body: ping,
      });
      expect(asBob.status).toBe(403);
      const asNobody = await raw(server.url, { headers: { 'mcp-session-id': sessionId }, body: ping });
      expect(asNobody.status).toBe(401);
      expect(seen).toEqual(['alice']);
    } finally {
      await client.close();
    }
  });

  it('answers 500 without the message when authorize throws', async () => {
    const failing = await serveMcp(new Toolkit(), {
      transport: 'http',
      authorize: () => {
        throw new Error('directory down: secret detail');
      },
    });
    try {
      const reply = await raw(failing.url, { body: INITIALIZE });
      expect(reply.status).toBe(500);
      expect(reply.body).not.toContain('secret detail');
    } finally {
      await failing.close();
    }
  });
});

describe('serveMcp over HTTP expires abandoned sessions', () => {
  it('gives the places of clients that walked away back after sessionIdleMs (a fake clock)', async () => {
    let now = 1_000_000;
    const server = await serveMcp(new Toolkit(), { transport: 'http', maxSessions: 2, sessionIdleMs: 60_000, clock: { now: () => now } });
    try {
      const first = await raw(server.url, { body: INITIALIZE });
      const second = await raw(server.url, { body: INITIALIZE });
      expect([first.status, second.status]).toEqual([200, 200]);
      // Any request finds the sessions that expired (a full server would also make room by closing the least recently used).
      const unknown = { headers: { 'mcp-session-id': 'no-such-session' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) };
      now += 59_999;
      expect((await raw(server.url, unknown)).status).toBe(404);
      expect(server.sessionCount()).toBe(2);
      now += 1;
      expect((await raw(server.url, unknown)).status).toBe(404);
      expect(server.sessionCount()).toBe(0);
      expect((await raw(server.url, { body: INITIALIZE })).status).toBe(200);
      const stale = await raw(server.url, {
        headers: { 'mcp-session-id': first.headers['mcp-session-id'] as string },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
      expect(stale.status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('keeps a session whose client is still using it', async () => {
    let now = 0;
    const server = await serveMcp(new Toolkit(), { transport: 'http', maxSessions: 1, sessionIdleMs: 1000, clock: { now: () => now } });
    const client = await connected(server.url);
    try {
      for (let step = 0; step < 3; step++) {
        now += 900;
        await client.ping();
      }
      now += 900;
      await raw(server.url, {
        headers: { 'mcp-session-id': 'no-such-session' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
      expect(server.sessionCount()).toBe(1);
      await expect(client.ping()).resolves.toEqual({});
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('serveMcp over HTTP bounds its event stores in bytes', () => {
  @Tool({ name: 'big', description: 'Answers 64 KiB of text' })
  class BigTool {
    run(): string {
      return 'x'.repeat(64 * 1024);
    }
  }

  it('keeps at most maxEventBytesPerSession of one session and maxEventBytes of all', async () => {
    const server = await serveMcp(new Toolkit().register(BigTool), {
      transport: 'http',
      maxEventBytesPerSession: 200_000,
      maxEventBytes: 300_000,
    });
    const clients = [await connected(server.url), await connected(server.url)];
    try {
      for (let round = 0; round < 6; round++) {
        for (const client of clients) {
          const result = await client.callTool({ name: 'big', arguments: {} });
          expect((result.content as Array<{ text: string }>)[0]?.text).toHaveLength(64 * 1024);
        }
      }
      expect(server.eventBytes()).toBeGreaterThan(64 * 1024);
      expect(server.eventBytes()).toBeLessThanOrEqual(300_000);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await server.close();
    }
    expect(server.eventBytes()).toBe(0);
  });

  it('drops its own oldest events first, and keeps none larger than its cap', async () => {
    const budget = new EventBudget(1000);
    const one = new BoundedEventStore({ maxEvents: 100, maxBytes: 600, budget });
    const other = new BoundedEventStore({ maxEvents: 100, maxBytes: 600, budget });
    const message = (size: number) => ({ jsonrpc: '2.0' as const, method: 'n', params: { pad: 'x'.repeat(size) } });
    const first = await one.storeEvent('s1', message(200));
    await one.storeEvent('s1', message(200));
    expect(await one.getStreamIdForEventId(first)).toBe('s1');
    await one.storeEvent('s1', message(200));
    expect(await one.getStreamIdForEventId(first)).toBeUndefined();
    expect(one.size()).toBeLessThanOrEqual(600);
    await other.storeEvent('s2', message(200));
    await other.storeEvent('s2', message(200));
    const third = await other.storeEvent('s2', message(200));
    expect(budget.used).toBeLessThanOrEqual(1000);
    expect(await other.getStreamIdForEventId(third)).toBe('s2');
    const huge = await one.storeEvent('s1', message(5000));
    expect(await one.getStreamIdForEventId(huge)).toBeUndefined();
    one.clear();
    other.clear();
    expect(budget.used).toBe(0);
  });
});

describe('serveMcp checks elicitation answers against the form asked', () => {
  it.each([['a key the form did not ask for', { color: 'red', admin: true }, 'admin is not a field of this form']])(
    'refuses %s: nothing runs, and the suspension still waits',
    async (_case, content, said) => {
      const coordinator = new ResumeCoordinator({ toolkit: mcpTestToolkit() });
      const server = await serveMcp(coordinator, { transport: 'http' });
      const client = new Client({ name: 'hostile', version: '1' }, { capabilities: { elicitation: { form: {} } } });
      client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: content as unknown as Record<string, string> }));
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      try {
        const result = await client.callTool({ name: 'ask_color', arguments: {} });
        expect(result.isError).toBe(true);
        const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
        expect(text).toContain(`the answer was refused: ${said}`);
        expect(JSON.parse((await coordinator.toolkit.execute('runs', {})).output)).toMatchObject({ color: 0 });
        const id = /Suspension id: (\S+)\./.exec(text)?.[1] as string;
        expect((await coordinator.get(id))?.status).toBe('pending');
      } finally {
        await client.close();
        await server.close();
      }
    },
  );

  it('refuses keys an approval form (no fields) did not ask for', async () => {
    const coordinator = new ResumeCoordinator({ toolkit: mcpTestToolkit() });
    const server = await serveMcp(coordinator, { transport: 'http' });
    const client = new Client({ name: 'hostile', version: '1' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { customer: 'mallory' } }));
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const result = await client.callTool({ name: 'refund', arguments: { customer: 'ann' } });
      expect((result.content as Array<{ text: string }>)[0]?.text).toContain('customer is not a field of this form');
      expect(JSON.parse((await coordinator.toolkit.execute('runs', {})).output)).toMatchObject({ refund: 0 });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
