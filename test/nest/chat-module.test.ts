/**
 * ToolnexusChatModule in a Nest app on Express: POST /api/chat streams the UI message stream
 * of a run in the principal's session (read by ai@7's own client), refuses without a principal;
 * GET /api/chat?id= gives the principal's stored thread back; GET /api/chat/<id>/stream
 * reattaches to the chat's run (docs/chat.md, "Reconnecting") under the same principal.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { CHAT_STREAM_HEADER } from 'toolnexus-ts/chat';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusChatModule, ToolnexusModule, ToolnexusModuleError } from 'toolnexus-ts/nest';
import { chatModel } from '../fixtures/chat/agent';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

let dir: string;
let model: MockServer;
let app: INestApplication;
let store: SqliteStore;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-chat-'));
  model = await startMockServer(chatModel);
  store = new SqliteStore(join(dir, 'chat.db'));
  @Module({
    imports: [
      ToolnexusModule.forRoot({ model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, model: 'mock' }), store }),
      ToolnexusChatModule.forRoot({
        principal: (req) => (typeof req.headers['x-user'] === 'string' ? { id: req.headers['x-user'] } : undefined),
      }),
    ],
  })
  class AppModule {}
  app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  url = `${await app.getUrl()}/api/chat`.replace('[::1]', '127.0.0.1');
});
afterAll(async () => {
  await app.close();
  await model.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('streams a run in the principal’s session to the AI SDK client, and refuses an anonymous request', async () => {
  const ai = loadAiClient();
  const transport = new ai.DefaultChatTransport<UIMessage>({ api: url, headers: { 'x-user': 'ada' } });
  const stream = await transport.sendMessages({
    chatId: 'c1',
    messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  let final: UIMessage | undefined;
  for await (const message of ai.readUIMessageStream<UIMessage>({ stream })) final = message;
  expect(final?.parts.find((p) => p.type === 'text')).toMatchObject({ text: 'You said: hello' });
  expect((await app.get(AgentRunner).sessions?.loadSession('ada:c1'))?.messages).toHaveLength(2);
  const anonymous = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(anonymous.status).toBe(401);
  const thread = await fetch(`${url}?id=c1`, { headers: { 'x-user': 'ada' } });
  expect(await thread.json()).toEqual([
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello', state: 'done' }] },
    { id: 'stored-1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'You said: hello', state: 'done' }] },
  ]);
  expect((await fetch(`${url}?id=c1`)).status).toBe(401);
});

it('serves the reconnect of useChat({ resume: true }): the run from a position, 204 with nothing to resume, 401 without a principal', async () => {
  const posted = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': 'ada' },
    body: JSON.stringify({ id: 'c2', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }] }),
  });
  const position = posted.headers.get(CHAT_STREAM_HEADER) as string;
  expect(position).toMatch(/:0$/);
  const sent = await posted.text();
  // The run ended: from its first part, the reconnect sends exactly what the POST did.
  const again = await fetch(`${url}/c2/stream`, { headers: { 'x-user': 'ada', [CHAT_STREAM_HEADER]: position } });
  expect(again.status).toBe(200);
  expect(again.headers.get('content-type')).toContain('text/event-stream');
  expect(await again.text()).toBe(sent);
  // Nothing active: what useChat's transport reads as "nothing to resume".
  const ai = loadAiClient();
  const transport = new ai.DefaultChatTransport<UIMessage>({ api: url, headers: { 'x-user': 'ada' } });
  expect(await transport.reconnectToStream({ chatId: 'c2' })).toBeNull();
  expect((await fetch(`${url}/c2/stream`)).status).toBe(401);
  // Another principal's position is not theirs to read.
  expect((await fetch(`${url}/c2/stream`, { headers: { 'x-user': 'bob', [CHAT_STREAM_HEADER]: position } })).status).toBe(404);
});

it('needs a principal function', () => {
  expect(() => ToolnexusChatModule.forRoot({} as never)).toThrow(ToolnexusModuleError);
});
