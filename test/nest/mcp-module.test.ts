/**
 * ToolnexusMcpModule in a Nest 12 app on Express (issue 45, "the chat, inbox, A2A and MCP
 * modules serve that runner"): serveMcp's Streamable HTTP endpoint on Nest's own server, over
 * the module's coordinator, so its discovered `@Tool` providers, its store and its answer
 * policy. Read by the MCP SDK's own client over real HTTP on 127.0.0.1, with Nest's default
 * JSON body parser in front of it; a request without a principal is 401, another Host 403.
 * The same endpoint speaks MCP 2026-07-28 (issue 46) to the SDK's v2 client: a refund only a
 * manager may approve is an MRTR round trip pointing at the inbox, through the module's options.
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsInt, IsString, Min } from 'class-validator';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Tool, success } from 'toolnexus-ts';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusMcpModule, ToolnexusModule } from 'toolnexus-ts/nest';

class OrderArgs {
  @IsString() order!: string;
}

class RefundArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) cents!: number;
}

@Injectable()
class Orders {
  statusOf(order: string): string {
    return `${order} shipped`;
  }
}

@Injectable()
@Tool({ name: 'lookup_order', description: 'Looks an order up', args: OrderArgs })
class LookupOrderTool {
  constructor(private readonly orders: Orders) {}
  run(args: OrderArgs) {
    return success({ status: this.orders.statusOf(args.order) });
  }
}

const refunds: string[] = [];

@Injectable()
@Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: { prompt: 'Refund it?' } })
class RefundTool {
  run(args: RefundArgs) {
    refunds.push(args.order);
    return success({ refunded: args.order });
  }
}

let dir: string;
let app: INestApplication;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-mcp-'));
  @Module({
    imports: [
      ToolnexusModule.forRoot({
        store: new SqliteStore(join(dir, 'mcp.db')),
        policy: rulesPolicy([{ principals: ['manager:ann'], kinds: ['approval'] }]),
      }),
      ToolnexusMcpModule.forRoot({
        authorize: (req) => (typeof req.headers['x-user'] === 'string' ? { id: req.headers['x-user'] } : undefined),
        requestStateKeys: ['nest-mcp-test-key-0123456789abcdef0123'],
        inboxUrl: (id) => `https://inbox.example.com/#${encodeURIComponent(id)}`,
        tasks: 'never',
      }),
    ],
    providers: [Orders, LookupOrderTool, RefundTool],
  })
  class AppModule {}
  app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  url = `${await app.getUrl()}/mcp`.replace('[::1]', '127.0.0.1');
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function connected(user: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { 'x-user': user } } }));
  return client;
}

it('serves the discovered tools through the module’s coordinator, on behalf of the signed-in principal', async () => {
  const client = await connected('customer:rita');
  try {
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['lookup_order', 'refund']);
    const looked = await client.callTool({ name: 'lookup_order', arguments: { order: 'o-7' } });
    expect(looked.content).toEqual([{ type: 'text', text: '{"status":"o-7 shipped"}' }]);
    // Rita may not approve her refund: it is not elicited from her, it waits in the module's store.
    await client.callTool({ name: 'refund', arguments: { order: 'o-7', cents: 500 } });
    expect(refunds).toEqual([]);
    const coordinator = app.get(ResumeCoordinator);
    const [waiting] = await coordinator.store.list({ status: 'pending' });
    expect(waiting).toMatchObject({ tool: 'refund', requestedBy: { id: 'customer:rita' } });
    await coordinator.resolve({ id: waiting!.request.id, ok: true }, undefined, { by: { id: 'manager:ann' } });
    expect(refunds).toEqual(['o-7']);
  } finally {
    await client.close();
  }
});

it('refuses a request without a principal (401) and one for another Host (403)', async () => {
  const post = (headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    });
  expect(await post({})).toBe(401);
  expect(await post({ 'x-user': 'customer:rita', host: 'evil.example' })).toBe(403);
});

it('answers a 2026-07-28 client on the same path: the refund is an MRTR round trip to the inbox, run once when the manager approved', async () => {
  const client = new ModernClient(
    { name: 'v2-client', version: '1.0.0' },
    { capabilities: { elicitation: { form: {}, url: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const asked: Array<Record<string, unknown>> = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params);
    // Rita is sent to the inbox; the manager approves there (here: through the module's coordinator).
    const id = decodeURIComponent(new URL((request.params as { url: string }).url).hash.slice(1));
    await app.get(ResumeCoordinator).resolve({ id, ok: true }, undefined, { by: { id: 'manager:ann' } });
    return { action: 'accept' };
  });
  const transport = new ModernTransport(new URL(url), { requestInit: { headers: { 'x-user': 'customer:rita' } } });
  await client.connect(transport);
  try {
    expect(transport.protocolVersion).toBe('2026-07-28');
    expect(transport.sessionId).toBeUndefined();
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['lookup_order', 'refund']);
    const looked = await client.callTool({ name: 'lookup_order', arguments: { order: 'o-8' } });
    expect(looked.content).toEqual([{ type: 'text', text: '{"status":"o-8 shipped"}' }]);
    const refunded = await client.callTool({ name: 'refund', arguments: { order: 'o-8', cents: 700 } });
    expect(refunded.content).toEqual([{ type: 'text', text: '{"refunded":"o-8"}' }]);
    expect(asked).toEqual([
      expect.objectContaining({ mode: 'url', url: expect.stringMatching(/^https:\/\/inbox\.example\.com\/#pnd-/) as string }),
    ]);
    expect(refunds.filter((order) => order === 'o-8')).toEqual(['o-8']);
  } finally {
    await client.close();
  }
});
