/**
 * Cancel (issue 36), the cases between processes and mid-turn (test/runner/cancel.test.ts has
 * the rest): a halted run whose answer is being replayed when the cancel comes (the cancel does
 * not wait for the tool; the resume then finds the run over), a run another runner drives on
 * the same SQLite file (its driver ends `cancelled` at its next write, not with a conflict
 * error), and a cancel while a turn's other call suspends (the run ends `cancelled`, not
 * halted, the suspension is cancelled, and the run is checkpointed though it never was
 * before: whoever cancelled it reads how it ended). Real SQLite files.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, pending, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel, type ModelRequest } from 'toolnexus-ts/models';
import { AgentRunner, type RunStore } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { FakeClock } from '../fixtures/fake-clock';

let dir: string;
const stores: SqliteStore[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-runner-cancel-'));
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** A tool that waits until its call's signal fires, and says so. */
function waitingTool() {
  const seen: { started: number; aborted: number } = { started: 0, aborted: 0 };
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const tool = defineTool({
    name: 'wait',
    description: 'Waits until cancelled',
    idempotent: true,
    run: (_args, ctx?: ToolContext) =>
      new Promise<string>((resolve) => {
        seen.started++;
        started();
        ctx?.signal?.addEventListener('abort', () => {
          seen.aborted++;
          resolve('aborted');
        });
      }),
  });
  return { seen, running, tool };
}

/** Asks for one `wait` call, then answers; counts its calls. */
function waitModel() {
  const calls: ModelRequest[] = [];
  const model = new FunctionModel((request) => {
    calls.push(request);
    return request.messages.some((m) => m.role === 'tool') ? 'over' : { toolCalls: [{ id: 'w1', name: 'wait', arguments: {} }] };
  });
  return { model, calls };
}

function sqlite(name: string): SqliteStore {
  const store = new SqliteStore({ filename: join(dir, name) });
  stores.push(store);
  return store;
}

/** A toolkit whose `pay` asks for approval, then records the payment. */
function payAgent(store: SqliteStore, paid: string[], clock?: FakeClock, paying?: () => Promise<void>) {
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'pay',
      description: 'Pays, once approved',
      run: async (_args, ctx?: ToolContext) => {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: 'Pay?' });
        await paying?.();
        paid.push('paid');
        return 'paid';
      },
    }),
  );
  const model = new FunctionModel(({ messages }) =>
    messages.some((m) => m.role === 'tool') ? 'settled' : { toolCalls: [{ id: 'p1', name: 'pay', arguments: {} }] },
  );
  return new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }), ...(clock ? { clock } : {}) });
}

describe('a halted run', () => {
  it('an answer whose replay is running when the cancel comes: the tool finishes, the run ends cancelled, the model is not asked again', async () => {
    const paid: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let replaying!: () => void;
    const replay = new Promise<void>((resolve) => (replaying = resolve));
    const first = payAgent(sqlite('claimed.db'), paid, undefined, async () => {
      replaying();
      await gate;
    });
    const halted = await first.run('pay', { runId: 'r-claimed' });
    const id = halted.status === 'halted' ? halted.pending.id : '';
    const resuming = first.resume({ id, ok: true });
    await replay;
    const second = payAgent(sqlite('claimed.db'), paid);
    await expect(second.cancel('r-claimed')).resolves.toMatchObject({ status: 'cancelled' });
    release();
    const result = await resuming;
    expect(result.status).toBe('cancelled');
    expect(paid).toEqual(['paid']);
    // The cancelled checkpoint balances the transcript: the call has a result saying it may have run.
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect((await second.continue('r-claimed')).status).toBe('cancelled');
  });
});

