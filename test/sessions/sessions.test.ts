/**
 * Sessions: `runner.run(input, { session })` keeps the thread, on the memory store and on a
 * SQLite file (across a restart), refuses a second run while one holds the session, never
 * interleaves 20 concurrent requests, and a halted run's later turns land in its session
 * when it is resumed (here through answerAs, as every front end answers).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'toolnexus-ts';
import type { ChatMessage } from 'toolnexus-ts/models';
import { SessionBusyError, SessionFullError, answerAs } from 'toolnexus-ts/agents';
import { buildChatAgent, chatModel, readLedger } from '../fixtures/chat/agent';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

let dir: string;
let server: MockServer;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sessions-'));
  server = await startMockServer(chatModel);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const roles = (messages: readonly ChatMessage[]) => messages.map((m) => m.role).join(' ');

it('keeps the thread: each request sends only the new message, the model sees the whole conversation', async () => {
  const { runner, store } = buildChatAgent('memory', join(dir, 'ledger'), server.url);
  const first = await runner.run('hello', { session: 'conv-1' });
  expect(first.text).toBe('You said: hello');
  const second = await runner.run('lookup o-1', { session: 'conv-1' });
  expect(second.text).toBe('Done: {"order":"o-1","status":"shipped"}');
  const sent = server.requests[server.requests.length - 1]?.body.messages as Array<{ role: string }>;
  expect(sent.map((m) => m.role).join(' ')).toBe('system user assistant user assistant tool');
  const stored = await runner.sessions!.loadSession('conv-1');
  expect(roles(stored!.messages)).toBe('user assistant user assistant tool assistant');
  expect(stored!.active).toBeUndefined();
  expect(stored!.version).toBe(4); // two runs, each a hold and a write
  expect((await runner.sessions!.listSessions()).map((s) => [s.id, s.messageCount])).toEqual([['conv-1', 6]]);
  expect(await store.close()).toBeUndefined();
});

it('refuses bad ids, and a full session, before anything runs', async () => {
  const { runner } = buildChatAgent('memory', join(dir, 'ledger'), server.url, { maxSessionMessages: 2 });
  await expect(runner.run('hi', { session: 'has space' })).rejects.toThrow(InvalidArgumentError);
  await runner.run('one', { session: 's' });
  const before = server.requests.length;
  const full = await runner.run('two', { session: 's' }).catch((error: unknown) => error);
  expect(full).toBeInstanceOf(SessionFullError);
  expect((full as SessionFullError).code).toBe('TOOLNEXUS_SESSION_FULL');
  expect(server.requests.length).toBe(before);
  expect(await runner.sessions!.deleteSession('s')).toBe(true);
  expect(await runner.sessions!.loadSession('s')).toBeUndefined();
  expect(await runner.sessions!.deleteSession('s')).toBe(false);
  expect((await runner.run('again', { session: 's' })).messages).toHaveLength(2);
});

it('a halted run holds its session; answered through answerAs, its turns land in the session; survives a restart', async () => {
  const file = join(dir, 'chat.db');
  const ledger = join(dir, 'ledger');
  const first = buildChatAgent(file, ledger, server.url);
  const halted = await first.runner.run('refund o-7 500', { session: 'conv-r' });
  expect(halted.status).toBe('halted');
  const mid = await first.runner.sessions!.loadSession('conv-r');
  expect(mid!.active).toEqual({ runId: halted.runId, phase: 'halted' });
  expect(roles(mid!.messages)).toBe('user assistant');
  const busy = await first.runner.run('hello?', { session: 'conv-r' }).catch((error: unknown) => error);
  expect(busy).toBeInstanceOf(SessionBusyError);
  expect((busy as SessionBusyError).message).toMatch(/waiting for answers/);
  await first.store.close();

  // Another process (here: a new store on the same file) answers.
  const second = buildChatAgent(file, ledger, server.url);
  const answered = await answerAs(second.runner, { id: halted.pending!.id, ok: true }, { by: { id: 'alice' } });
  expect(answered.run?.result?.status).toBe('done');
  const after = await second.runner.sessions!.loadSession('conv-r');
  expect(after!.active).toBeUndefined();
  expect(roles(after!.messages)).toBe('user assistant tool assistant');
  expect(readLedger(ledger)).toHaveLength(1);
  const next = await second.runner.run('thanks', { session: 'conv-r' });
  expect(roles(next.messages)).toBe('user assistant tool assistant user assistant');
  await second.store.close();

  const third = buildChatAgent(file, ledger, server.url);
  expect((await third.runner.sessions!.loadSession('conv-r'))!.messages).toEqual(next.messages);
  expect((await third.runner.sessions!.listSessions()).map((s) => s.id)).toEqual(['conv-r']);
  await third.store.close();
});

it('20 concurrent requests on one session: each refused or run alone, never interleaved; retried, all 20 land in order pairs', async () => {
  const { runner, store } = buildChatAgent(join(dir, 'busy.db'), join(dir, 'ledger'), server.url);
  let refusals = 0;
  const send = async (i: number): Promise<void> => {
    for (;;) {
      try {
        await runner.run(`message ${i}`, { session: 'hot' });
        return;
      } catch (error) {
        if (!(error instanceof SessionBusyError)) throw error;
        refusals++;
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
      }
    }
  };
  await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
  expect(refusals).toBeGreaterThan(0);
  const thread = (await runner.sessions!.loadSession('hot'))!.messages;
  expect(thread).toHaveLength(40);
  const seen = new Set<string>();
  for (let i = 0; i < 40; i += 2) {
    const user = thread[i] as ChatMessage & { content: string };
    expect(user.role).toBe('user');
    expect(thread[i + 1]).toMatchObject({ role: 'assistant', content: `You said: ${user.content}` });
    seen.add(user.content);
  }
  expect(seen.size).toBe(20);
  // Every model request saw a balanced thread: user/assistant pairs and the new message.
  for (const request of server.requests) {
    const sent = (request.body.messages as Array<{ role: string }>).slice(1).map((m) => m.role);
    expect(sent.join(' ')).toBe([...Array.from({ length: (sent.length - 1) / 2 }, () => 'user assistant'), 'user'].join(' '));
  }
  await store.close();
});

it('a run that fails gives its session back unchanged', async () => {
  await server.close();
  const { runner } = buildChatAgent('memory', join(dir, 'ledger'), server.url);
  await expect(runner.run('hello', { session: 'down' })).rejects.toThrow();
  const stored = await runner.sessions!.loadSession('down');
  expect(stored!.messages).toEqual([]);
  expect(stored!.active).toBeUndefined();
  server = await startMockServer(chatModel);
});
