/**
 * Durable steps in one process: what `durability: 'step'` writes, the listing of runs whose
 * driver lease lapsed (memory and SQLite), two workers racing for one orphan (one takes it,
 * the old driver is fenced out), and the typed errors of the new options.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsString } from 'class-validator';
import { InvalidArgumentError, Tool, ToolRegistrationError, Toolkit, success } from 'toolnexus-ts';
import { ResumeCoordinator, type Clock, type SuspensionStore } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, RunConflictError, type RunStore } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { FakeClock, until } from '../fixtures/fake-clock';

class NoteArgs {
  @IsString() text!: string;
}

/** A tool whose calls wait until the test lets them go: the driver is "stuck" inside it. */
@Tool({ name: 'note', description: 'Writes a note', args: NoteArgs })
class NoteTool {
  runs = 0;
  gate: Promise<void> = Promise.resolve();
  async run(args: NoteArgs) {
    this.runs++;
    await this.gate;
    return success({ noted: args.text });
  }
}

const model = () =>
  new FunctionModel(({ messages }) =>
    messages.some((m) => m.role === 'tool') ? 'noted' : { toolCalls: [{ id: 'call_1', name: 'note', arguments: { text: 'hi' } }] },
  );

function agent(store: SuspensionStore & RunStore, tool: NoteTool, runLeaseMs: number, durability: 'halt' | 'step' = 'step', clock?: Clock) {
  const toolkit = new Toolkit().register(tool);
  return new AgentRunner({
    model: model(),
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, store }),
    durability,
    runLeaseMs,
    clock,
  });
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-recovery-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("checkpoints a run that never suspends with 'step', and not with 'halt'", async () => {
  const store = new MemoryStore();
  const durable = await agent(store, new NoteTool(), 60_000).run('note hi', { runId: 'r-turn' });
  expect(durable.status).toBe('done');
  const saved = await store.loadRun('r-turn');
  expect(saved?.state).toMatchObject({ phase: 'done', turns: 2 });
  // start, response 1, call started, call result, done
  expect(saved?.version).toBe(5);
  await agent(store, new NoteTool(), 60_000, 'halt').run('note hi', { runId: 'r-halt' });
  expect(await store.loadRun('r-halt')).toBeUndefined();
});

it.each(['memory', 'sqlite'])('lists only running runs whose lease lapsed (%s)', async (kind) => {
  const store = kind === 'memory' ? new MemoryStore() : new SqliteStore({ filename: join(dir, 'runs.db') });
  try {
    const state = (phase: string) => ({ format: 'toolnexus.run/1', phase });
    await store.saveRun({ runId: 'old-running', version: 1, state: state('running'), updatedAt: '2026-01-01T00:00:00.000Z' });
    await store.saveRun({ runId: 'older-running', version: 1, state: state('running'), updatedAt: '2025-01-01T00:00:00.000Z' });
    await store.saveRun({ runId: 'old-done', version: 1, state: state('done'), updatedAt: '2025-01-01T00:00:00.000Z' });
    await store.saveRun({ runId: 'new-running', version: 1, state: state('running'), updatedAt: '2026-06-01T00:00:00.000Z' });
    const listed = await store.listStaleRuns({ updatedBefore: '2026-03-01T00:00:00.000Z' });
    expect(listed.map((run) => run.runId)).toEqual(['older-running', 'old-running']);
    expect(listed[0]).toEqual({ runId: 'older-running', version: 1, updatedAt: '2025-01-01T00:00:00.000Z' });
    expect(await store.listStaleRuns({ updatedBefore: '2026-03-01T00:00:00.000Z', limit: 1 })).toHaveLength(1);
    await expect(store.listStaleRuns({ updatedBefore: 'yesterday' })).rejects.toThrow(InvalidArgumentError);
    await expect(store.listStaleRuns({ updatedBefore: '2026-03-01T00:00:00.000Z', limit: 0 })).rejects.toThrow(InvalidArgumentError);
  } finally {
    await store.close();
  }
});

it('gives an orphan to one worker; the old driver is fenced out when it wakes', async () => {
  const store = new MemoryStore();
  const stuck = new NoteTool();
  let release!: () => void;
  stuck.gate = new Promise<void>((resolve) => (release = resolve));
  // Leases on a fake clock shared by the old driver and the workers: stepped, never raced.
  const clock = new FakeClock();
  const first = agent(store, stuck, 600_000, 'step', clock).run('note hi', { runId: 'r-orphan' });
  const settledFirst = first.then(
    (result) => ({ ok: true as const, result }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await until(() => stuck.runs > 0);
  const workerTools = [new NoteTool(), new NoteTool()];
  const workers = workerTools.map((tool) => agent(store, tool, 10, 'step', clock));
  expect(await workers[0]!.recoverOrphans()).toEqual([]); // written just now: not an orphan yet
  clock.advance(11); // older than the workers' 10 ms lease (the old driver's own lease is far off)

  const outcomes = await Promise.all(workers.map((worker) => worker.recoverOrphans()));
  const flat = outcomes.flat().filter((outcome) => outcome.runId === 'r-orphan');
  expect(flat.map((outcome) => outcome.status).sort()).toEqual(flat.length === 1 ? ['recovered'] : ['recovered', 'taken']);
  const recovered = flat.find((outcome) => outcome.status === 'recovered');
  expect(recovered?.status === 'recovered' && recovered.result.status).toBe('halted');
  // The call started (it is not idempotent) and has no result: an operator is asked, nothing ran again.
  expect(recovered?.status === 'recovered' && recovered.result.pendings?.[0]?.kind).toBe('recovery');
  expect(workerTools[0]!.runs + workerTools[1]!.runs).toBe(0);

  release();
  const old = await settledFirst;
  expect(old.ok).toBe(false);
  expect(!old.ok && old.error).toBeInstanceOf(RunConflictError);
  expect((await store.loadRun('r-orphan'))?.state).toMatchObject({ phase: 'halted' });
});

it('refuses a durability it does not know, an idempotent flag that is not a boolean, and a suspension of an unknown tool', async () => {
  const toolkit = new Toolkit().register(new NoteTool());
  expect(() => new AgentRunner({ model: model(), toolkit, durability: 'turn' as 'step' })).toThrow(InvalidArgumentError);
  @Tool({ name: 'odd', description: 'Odd', idempotent: 'yes' as unknown as boolean })
  class OddTool {
    run() {
      return 'ok';
    }
  }
  expect(() => new Toolkit().register(new OddTool())).toThrow(ToolRegistrationError);
  @Tool({ name: 'look', description: 'Looks', idempotent: true })
  class LookTool {
    run() {
      return 'ok';
    }
  }
  expect(new Toolkit().register(new LookTool()).get('look')?.idempotent).toBe(true);
  const coordinator = new ResumeCoordinator({ toolkit });
  await expect(coordinator.suspend('missing', {}, { kind: 'recovery', prompt: 'Run it?' })).rejects.toThrow(InvalidArgumentError);
  expect(await coordinator.list()).toEqual([]);
});
