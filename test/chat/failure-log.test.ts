/**
 * A chat whose model is down (connection refused on every attempt) tells the page only its
 * error part, and the server's log one line through the handler's `logger`: the run, the
 * error's code and the model's provider, nothing of the conversation or the key.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { chatHandler } from 'toolnexus-ts/chat';

const API_KEY = 'sk-canary-77ab3c';
const SAID = 'my card is 4111-2222';

let http: Server;
let url: string;
const logged: string[] = [];

beforeAll(async () => {
  // A port nobody listens on: taken, then given back.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const deadPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const toolkit = new Toolkit();
  const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
  const model = new OpenAIChatModel({
    baseUrl: `http://127.0.0.1:${deadPort}/v1`,
    model: 'gpt-test',
    apiKey: API_KEY,
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
  });
  const runner = new AgentRunner({ model, toolkit, coordinator });
  const handler = chatHandler(runner, { principal: () => ({ id: 'ada' }), logger: { error: (line) => void logged.push(line) } });
  http = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;
});
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));

it('logs the failed run once, with its code and provider, and no secret', async () => {
  const body = { id: 'c1', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: SAID }] }] };
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  expect(text).toContain('"type":"error"');
  expect(text).not.toContain(API_KEY);

  expect(logged).toHaveLength(1);
  expect(logged[0]).toMatch(/^toolnexus chat: run run-[0-9a-f-]+ failed: TOOLNEXUS_MODEL_[A-Z_]+ \(model provider openai\)$/);
  expect(logged[0]).not.toContain(API_KEY);
  expect(logged[0]).not.toContain(SAID);
});
