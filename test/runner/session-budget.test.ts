/**
 * A budget per session (issue 36, docs/agents.md "Budgets"): the runner's `sessionBudget` is
 * counted across the runs of one session. The session store (a real SQLite file) keeps what its
 * ended runs spent; a run of the session stops `budget_exceeded` with `scope: 'session'` at the
 * first model call the session could not bear, and once the session's budget is spent its next
 * run, in this process or a fresh one, stops before calling the model at all (the server on
 * 127.0.0.1 sees no request). A halted run's spending is counted when it ends.
 */
import 'reflect-metadata';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, success } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type RunResult } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { openaiCalls, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { buildBudgetAgent } from '../fixtures/runner/budget-agent';
import { outputOf, startChild } from '../fixtures/children';

let dir: string;
const servers: MockServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-session-budget-'));
});
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(replies: Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}

/** The mock's answers report 10 + 5 = 15 tokens, its tool turns 20 + 7 = 27. */
const SESSION_BUDGET = { totalTokens: 40 };

it('counts the runs of a session together: the second passes it and stops, the third never calls the model, here or in a fresh process', async () => {
  const server = await serve([openaiText('hello'), openaiCalls([{ id: 'c1', name: 'note', args: {} }]), openaiText('never sent')]);
  const db = join(dir, 'app.db');
  const { runner, store } = buildBudgetAgent(db, server.url, undefined, SESSION_BUDGET);
  try {
    const first = await runner.run('hi', { session: 'chat-1' });
    expect(first.status).toBe('done');
    expect((await store.loadSession('chat-1'))?.spent).toMatchObject({ inputTokens: 10, outputTokens: 5, toolCalls: 0 });

    // 15 spent: the next call is allowed (nothing says it will cost more), spends 27, and the one after it may not be made.
    const second = await runner.run('take a note', { session: 'chat-1' });
    expect(second).toMatchObject({
      status: 'budget_exceeded',
      stop: { status: 'budget_exceeded', limit: 'totalTokens', budget: 40, spent: 42, scope: 'session' },
    });
    expect(second.toolCalls.map((call) => call.name)).toEqual(['note']);
    expect(server.requests).toHaveLength(2);
    expect((await store.loadSession('chat-1'))?.spent).toMatchObject({ inputTokens: 30, outputTokens: 12, toolCalls: 1 });

    const third = await runner.run('anything else?', { session: 'chat-1' });
    expect(third).toMatchObject({ status: 'budget_exceeded', stop: { limit: 'totalTokens', spent: 42, scope: 'session' } });
    expect(server.requests).toHaveLength(2);

    // Another session of the same runner has its own budget.
    expect((await runner.run('hi', { session: 'chat-2' })).status).toBe('done');
    expect(server.requests).toHaveLength(3);
  } finally {
    await store.close();
  }

  const requestsBefore = server.requests.length;
  const fresh = await outputOf<{ ok: boolean; result: RunResult }>(
    startChild('runner/session-budget-child.ts', [db, server.url, 'chat-1', JSON.stringify(SESSION_BUDGET), 'one more?']),
    'session-budget-child',
  );
  expect(fresh).toMatchObject({ ok: true, result: { status: 'budget_exceeded', stop: { spent: 42, scope: 'session' } } });
  expect(server.requests).toHaveLength(requestsBefore);
});

it('a halted run of the session counts when it ends, in whichever process resumes it', async () => {
  const server = await serve([
    openaiCalls([{ id: 't1', name: 'approve_transfer', args: {} }]),
    openaiText('transferred'),
    openaiText('never sent'),
  ]);
  const db = join(dir, 'app.db');
  const { runner, store } = buildBudgetAgent(db, server.url, undefined, { totalTokens: 55 });
  try {
    const halted = await runner.run('move the money', { session: 'chat-h', runId: 'run-h' });
    expect(halted.status).toBe('halted');
    // Halted: the session holds the run, and has not counted it yet.
    expect((await store.loadSession('chat-h'))?.spent).toBeUndefined();
  } finally {
    await store.close();
  }
  const resumed = await outputOf<{ ok: boolean; result: RunResult }>(
    startChild('runner/budget-child.ts', [db, server.url, JSON.stringify({ id: (await pendingId(db, server.url))!, ok: true })]),
    'budget-child',
  );
  expect(resumed).toMatchObject({ ok: true, result: { status: 'done' } });
  const again = buildBudgetAgent(db, server.url, undefined, { totalTokens: 55 });
  try {
    expect((await again.store.loadSession('chat-h'))?.spent).toMatchObject({ inputTokens: 30, outputTokens: 12 });
    // 42 of 55 spent: the next run's first call is allowed (nothing predicts its cost); then 57 are, and the next run stops at once.
    const next = await again.runner.run('and now?', { session: 'chat-h' });
    expect(next.status).toBe('done');
    expect((await again.store.loadSession('chat-h'))?.spent).toMatchObject({ inputTokens: 40, outputTokens: 17 });
    const last = await again.runner.run('still there?', { session: 'chat-h' });
    expect(last).toMatchObject({ status: 'budget_exceeded', stop: { spent: 57, budget: 55, scope: 'session' } });
  } finally {
    await again.store.close();
  }
});