describe('a turn that halts while the run is cancelled', () => {
  it('ends cancelled, not halted: the suspension is cancelled, every call has its result, and the checkpoint says so', async () => {
    const store = sqlite('mid-turn.db');
    const { running, tool } = waitingTool();
    const toolkit = new Toolkit().register(
      tool,
      defineTool({ name: 'ask', description: 'Asks first', run: () => pending({ kind: 'approval', prompt: 'Go?' }) }),
    );
    const model = new FunctionModel(() => ({
      toolCalls: [
        { id: 'w1', name: 'wait', arguments: {} },
        { id: 'a1', name: 'ask', arguments: {} },
      ],
    }));
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    const run = runner.run('go', { runId: 'r-mid' });
    await running;
    // `ask` has suspended; `wait` is still running: the turn would halt, were it not cancelled.
    while ((await store.list({ runId: 'r-mid', status: 'pending' })).length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await runner.cancel('r-mid');
    const result = await run;
    expect(result.status).toBe('cancelled');
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    expect(await store.list({ runId: 'r-mid', status: 'pending' })).toEqual([]);
    expect(await store.list({ runId: 'r-mid', status: 'cancelled' })).toHaveLength(1);
    expect((await store.loadRun('r-mid'))?.state).toMatchObject({ phase: 'cancelled' });
  });
});

describe('a run another runner drives', () => {
  it('is cancelled through the checkpoint: the driver stops at its next write, its tool call aborted, and ends cancelled', async () => {
    const clock = new FakeClock();
    const store = sqlite('elsewhere.db');
    const { seen, running, tool } = waitingTool();
    const toolkit = new Toolkit().register(tool);
    const driver = new AgentRunner({
      model: waitModel().model,
      toolkit,
      coordinator: new ResumeCoordinator({ toolkit, store }),
      durability: 'step',
      clock,
      runLeaseMs: 3_000,
    });
    const run = driver.run('go', { runId: 'r-elsewhere' });
    await running;
    const other = new AgentRunner({
      model: waitModel().model,
      toolkit,
      coordinator: new ResumeCoordinator({ toolkit, store: sqlite('elsewhere.db') }),
    });
    await expect(other.cancel('r-elsewhere')).resolves.toMatchObject({ status: 'cancelled' });
    expect(seen.aborted).toBe(0);
    // The driver's next lease renewal (a third of runLeaseMs) finds the checkpoint changed.
    clock.advance(1_000);
    // It ends cancelled, as the checkpoint says, rather than with the conflict of its lost write.
    const result = await run;
    expect(result.status).toBe('cancelled');
    expect(seen.aborted).toBe(1);
    expect((await store.loadRun('r-elsewhere'))?.state).toMatchObject({ phase: 'cancelled' });
  });
});

describe('a cancel during a model call of a durable run', () => {
  it('writes the checkpoint cancelled, never failed in between (a recover could take a failed run over)', async () => {
    const store = sqlite('model-call.db');
    const phases: string[] = [];
    const runs: RunStore = {
      saveRun: (checkpoint) => {
        phases.push((checkpoint.state as { phase: string }).phase);
        return store.saveRun(checkpoint);
      },
      loadRun: (runId) => store.loadRun(runId),
    };
    let asked!: () => void;
    const asking = new Promise<void>((resolve) => (asked = resolve));
    const model = new FunctionModel(
      (request) =>
        new Promise((_resolve, reject) => {
          asked();
          request.signal?.addEventListener('abort', () => reject(new Error('the model call was aborted')));
        }),
    );
    const toolkit = new Toolkit();
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }), runs, durability: 'step' });
    const run = runner.run('go', { runId: 'r-model' });
    await asking;
    await runner.cancel('r-model');
    expect((await run).status).toBe('cancelled');
    expect(phases).toEqual(['running', 'cancelled']);
  });
});

describe('a halted run whose request a sub-agent surfaced', () => {
  it('cancelling the parent cancels the child run too: its own request settles cancelled, its checkpoint says cancelled', async () => {
    const store = sqlite('team.db');
    const paid: string[] = [];
    const child = payAgent(store, paid);
    const toolkit = new Toolkit().register(child.asTool({ name: 'helper', description: 'Pays for you' }));
    const model = new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ id: 'h1', name: 'helper', arguments: { input: 'pay' } }] },
    );
    const parent = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    const halted = await parent.run('get it paid', { runId: 'r-parent' });
    expect(halted.status).toBe('halted');
    const childRunId = 'r-parent/h1';
    expect((await store.loadRun(childRunId))?.state).toMatchObject({ phase: 'halted' });

    await parent.cancel('r-parent', { reason: 'not needed' });
    // Nobody is left to answer: neither the parent's surfaced request nor the child's own is open.
    expect(await store.list({ status: 'pending' })).toEqual([]);
    expect((await store.loadRun(childRunId))?.state).toMatchObject({ phase: 'cancelled' });
    expect(paid).toEqual([]);
  });
});
