/**
 * serveMcp over Streamable HTTP when every session place is taken (issue 32, item 10): a new
 * client still gets in, by closing the least recently used session with no call in flight, so
 * nobody who reaches the port can lock every MCP client out by opening `maxSessions` sessions
 * and leaving them. The official SDK client against a real port on 127.0.0.1.
 */
import { request as httpRequest } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Tool, Toolkit } from '../../src';
import { bearerTokens } from '../../src/inbox';
import { serveMcp, type McpToolContext } from '../../src/mcp';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const PING = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

/** A raw POST: how an attacker fills the places, and how the test asks about one session id. */
function raw(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; sessionId?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => {
          const sessionId = res.headers['mcp-session-id'];
          resolve({ status: res.statusCode ?? 0, ...(typeof sessionId === 'string' ? { sessionId } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function connected(url: string, headers: Record<string, string> = {}): Promise<{ client: Client; sessionId: string }> {
  const client = new Client({ name: 'test', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return { client, sessionId: transport.sessionId as string };
}

/** Calls that stay in flight until the test lets them go. */
class Gate {
  private readonly releases: Array<() => void> = [];
  private readonly watchers: Array<() => void> = [];
  wait(): Promise<void> {
    const released = new Promise<void>((resolve) => this.releases.push(resolve));
    for (const watcher of this.watchers.splice(0)) watcher();
    return released;
  }
  /** Resolves once `count` calls are waiting. */
  async entered(count = 1): Promise<void> {
    while (this.releases.length < count) await new Promise<void>((resolve) => this.watchers.push(resolve));
  }
  open(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

let gate = new Gate();

@Tool({ name: 'echo', description: 'Answers at once' })
class EchoTool {
  run(): string {
    return 'echoed';
  }
}

@Tool({ name: 'slow', description: 'Answers when the test opens the gate' })
class SlowTool {
  async run(): Promise<string> {
    await gate.wait();
    return 'slow done';
  }
}

@Tool({ name: 'slow_polled', description: 'Closes its stream (SSE polling), then answers when the test opens the gate' })
class SlowPolledTool {
  async run(_args: object, ctx?: McpToolContext): Promise<string> {
    ctx?.mcp.closeStream?.();
    await gate.wait();
    return 'polled done';
  }
}

const toolkit = () => new Toolkit().register(EchoTool).register(SlowTool).register(SlowPolledTool);
const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as Array<{ text: string }>)[0]?.text;

beforeEach(() => {
  gate = new Gate();
});

describe('serveMcp over HTTP with every session place taken', () => {
  it('lets a new SDK client in by closing the least recently used idle session, which then gets 404', async () => {
    const server = await serveMcp(toolkit(), { transport: 'http', maxSessions: 3 });
    const clients: Client[] = [];
    try {
      // Someone fills every place and walks away.
      const squatted = [await raw(server.url, INITIALIZE), await raw(server.url, INITIALIZE)];
      expect(squatted.map((reply) => reply.status)).toEqual([200, 200]);
      const used = await connected(server.url);
      clients.push(used.client);
      expect(server.sessionCount()).toBe(3);

      const late = await connected(server.url);
      clients.push(late.client);
      expect(text(await late.client.callTool({ name: 'echo', arguments: {} }))).toBe('echoed');
      expect(server.sessionCount()).toBe(3);
      // The oldest squatter gave its place; the client that has been used since keeps its own.
      expect((await raw(server.url, PING, { 'mcp-session-id': squatted[0]!.sessionId! })).status).toBe(404);
      expect(text(await used.client.callTool({ name: 'echo', arguments: {} }))).toBe('echoed');

      // Again and again: each new client gets in, the least recently used idle one goes.
      const again = await connected(server.url);
      clients.push(again.client);
      expect((await raw(server.url, PING, { 'mcp-session-id': squatted[1]!.sessionId! })).status).toBe(404);
      expect(server.sessionCount()).toBe(3);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await server.close();
    }
  });

  it.each([
    ['on its open request stream', 'slow', 'slow done'],
    ['after its stream closed (SSE polling)', 'slow_polled', 'polled done'],
  ])('never closes a session with a call in flight %s: a new client gets 503 instead', async (_how, tool, answer) => {
    const server = await serveMcp(toolkit(), { transport: 'http', maxSessions: 1, retryIntervalMs: 20 });
    const busy = await connected(server.url);
    const clients = [busy.client];
    try {
      const call = busy.client.callTool({ name: tool, arguments: {} });
      call.catch(() => undefined); // awaited below; a failed expectation must not leave it unhandled
      await gate.entered();
      expect((await raw(server.url, INITIALIZE)).status).toBe(503);
      expect((await raw(server.url, PING, { 'mcp-session-id': busy.sessionId })).status).toBe(200);
      gate.open();
      expect(text(await call)).toBe(answer);

      // Answered, the session is idle again and gives its place to the next client.
      const next = await connected(server.url);
      clients.push(next.client);
      expect(text(await next.client.callTool({ name: 'echo', arguments: {} }))).toBe('echoed');
      expect((await raw(server.url, PING, { 'mcp-session-id': busy.sessionId })).status).toBe(404);
    } finally {
      gate.open();
      await Promise.all(clients.map((client) => client.close()));
      await server.close();
    }
  });

  it('bounds the sessions of one principal: its own idle ones make room, its busy ones do not take everyone else’s', async () => {
    const mallory = 'mallory-token-0123456789';
    const alice = 'alice-token-0123456789';
    const server = await serveMcp(toolkit(), {
      transport: 'http',
      maxSessions: 3,
      maxSessionsPerPrincipal: 2,
      authorize: bearerTokens([
        { token: mallory, principal: { id: 'mallory' } },
        { token: alice, principal: { id: 'alice' } },
      ]),
    });
    const asMallory = { authorization: `Bearer ${mallory}` };
    const asAlice = { authorization: `Bearer ${alice}` };
    const clients: Client[] = [];
    try {
      const first = await connected(server.url, asMallory);
      const second = await connected(server.url, asMallory);
      clients.push(first.client, second.client);
      // A third of mallory's own closes mallory's least recently used one, not anyone else's place.
      const third = await connected(server.url, asMallory);
      clients.push(third.client);
      expect((await raw(server.url, PING, { ...asMallory, 'mcp-session-id': first.sessionId })).status).toBe(404);
      expect(server.sessionCount()).toBe(2);

      // Both of mallory's sessions busy: mallory gets no more, alice still gets in.
      const calls = [second, third].map(({ client }) => client.callTool({ name: 'slow', arguments: {} }));
      for (const call of calls) call.catch(() => undefined); // awaited below; a failed expectation must not leave one unhandled
      await gate.entered(2);
      expect((await raw(server.url, INITIALIZE, asMallory)).status).toBe(503);
      const forAlice = await connected(server.url, asAlice);
      clients.push(forAlice.client);
      expect(text(await forAlice.client.callTool({ name: 'echo', arguments: {} }))).toBe('echoed');
      gate.open();
      expect((await Promise.all(calls)).map(text)).toEqual(['slow done', 'slow done']);
    } finally {
      gate.open();
      await Promise.all(clients.map((client) => client.close()));
      await server.close();
    }
  });
});