it('a sub-agent of a session’s run spends what is left of the session’s budget, and the caller stops for the session', async () => {
  const parentServer = await serve([openaiCalls([{ id: 'p1', name: 'research', args: { input: 'dig' } }]), openaiText('never')]);
  const childServer = await serve([
    openaiCalls([{ id: 'k1', name: 'note', args: {} }]),
    openaiCalls([{ id: 'k2', name: 'note', args: {} }]),
    openaiText('found'),
  ]);
  const model = (server: MockServer) => new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } });
  const notes = new Toolkit().register(defineTool({ name: 'note', description: 'Takes a note', run: () => success('noted') }));
  const child = new AgentRunner({ model: model(childServer), toolkit: notes });
  const toolkit = new Toolkit().register(child.asTool({ name: 'research', description: 'Researches' }));
  const store = new MemoryStore();
  // The session spent 10 before: the parent's call (27) leaves the child 23, which its first call (27) passes.
  await store.saveSession({
    id: 'chat-s',
    version: 1,
    messages: [],
    spent: { inputTokens: 6, outputTokens: 4, costUsd: 0, toolCalls: 0, wallMs: 0 },
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  });
  const parent = new AgentRunner({ model: model(parentServer), toolkit, sessions: store, sessionBudget: { totalTokens: 60 } });
  const result = await parent.run('Find out', { session: 'chat-s' });
  expect(childServer.requests).toHaveLength(1);
  expect(parentServer.requests).toHaveLength(1);
  expect(result.stop).toEqual({ status: 'budget_exceeded', limit: 'totalTokens', budget: 60, spent: 64, scope: 'session' });
  expect((await store.loadSession('chat-s'))?.spent).toMatchObject({ inputTokens: 46, outputTokens: 18 });
});

it('a session row whose spending was edited into nonsense is refused when read, never counted as spending', async () => {
  const server = await serve([openaiText('hello')]);
  const db = join(dir, 'app.db');
  const { runner, store } = buildBudgetAgent(db, server.url, undefined, SESSION_BUDGET);
  try {
    expect((await runner.run('hi', { session: 'chat-x' })).status).toBe('done');
  } finally {
    await store.close();
  }
  const sqlite = new Database(db);
  const { state } = sqlite.prepare('SELECT state FROM sessions WHERE id = ?').get('chat-x') as { state: string };
  const edited = { ...(JSON.parse(state) as object), spent: { inputTokens: 0, outputTokens: 0, costUsd: -1, toolCalls: 0, wallMs: 0 } };
  sqlite.prepare('UPDATE sessions SET state = ? WHERE id = ?').run(JSON.stringify(edited), 'chat-x');
  sqlite.close();
  const again = buildBudgetAgent(db, server.url, undefined, SESSION_BUDGET);
  try {
    await expect(again.store.loadSession('chat-x')).rejects.toMatchObject({
      code: 'TOOLNEXUS_STORE',
      message: expect.stringContaining('spent') as string,
    });
    await expect(again.runner.run('again', { session: 'chat-x' })).rejects.toMatchObject({ code: 'TOOLNEXUS_STORE' });
    expect(server.requests).toHaveLength(1);
  } finally {
    await again.store.close();
  }
});

async function pendingId(db: string, url: string): Promise<string | undefined> {
  const { store } = buildBudgetAgent(db, url);
  try {
    return (await store.list({ runId: 'run-h', status: 'pending' }))[0]?.request.id;
  } finally {
    await store.close();
  }
}
