/**
 * The recovery loop (`AgentRunner.startRecovery`, docs/agents.md, "Restart recovers") and the
 * takeover rule's edges (docs/suspension.md, "After a crash: the takeover rule"), on a fake clock
 * shared by the store, the coordinators and the runners: leases and ticks are stepped, never raced.
 * A dead holder is a claim taken and never completed.
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { pendingOf, Tool, Toolkit, success } from 'toolnexus-ts';
import { AgentRunner } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { MemoryStore } from 'toolnexus-ts/memory';
import { AlreadyResolvedError, ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FakeClock, until } from '../fixtures/fake-clock';

const LEASE_MS = 1_000;

class ItemArgs {
  @IsString() item!: string;
}

function tools(ran: string[]) {
  @Tool({ name: 'ship', description: 'Ships an item', args: ItemArgs, approval: { prompt: 'Ship?', expiresInMs: 500 } })
  class ShipTool {
    run(args: ItemArgs) {
      ran.push(`ship ${args.item}`);
      return success('shipped');
    }
  }
  @Tool({ name: 'stock', description: 'Reserves stock', args: ItemArgs, idempotent: true, approval: true })
  class StockTool {
    run(args: ItemArgs) {
      ran.push(`stock ${args.item}`);
      return success('reserved');
    }
  }
  return new Toolkit().register(new ShipTool(), new StockTool());
}

/** "ship X" / "stock X" call that tool; shown its result, the model says "done". */
const model = new FunctionModel((request) => {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return 'done';
  const [name, item] = String(last?.role === 'user' ? last.content : '').split(' ');
  return {
    text: '',
    toolCalls: [{ id: `call_${item}`, name: name as string, arguments: JSON.stringify({ item }) }],
    usage: { inputTokens: 1, outputTokens: 1 },
  };
});

function setup() {
  // Near the real time: the Toolkit dates a declared approval's expiry by the system clock.
  const clock = new FakeClock(Date.now());
  const store = new MemoryStore({ clock });
  const ran: string[] = [];
  const toolkit = tools(ran);
  const runner = () =>
    new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store, clock, leaseMs: LEASE_MS }), clock });
  return { clock, store, ran, runner };
}

/** Starts a run halted on its approval, then a holder claims that approval and dies. */
async function crashed(runner: AgentRunner, store: MemoryStore, message: string): Promise<{ runId: string; id: string }> {
  const halted = await runner.run(message);
  const id = halted.status === 'halted' ? halted.pending.id : '';
  expect(await store.claim(id, { id, ok: true }, LEASE_MS, { by: { id: 'ann' } })).toBeDefined();
  return { runId: halted.runId, id };
}

it('bounded per tick, each lapsed claim taken once by one of two processes, nothing before its lease lapsed', async () => {
  const { clock, store, ran, runner } = setup();
  const [a, b] = [runner(), runner()];
  const runs = [];
  for (const item of ['i1', 'i2', 'i3']) runs.push(await crashed(a, store, `ship ${item}`));
  const [loopA, loopB] = [a.startRecovery({ intervalMs: 60_000, limit: 2 }), b.startRecovery({ intervalMs: 60_000, limit: 2 })];
  try {
    expect((await loopA.tick()).takenOver).toEqual([]); // the holders' leases still hold
    clock.advance(LEASE_MS + 1);
    const [ticked, other] = await Promise.all([loopA.tick(), loopB.tick()]);
    const taken = [...ticked.takenOver, ...other.takenOver].map((entry) => entry.id);
    expect(ticked.takenOver.length).toBeLessThanOrEqual(2);
    expect(other.takenOver.length).toBeLessThanOrEqual(2);
    expect(taken.sort()).toEqual(runs.map((run) => run.id).sort());
    expect(ran).toEqual([]); // not idempotent: never run again
    for (const run of runs) {
      const call = await store.get(run.id);
      // Taken over with ann's answer, though the approval expired meanwhile: it was given in time.
      expect(call).toMatchObject({ status: 'resolved', fence: 2, answeredBy: { id: 'ann' } });
      const recovery = await store.get(call?.next as string);
      expect(recovery).toMatchObject({ status: 'pending', request: { kind: 'recovery', data: { tool: 'ship', runId: run.runId } } });
      expect((await store.loadRun(run.runId))?.state).toMatchObject({
        phase: 'halted',
        halted: { calls: [{ pendingId: recovery?.request.id }] },
      });
    }
    expect(await store.list({ status: 'resolving' })).toEqual([]);
  } finally {
    await Promise.all([loopA.stop(), loopB.stop()]);
  }
});

it('runs on the runner’s clock: an idempotent call is replayed one interval after its lease lapsed; stop() ends the ticks', async () => {
  const { clock, store, ran, runner } = setup();
  const a = runner();
  const { runId } = await crashed(a, store, 'stock s1');
  const loop = a.startRecovery({ intervalMs: 500 });
  /** One interval on: the tick it fires has ended once the next is scheduled. */
  const interval = async () => {
    clock.advance(500);
    const next = clock.now() + 500;
    await until(() => clock.timers.some((timer) => timer.ms === 500 && timer.due === next));
  };
  // The ticks at 500 and 1,000 ms come while the dead holder's lease holds: nothing is taken over.
  await interval();
  await interval();
  expect(ran).toEqual([]);
  expect(await store.list({ status: 'resolving' })).toHaveLength(1);
  // Within the lease plus one interval, the call is taken over and replayed, and the run goes on.
  await interval();
  expect(ran).toEqual(['stock s1']);
  expect((await store.loadRun(runId))?.state).toMatchObject({ phase: 'done' });
  await loop.stop();
  expect(clock.timers).toEqual([]);
});

it('a halted run whose answer was given without its runner goes on at the next tick', async () => {
  const { store, ran, runner } = setup();
  const a = runner();
  const halted = await a.run('stock s2');
  const id = halted.status === 'halted' ? halted.pending.id : '';
  // A door with the coordinator alone: the call is settled, the run stays halted.
  await new ResumeCoordinator({ toolkit: a.toolkit, store }).resolve({ id, ok: true });
  expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'halted' });
  const loop = a.startRecovery({ intervalMs: 60_000 });
  try {
    expect((await loop.tick()).continued).toEqual([halted.runId]);
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'done' });
    expect(ran).toEqual(['stock s2']);
  } finally {
    await loop.stop();
  }
});

it('an answer that contradicts the one the dead holder recorded is refused, after the call was taken over under the rule', async () => {
  const { clock, store, ran, runner } = setup();
  const a = runner();
  const { id } = await crashed(a, store, 'ship i9');
  clock.advance(LEASE_MS + 1);
  await expect(a.coordinator.resolve({ id, ok: false, reason: 'declined' }, undefined, { by: { id: 'bob' } })).rejects.toBeInstanceOf(
    AlreadyResolvedError,
  );
  const call = await store.get(id);
  expect(call).toMatchObject({ status: 'resolved', fence: 2, answeredBy: { id: 'ann' } });
  expect(pendingOf(call!.outcome)).toMatchObject({ kind: 'recovery' });
  expect(ran).toEqual([]);
});
