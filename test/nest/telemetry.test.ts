/**
 * ToolnexusModule's `telemetry` and `name` options in a Nest app serving the chat
 * (ToolnexusChatModule): the spans of the Toolkit, coordinator and runner it builds go to the
 * given provider, the agent span carries the runner's name and the chat session as the
 * conversation, and a model outage (HTTP 503 after its retries) is logged through Nest's
 * Logger with its code and status and no secret. Real Nest on Express, a real model server
 * on 127.0.0.1, SQLite, the OpenTelemetry SDK's in-memory exporter.
 */
import 'reflect-metadata';
import { Injectable, Module, type INestApplication, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ToolnexusChatModule, ToolnexusModule } from 'toolnexus-ts/nest';
import { json, openaiCalls, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { only, startOtel, type Otel } from '../fixtures/telemetry/sdk';

const API_KEY = 'sk-canary-0d9e4f1b';

@Injectable()
@Tool({ name: 'ping', description: 'Answers pong' })
class PingTool {
  run(): string {
    return 'pong';
  }
}

/** Collects what Nest logs, as an app's logger would receive it. */
class CollectingLogger implements LoggerService {
  readonly errors: string[] = [];
  log(): void {}
  warn(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    this.errors.push([message, ...rest].map(String).join(' '));
  }
}

let dir: string;
let otel: Otel;
let apps: INestApplication[] = [];
let servers: MockServer[] = [];

beforeAll(() => {
  otel = startOtel();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-nest-telemetry-'));
  otel.reset();
});
afterEach(async () => {
  for (const app of apps) await app.close();
  for (const server of servers) await server.close();
  apps = [];
  servers = [];
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => otel.shutdown());

/** A Nest app with the chat, its model answering with `replies`; returns the chat URL and its logger. */
async function chatApp(replies: Reply[], name?: string): Promise<{ url: string; logger: CollectingLogger; server: MockServer }> {
  const server = await startMockServer(replies);
  servers.push(server);
  const model = new OpenAIChatModel({
    baseUrl: `${server.url}/v1`,
    model: 'mock',
    apiKey: API_KEY,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
  });
  const store = new SqliteStore(join(dir, 'chat.db'));
  @Module({
    imports: [
      ToolnexusModule.forRoot({
        model,
        store,
        ...(name === undefined ? {} : { name }),
        telemetry: { tracerProvider: otel.tracerProvider, secrets: [API_KEY] },
      }),
      ToolnexusChatModule.forRoot({ principal: () => ({ id: 'ada' }) }),
    ],
    providers: [PingTool],
  })
  class AppModule {}
  const logger = new CollectingLogger();
  const app = await NestFactory.create(AppModule, { logger });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return { url: `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/api/chat`, logger, server };
}

async function send(url: string, chatId: string, text: string): Promise<string> {
  const body = { id: chatId, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] };
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return response.text();
}

it('spans of the module’s toolkit and runner go to its provider, named after the agent, the chat session as the conversation', async () => {
  const { url } = await chatApp([openaiCalls([{ id: 'call_1', name: 'ping', args: {} }]), openaiText('It said pong.')], 'support');
  expect(await send(url, 'c1', 'ping please')).toContain('It said pong.');

  const spans = otel.spans();
  const agent = only(spans, 'invoke_agent support');
  expect(agent.attributes['gen_ai.agent.name']).toBe('support');
  // The chat's session (the principal's id and the chat id), not the run's id.
  expect(agent.attributes['gen_ai.conversation.id']).toBe('ada:c1');
  expect(only(spans, 'execute_tool ping').parentSpanContext?.spanId).toBe(agent.spanContext().spanId);
  expect(spans.filter((span) => span.name === 'chat mock')).toHaveLength(2);
});

it('a model outage (503 after its retries) is logged through Nest’s Logger: the run, the code, the status, no secret', async () => {
  const { url, logger, server } = await chatApp([json(503, { error: { message: `overloaded; your key ${API_KEY}` } })]);
  const stream = await send(url, 'c2', 'hello');
  expect(stream).toContain('"type":"error"');
  expect(server.requests).toHaveLength(2);

  const lines = logger.errors.filter((line) => line.includes('toolnexus chat'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/toolnexus chat: run run-[0-9a-f-]+ failed: TOOLNEXUS_MODEL_HTTP \(model provider openai, HTTP 503\)/);
  expect(lines[0]).toContain('ToolnexusChat');
  for (const line of logger.errors) expect(line).not.toContain(API_KEY);
});
