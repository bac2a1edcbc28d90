/**
 * Steering in the chat (issue 49, docs/chat.md "Steering"): a user message sent while the chat's
 * run is in flight (another tab, or a page that sends without waiting) is not refused as busy:
 * it joins the run (`runner.steer`), its response says it was queued, the run's own response
 * shows a `data-toolnexus-steer` part where its next turn took it, and the model reads it once,
 * after the tool's result. With `whileRunning: 'busy'` the 409 stays. The pages are the AI SDK's
 * own `AbstractChat` over `DefaultChatTransport`; the model a real HTTP server on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { chatHandler, type ChatOptions } from 'toolnexus-ts/chat';
import { loadAiClient, pageChat } from '../fixtures/chat/ai-client';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { until } from '../fixtures/children';
import { slowToolkit } from '../fixtures/runner/slow-tool';

jest.setTimeout(60_000);
const ai = loadAiClient();

let dir: string;
let http: Server;
let store: SqliteStore;
let model: MockServer;
let url: string;
let open: () => void;
let started: () => number;

async function serve(options: Partial<ChatOptions> = {}): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'tnx-chat-steer-'));
  store = new SqliteStore({ filename: join(dir, 'chat.db') });
  model = await startMockServer([
    openaiCalls([{ id: 'call_export', name: 'export_rows', args: {} }]),
    openaiText('Exported, without the totals row.'),
  ]);
  const slow = slowToolkit();
  open = slow.open;
  started = slow.started;
  const toolkit = slow.toolkit;
  const runner = new AgentRunner({
    model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, store }),
  });
  const handle = chatHandler(runner, { principal: () => ({ id: 'ada' }), ...options });
  http = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
}

afterEach(async () => {
  open();
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

type Part = UIMessage['parts'][number];
const partsOf = (messages: readonly UIMessage[]): Part[] => messages.flatMap((message) => message.parts);
const steerParts = (messages: readonly UIMessage[]) =>
  partsOf(messages).filter((part) => part.type === 'data-toolnexus-steer') as Array<{ type: string; id: string; data: unknown }>;

it('a message sent while the run is in flight is steered into it: queued, then taken at the next turn, read by the model once', async () => {
  await serve();
  const first = pageChat(ai, { id: 'c-1', api: url });
  const sending = first.chat.sendMessage({ text: 'Export the report' });
  await until(() => started() === 1, 20_000, 'the tool to start');

  // A second tab of the same chat sends while the run is in flight.
  const second = pageChat(ai, { id: 'c-1', api: url });
  await second.chat.sendMessage({ text: 'skip the totals row' });
  expect(second.chat.error).toBeUndefined();
  const id = (second.state.messages[0] as UIMessage).id;
  expect(steerParts(second.state.messages)).toEqual([
    { type: 'data-toolnexus-steer', id: `steer-${id}`, data: { messageId: id, text: 'skip the totals row', state: 'queued' } },
  ]);
  expect(model.requests).toHaveLength(1);

  open();
  await sending;
  expect(first.chat.error).toBeUndefined();
  const answer = first.state.messages[first.state.messages.length - 1] as UIMessage;
  const types = answer.parts.map((part) => part.type);
  // Taken after the tool's output, before the text of the turn that read it.
  expect(types.indexOf('data-toolnexus-steer')).toBeGreaterThan(types.indexOf('tool-export_rows'));
  expect(types.indexOf('data-toolnexus-steer')).toBeLessThan(types.lastIndexOf('text'));
  expect(steerParts([answer])).toEqual([
    { type: 'data-toolnexus-steer', id: `steer-${id}`, data: { messageId: id, text: 'skip the totals row', state: 'taken' } },
  ]);
  const sent = model.requests[1]?.body.messages as Array<{ role: string; content: unknown }>;
  expect(sent.slice(-2).map(({ role, content }) => ({ role, content }))).toEqual([
    { role: 'tool', content: 'exported 3 rows' },
    { role: 'user', content: 'skip the totals row' },
  ]);
  expect(model.requests).toHaveLength(2);
  // The thread keeps it where it was read, with the page's id.
  const session = await store.loadSession('ada:c-1');
  expect(session?.messages).toContainEqual({ role: 'user', content: 'skip the totals row', id });
});

it('with whileRunning: busy, the message is refused with 409 as before and nothing reaches the run', async () => {
  await serve({ whileRunning: 'busy' });
  const first = pageChat(ai, { id: 'c-2', api: url });
  const sending = first.chat.sendMessage({ text: 'Export the report' });
  await until(() => started() === 1, 20_000, 'the tool to start');
  const second = pageChat(ai, { id: 'c-2', api: url });
  await second.chat.sendMessage({ text: 'skip the totals row' });
  expect((second.chat.error as unknown as { statusCode?: number } | undefined)?.statusCode).toBe(409);
  open();
  await sending;
  expect(JSON.stringify(model.requests[1]?.body)).not.toContain('skip the totals row');
});
