/**
 * The door modules (inbox, chat, MCP, A2A) in one Nest app: each provides its options under the one
 * token of DoorModule (src/nest/mount.ts), inside its own module, so each serves its own path
 * with its own options, and none at another's or at its default path.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MemoryStore } from 'toolnexus-ts/memory';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { ToolnexusA2AModule, ToolnexusChatModule, ToolnexusInboxModule, ToolnexusMcpModule, ToolnexusModule } from 'toolnexus-ts/nest';

let app: INestApplication;
let base: string;

beforeAll(async () => {
  @Module({
    imports: [
      // The model is never called: no request here starts a run.
      ToolnexusModule.forRoot({
        model: new OpenAIChatModel({ baseUrl: 'http://127.0.0.1:9/v1', model: 'unused' }),
        store: new MemoryStore(),
      }),
      ToolnexusInboxModule.forRoot({ path: 'ops/inbox', authorize: 'none-local-only' }),
      ToolnexusChatModule.forRoot({ path: 'ops/chat', principal: () => undefined }),
      ToolnexusMcpModule.forRoot({ path: 'ops/mcp', authorize: () => undefined }),
      ToolnexusA2AModule.forRoot({
        path: 'ops/a2a',
        url: 'https://agents.example.com/ops/a2a',
        description: 'the ops agent',
        authenticate: () => undefined,
        rootCard: false,
      }),
    ],
  })
  class AppModule {}
  app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
});
afterAll(async () => {
  await app.close();
});

const post = (path: string) =>
  fetch(`${base}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

it('serves each door at its own path with its own options', async () => {
  const inbox = await fetch(`${base}/ops/inbox`);
  expect(inbox.status).toBe(200);
  expect(inbox.headers.get('content-type')).toMatch(/text\/html/);
  // The chat's and the MCP endpoint's own principal functions refuse everyone.
  expect((await post('ops/chat')).status).toBe(401);
  const mcp = await post('ops/mcp');
  expect(mcp.status).toBe(401);
  expect(await mcp.text()).not.toMatch(/<html/i);
  // The A2A module's card names its own URL and description; its endpoint refuses everyone.
  const card = await fetch(`${base}/ops/a2a/.well-known/agent-card.json`);
  expect(card.status).toBe(200);
  expect(await card.json()).toMatchObject({ url: 'https://agents.example.com/ops/a2a', description: 'the ops agent' });
  expect((await post('ops/a2a')).status).toBe(401);
});

it('serves nothing at the default paths the options moved them from', async () => {
  expect((await fetch(`${base}/inbox`)).status).toBe(404);
  expect((await post('api/chat')).status).toBe(404);
  expect((await post('mcp')).status).toBe(404);
  expect((await post('a2a')).status).toBe(404);
  expect((await fetch(`${base}/.well-known/agent-card.json`)).status).toBe(404);
});
