/**
 * Issue 32 item 20: a chat that refused a new message with 409 `busy` always said "answer or
 * wait first", also when there was nothing to answer: while another request of the chat was
 * still running, and when the last run's questions were all answered but it could not be
 * continued. The 409 must say what is true in each case. Served by ToolnexusChatModule in a
 * Nest app on Express, over real HTTP on 127.0.0.1.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, answerAs } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusChatModule, ToolnexusModule } from 'toolnexus-ts/nest';
import { chatModel, LookupOrderTool, RefundTool } from '../fixtures/chat/agent';
import { hang, json, startMockServer, type MockServer, type RecordedRequest } from '../fixtures/runner/mock-servers';

let dir: string;
let model: MockServer;
let app: INestApplication;
let store: SqliteStore;
let url: string;
/** While true the model answers 500: a model outage. */
let modelDown = false;
/** Resolved when the model is asked about "slow", which it never answers. */
let slowAsked: () => void = () => undefined;

const lastText = (req: RecordedRequest): string => {
  const messages = (req.body.messages ?? []) as Array<{ content?: unknown }>;
  const content = messages[messages.length - 1]?.content;
  return typeof content === 'string' ? content : '';
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-busy-'));
  model = await startMockServer((res, req, index) => {
    if (modelDown) return json(500, { error: { message: 'down' } })(res, req, index);
    if (lastText(req) === 'slow') {
      slowAsked();
      return hang(res, req, index);
    }
    return chatModel(res, req, index);
  });
  store = new SqliteStore(join(dir, 'chat.db'));
  @Module({
    imports: [
      ToolnexusModule.forRoot({
        model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
        store,
      }),
      // A message to a chat whose run is in flight is refused here, as before steering (issue 49's default steers it).
      ToolnexusChatModule.forRoot({ principal: () => ({ id: 'ada' }), whileRunning: 'busy' }),
    ],
  })
  class AppModule {}
  app = await NestFactory.create(AppModule, { logger: false });
  // The fixture's tools take a ledger path, not Nest providers: registered on the module's Toolkit.
  app.get(Toolkit).register(new RefundTool(join(dir, 'ledger')), new LookupOrderTool());
  await app.listen(0, '127.0.0.1');
  url = `${await app.getUrl()}/api/chat`.replace('[::1]', '127.0.0.1');
});
afterAll(async () => {
  // The model first: it ends the request it left hanging, so no run of the app waits on it.
  await model.close();
  await app.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const say = (chatId: string, text: string, signal?: AbortSignal) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: chatId, messages: [{ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] }] }),
    ...(signal ? { signal } : {}),
  });

async function refused(chatId: string, text: string): Promise<string> {
  const response = await say(chatId, text);
  expect(response.status).toBe(409);
  return response.text();
}

it('while another request of the chat runs, says so, with nothing to answer', async () => {
  const asked = new Promise<void>((resolve) => (slowAsked = resolve));
  const abort = new AbortController();
  const first = say('c-running', 'slow', abort.signal).then((response) => response.text());
  await asked;
  const body = await refused('c-running', 'hello');
  expect(body).toMatch(/still running/);
  expect(body).not.toMatch(/answer/);
  abort.abort();
  await first.catch(() => undefined);
});

it('while a question is open, says to answer it', async () => {
  const asked = await say('c-open', 'refund o-1 100');
  expect(await asked.text()).toContain('approval-request');
  const body = await refused('c-open', 'hello');
  expect(body).toMatch(/answer its open request first/);
  expect(body).not.toMatch(/or wait/);
});

it('when every question is answered but the run cannot be continued, does not ask for an answer', async () => {
  expect(await (await say('c-stuck', 'refund o-2 200')).text()).toContain('approval-request');
  const runner = app.get(AgentRunner);
  const runId = (await runner.sessions?.loadSession('ada:c-stuck'))?.active?.runId;
  const [call] = await store.list({ runId: runId as string, status: 'pending' });
  // Answered through the coordinator alone (as the inbox or CLI without a runner does): settled, not continued.
  await answerAs(runner.coordinator, { id: call!.request.id, ok: true }, { by: { id: 'ada' } });
  modelDown = true;
  try {
    const body = await refused('c-stuck', 'hello');
    expect(body).toMatch(/could not be continued/);
    expect(body).not.toMatch(/answer or wait/);
  } finally {
    modelDown = false;
  }
});
