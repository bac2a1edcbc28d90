/**
 * The reconnect of the web front end (`chatResponse`'s GET, docs/chat.md "Reconnecting") on the
 * memory store: an ended run replayed from a position exactly as it was sent, 204 with nothing
 * to resume, the refusals (no principal, a path without a chat id, a bad position); a log past
 * its cap ends with an error part saying so; a log whose writer died (left open, its session no
 * longer running it) ends the reconnect after `staleMs` on the chat's clock instead of holding it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamLogStore } from 'toolnexus-ts/agents';
import { CHAT_STREAM_HEADER, chatResponse, type ChatOptions } from 'toolnexus-ts/chat';
import { buildChatAgent, chatModel, type ChatAgent } from '../fixtures/chat/agent';
import { FakeClock, until } from '../fixtures/fake-clock';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

let dir: string;
let model: MockServer;
let agent: ChatAgent;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-reconnect-'));
  model = await startMockServer(chatModel);
  agent = buildChatAgent('memory', join(dir, 'ledger'), model.url);
});
afterEach(async () => {
  await model.close();
  rmSync(dir, { recursive: true, force: true });
});

const alice = { id: 'alice' };

async function post(chatId: string, text: string, options: ChatOptions = {}): Promise<Response> {
  const body = JSON.stringify({ id: chatId, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }] });
  return chatResponse(agent.runner, new Request('http://app.test/api/chat', { method: 'POST', body }), { ...options, principal: alice });
}

/** `principal: null`: nobody signed in. */
function reconnect(chatId: string, position?: string, options: ChatOptions = {}, principal: { id: string } | null = alice) {
  const headers: Record<string, string> = position ? { [CHAT_STREAM_HEADER]: position } : {};
  return chatResponse(agent.runner, new Request(`http://app.test/api/chat/${chatId}/stream`, { headers }), {
    ...options,
    principal: principal ?? undefined,
  });
}

const partsOf = (text: string) => text.split('\n\n').filter((event) => event.startsWith('data: {'));

it('replays an ended run from a position exactly as it was sent; 204 with nothing to resume; refuses what it cannot serve', async () => {
  const posted = await post('c1', 'hello');
  const position = posted.headers.get(CHAT_STREAM_HEADER) as string;
  expect(position).toMatch(/^run-.+:0$/);
  const sent = await posted.text();
  expect(sent).toContain('"type":"text-delta"');
  const again = await reconnect('c1', position);
  expect(again.status).toBe(200);
  expect(again.headers.get(CHAT_STREAM_HEADER)).toBe(position);
  expect(await again.text()).toBe(sent);
  // From the middle: exactly the rest.
  const runId = position.split(':')[0] as string;
  const rest = await reconnect('c1', `${runId}:3`);
  expect(partsOf(await rest.text())).toEqual(partsOf(sent).slice(3));
  // The end of an ended run, or a chat with no active run: nothing to send.
  expect((await reconnect('c1', `${runId}:${partsOf(sent).length}`)).status).toBe(204);
  expect((await reconnect('c1')).status).toBe(204);
  expect((await reconnect('c1', position, {}, null)).status).toBe(401);
  expect((await reconnect('c1', 'not a position')).status).toBe(400);
  expect((await reconnect('c1', position, {}, { id: 'bob' })).status).toBe(404);
  const noChat = await chatResponse(agent.runner, new Request('http://app.test/api/chat'), { principal: alice });
  expect(noChat.status).toBe(404);
  // Turned off: nothing kept, nothing to resume.
  const unlogged = await post('c2', 'hello', { streamLog: false });
  expect(unlogged.headers.get(CHAT_STREAM_HEADER)).toBeNull();
  await unlogged.text();
});

it('past its cap, a log keeps counting without keeping: a reconnect gets what it kept, then an error part saying so', async () => {
  const posted = await post('c3', 'hello', { streamLog: { maxParts: 3 } });
  const sent = partsOf(await posted.text());
  expect(sent.length).toBeGreaterThan(3);
  const runId = (posted.headers.get(CHAT_STREAM_HEADER) as string).split(':')[0] as string;
  const log = await (agent.store as unknown as StreamLogStore).readStream(runId, 0, 100);
  expect(log).toMatchObject({ parts: sent.slice(0, 3).map((event) => event.slice('data: '.length)), next: sent.length, open: false });
  const again = partsOf(await (await reconnect('c3', `${runId}:0`)).text());
  expect(again.slice(0, 3)).toEqual(sent.slice(0, 3));
  expect(again).toHaveLength(4);
  expect(JSON.parse((again[3] as string).slice('data: '.length))).toEqual({
    type: 'error',
    errorText: 'this run streamed more parts than its stream log keeps: the rest is in the thread once the run has ended',
  });
});

it("a log left open by a writer that died ends the reconnect after staleMs on the chat's clock, once its session no longer runs it", async () => {
  const store = agent.store as unknown as StreamLogStore;
  await store.openStream('run-dead', 'alice:c4');
  await store.appendStream('run-dead', 0, ['{"type":"start","messageId":"msg-run-dead"}'], 1, false);
  const clock = new FakeClock();
  const response = await reconnect('c4', 'run-dead:0', { clock, streamLog: { pollMs: 500, staleMs: 1000 } });
  let text: string | undefined;
  void response.text().then((body) => (text = body));
  // Open, nothing new: it waits on the clock; once quiet for staleMs, the session is asked, and the reconnect ends.
  await until(() => clock.timers.length > 0);
  expect(text).toBeUndefined();
  clock.advance(2000);
  await until(() => text !== undefined);
  expect(text).toBe('data: {"type":"start","messageId":"msg-run-dead"}\n\ndata: [DONE]\n\n');
});
