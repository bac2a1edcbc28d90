/**
 * Budgets (issue 36, docs/agents.md "Budgets"): a run with `budget` stops with its own status
 * `budget_exceeded` (which limit, the budget, what was spent, the usage so far) at the first
 * model call that would pass it, judged by what is spent plus what the last call spent; also
 * when a sub-agent spends it (the child gets what is left, its spending is the caller's), and
 * after a halt, resumed by another process (the checkpoint keeps budget and spending). Tool
 * calls are counted one by one, cost comes from the user's prices (cached input at its rate),
 * wall time from the runner's clock and only while driving. Models answer over real HTTP on
 * 127.0.0.1 and report usage; the resume runs in a real child process on a real SQLite file.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, success } from 'toolnexus-ts';
import { FunctionModel, OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { json, openaiCalls, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { buildBudgetAgent } from '../fixtures/runner/budget-agent';
import { outputOf, startChild } from '../fixtures/children';
import { FakeClock } from '../fixtures/fake-clock';

let dir: string;
const servers: MockServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-budget-'));
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

const httpModel = (server: MockServer) => new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } });

/** Each tool turn of the mock reports 20 + 7 = 27 tokens (openaiCalls); the answer 10 + 5. */
const noteCall = (id: string) => openaiCalls([{ id, name: 'note', args: {} }]);

function noteToolkit(runs: string[] = []): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'note',
      description: 'Takes a note',
      run: () => {
        runs.push('note');
        return success('noted');
      },
    }),
  );
}

describe('budgets', () => {
  it('totalTokens: stops before the first model call that would pass it, with the limit, the spending and the usage', async () => {
    const server = await serve([noteCall('c1'), noteCall('c2'), noteCall('c3'), openaiText('done')]);
    const runner = new AgentRunner({ model: httpModel(server), toolkit: noteToolkit(), budget: { totalTokens: 60 } });
    const result = await runner.run('Take notes');
    // 27 spent, the next likely 27 more: 54 <= 60, asked; 54 + 27 > 60: not asked.
    expect(server.requests).toHaveLength(2);
    expect(result.status).toBe('budget_exceeded');
    expect(result.stop).toEqual({ status: 'budget_exceeded', limit: 'totalTokens', budget: 60, spent: 54 });
    expect(result.usage).toEqual({ inputTokens: 40, outputTokens: 14 });
    expect(result.spend).toMatchObject({ toolCalls: 2, costUsd: 0 });
    // The transcript stays whole: the last turn's call has its result.
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'c2' });

    const unbounded = await serve([noteCall('c1'), noteCall('c2'), noteCall('c3'), openaiText('done')]);
    const free = await new AgentRunner({ model: httpModel(unbounded), toolkit: noteToolkit() }).run('Take notes');
    expect(free.status).toBe('done');
    expect(free.spend).toBeUndefined();
  });

  it('a run’s own budget replaces the runner’s; bad budgets are refused clearly', async () => {
    const server = await serve([noteCall('c1'), openaiText('done')]);
    const runner = new AgentRunner({ model: httpModel(server), toolkit: noteToolkit(), budget: { totalTokens: 10 } });
    expect((await runner.run('Take notes', { budget: { totalTokens: 1000 } })).status).toBe('done');
    expect(() => new AgentRunner({ model: httpModel(server), toolkit: noteToolkit(), budget: { totalTokens: -1 } })).toThrow(
      /budget.totalTokens must be a positive number/,
    );
    expect(() => new AgentRunner({ model: httpModel(server), toolkit: noteToolkit(), budget: { tokens: 5 } as never })).toThrow(
      /budget.tokens is not a budget limit/,
    );
    await expect(runner.run('x', { budget: { costUsd: 1 } })).rejects.toThrow(/no price for model "mock"/);
  });

  it('toolCalls: five calls in one turn with a budget of three: three run, two never do, and the run stops', async () => {
    const runs: string[] = [];
    const server = await serve([
      openaiCalls([1, 2, 3, 4, 5].map((i) => ({ id: `c${i}`, name: 'note', args: {} }))),
      openaiText('never asked'),
    ]);
    const runner = new AgentRunner({ model: httpModel(server), toolkit: noteToolkit(runs), budget: { toolCalls: 3 } });
    const result = await runner.run('Five notes');
    expect(runs).toHaveLength(3);
    expect(result.status).toBe('budget_exceeded');
    expect(result.stop).toEqual({ status: 'budget_exceeded', limit: 'toolCalls', budget: 3, spent: 3 });
    expect(result.toolCalls.map((c) => c.status)).toEqual(['ok', 'ok', 'ok', 'error', 'error']);
    expect(server.requests).toHaveLength(1);
  });

  it('costUsd: priced per million tokens, cached input at its own rate; the run reports its cost', async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 600 } };
    const reply = (body: object): Reply => json(200, { id: 'x', object: 'chat.completion', choices: [{ index: 0, ...body }], usage });
    const server = await serve([
      reply({
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'note', arguments: '{}' } }],
        },
        finish_reason: 'tool_calls',
      }),
      reply({ message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }),
    ]);
    const prices = { mock: { inputPerMTok: 2, outputPerMTok: 8, cachedInputPerMTok: 0.5 } };
    // One call: 400 plain input at $2, 600 cached at $0.5, 100 output at $8 per million: $0.0019.
    const runner = new AgentRunner({ model: httpModel(server), toolkit: noteToolkit(), prices, budget: { costUsd: 0.003 } });
    const result = await runner.run('Note it');
    expect(result.status).toBe('budget_exceeded');
    expect(result.stop).toMatchObject({ limit: 'costUsd', budget: 0.003 });
    expect(result.spend?.costUsd).toBeCloseTo(0.0019, 10);
    expect(server.requests).toHaveLength(1);

    const priced = await serve([reply({ message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' })]);
    const done = await new AgentRunner({ model: httpModel(priced), toolkit: noteToolkit(), prices }).run('hi');
    expect(done.status).toBe('done');
    expect(done.spend?.costUsd).toBeCloseTo(0.0019, 10);
  });

  it('wallMs: the time spent driving, on the runner’s clock', async () => {
    const clock = new FakeClock();
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'slow',
        description: 'Takes a while',
        run: () => {
          clock.advance(700);
          return 'ok';
        },
      }),
    );
    const model = new FunctionModel(() => ({ toolCalls: [{ name: 'slow', arguments: {} }] }));
    const result = await new AgentRunner({ model, toolkit, clock, maxTurns: 5, budget: { wallMs: 1000 } }).run('go');
    expect(result.status).toBe('budget_exceeded');
    expect(result.stop).toEqual({ status: 'budget_exceeded', limit: 'wallMs', budget: 1000, spent: 1400 });
    expect(result.turns).toBe(2);
  });

  it('a sub-agent spends what is left of its caller’s budget, and the caller stops too', async () => {
    const parentServer = await serve([openaiCalls([{ id: 'p1', name: 'research', args: { input: 'dig' } }]), openaiText('never')]);
    const childServer = await serve([noteCall('k1'), noteCall('k2'), noteCall('k3'), openaiText('found')]);
    const child = new AgentRunner({ model: httpModel(childServer), toolkit: noteToolkit() });
    const toolkit = new Toolkit().register(child.asTool({ name: 'research', description: 'Researches' }));
    const parent = new AgentRunner({ model: httpModel(parentServer), toolkit, budget: { totalTokens: 60 } });
    const result = await parent.run('Find out');
    // The parent spent 27; the child had 33 left: its first call (27) fits, the second would not.
    expect(childServer.requests).toHaveLength(1);
    expect(parentServer.requests).toHaveLength(1);
    expect(result.status).toBe('budget_exceeded');
    expect(result.stop).toEqual({ status: 'budget_exceeded', limit: 'totalTokens', budget: 60, spent: 54 });
    expect(result.usage).toEqual({ inputTokens: 40, outputTokens: 14 });
    expect(result.spend?.toolCalls).toBe(2); // the parent's call of the sub-agent and the child's note
  });

  it('after a halt, a resume in another process keeps to the budget the checkpoint kept', async () => {
    const server = await serve([
      openaiCalls([{ id: 'c1', name: 'approve_transfer', args: {} }]),
      noteCall('c2'),
      noteCall('c3'),
      openaiText('never'),
    ]);
    const db = join(dir, 'runs.db');
    const { runner, store } = buildBudgetAgent(db, server.url, { totalTokens: 60 });
    const halted = await runner.run('Transfer, then take notes');
    await store.close();
    expect(halted.status).toBe('halted');
    expect(halted.spend).toMatchObject({ toolCalls: 1 });

    // The child builds the runner without a budget: only the checkpoint can stop it.
    const child = startChild('runner/budget-child.ts', [db, server.url, JSON.stringify({ id: halted.pending?.id, ok: true })]);
    const output = await outputOf<{ ok: boolean; pid: number; result: { status: string; stop: unknown; spend: { toolCalls: number } } }>(
      child,
      'budget-child',
    );
    expect(output.ok).toBe(true);
    expect(output.pid).not.toBe(process.pid);
    expect(output.result.status).toBe('budget_exceeded');
    expect(output.result.stop).toEqual({ status: 'budget_exceeded', limit: 'totalTokens', budget: 60, spent: 54 });
    expect(output.result.spend.toolCalls).toBe(2);
    expect(server.requests).toHaveLength(2);
  });
});
