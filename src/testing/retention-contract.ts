import type { Delivery, DeliveryStore } from '../deliveries/store';
import { success } from '../results/helpers';
import type { PrunableStore, PruneOptions, PrunedBatch, PruneReport, RunStore } from '../runner';
import type { A2ATaskRecord, A2ATaskStore } from '../stores/a2a-tasks';
import type { KeyedCallStore } from '../suspension/keyed';
import type { SessionStore, StoredSession } from '../sessions/store';
import type { SuspensionStore } from '../suspension';
import { testGlobals } from './globals';
import { sampleCall } from './store-contract';

const OLD = '2020-01-01T00:00:00.000Z';
const CUTOFF = new Date('2025-01-01T00:00:00.000Z');
const YOUNG = '2030-01-01T00:00:00.000Z';
const INVALID = 'TOOLNEXUS_INVALID_ARGUMENT';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

type Store = SuspensionStore &
  Partial<RunStore & SessionStore & PrunableStore & KeyedCallStore & A2ATaskStore & { deliveries: DeliveryStore }>;

/** A report that deleted only what `counts` says. */
function report(counts: Partial<PruneReport>): PruneReport {
  return { suspensions: 0, runs: 0, sessions: 0, streams: 0, keyedCalls: 0, a2aTasks: 0, deliveries: 0, batches: 0, ...counts };
}

/**
 * Retention (`prune`), checked on a store that has it: only what the cut-offs name goes, in
 * batches, and nothing still in flight (a waiting call, a settled link whose next request
 * waits, a running or halted run, a session with an active run, a served call's key still
 * held, an A2A task whose run goes on or whose outbox still has to deliver, a card still to
 * post or edit). A store without `prune` passes these by having nothing to check.
 */
export function describeRetentionContract(current: () => SuspensionStore): void {
  const { describe, it, expect } = testGlobals();
  const prunable = (): (Store & PrunableStore) | undefined => {
    const store = current() as Store;
    return typeof store.prune === 'function' ? (store as Store & PrunableStore) : undefined;
  };

  describe('retention (prune)', () => {
    it('deletes settled suspensions before the cut-off in batches, and keeps what is in flight', async () => {
      const store = prunable();
      if (!store) return;
      for (const id of ['s1', 's2', 's3', 's4', 's5']) await store.insert(sampleCall(id, { status: 'resolved', updatedAt: OLD }));
      await store.insert(sampleCall('young', { status: 'declined', updatedAt: YOUNG }));
      await store.insert(sampleCall('waiting', { status: 'pending' }));
      await store.insert(sampleCall('link-1', { status: 'resolved', updatedAt: OLD, next: 'link-2' }));
      await store.insert(sampleCall('link-2', { status: 'pending' }));
      expect(await store.prune({ settledBefore: CUTOFF, batchSize: 2 })).toEqual(report({ suspensions: 5, batches: 3 }));
      for (const id of ['s1', 's2', 's3', 's4', 's5']) expect(await store.get(id)).toBeUndefined();
      for (const id of ['young', 'waiting', 'link-1', 'link-2']) expect((await store.get(id))?.request.id).toBe(id);
      expect(await store.prune({ settledBefore: CUTOFF })).toEqual(report({}));
    });

    it('deletes finished runs before the cut-off, never a running or halted one', async () => {
      const store = prunable();
      if (!store?.saveRun || !store.loadRun) return;
      const save = (runId: string, phase: string, updatedAt: string) => store.saveRun?.({ runId, version: 1, state: { phase }, updatedAt });
      await save('done-old', 'done', OLD);
      await save('incomplete-old', 'incomplete', OLD);
      await save('running-old', 'running', OLD);
      await save('halted-old', 'halted', OLD);
      await save('done-young', 'done', YOUNG);
      expect(await store.prune({ finishedBefore: CUTOFF })).toEqual(report({ runs: 2, batches: 1 }));
      expect(await store.loadRun('done-old')).toBeUndefined();
      expect(await store.loadRun('incomplete-old')).toBeUndefined();
      for (const id of ['running-old', 'halted-old', 'done-young']) expect((await store.loadRun(id))?.runId).toBe(id);
    });

    it('deletes idle sessions before the cut-off, never one with an active run', async () => {
      const store = prunable();
      if (!store?.saveSession || !store.loadSession) return;
      const session = (id: string, updatedAt: string, active?: StoredSession['active']): StoredSession => ({
        id,
        version: 1,
        messages: [{ role: 'user', content: 'hi' }],
        createdAt: OLD,
        updatedAt,
        ...(active ? { active } : {}),
      });
      await store.saveSession(session('idle-old', OLD));
      await store.saveSession(session('busy-old', OLD, { runId: 'r1', phase: 'halted' }));
      await store.saveSession(session('idle-young', YOUNG));
      expect(await store.prune({ idleBefore: CUTOFF })).toEqual(report({ sessions: 1, batches: 1 }));
      expect(await store.loadSession('idle-old')).toBeUndefined();
      expect((await store.loadSession('busy-old'))?.id).toBe('busy-old');
      expect((await store.loadSession('idle-young'))?.id).toBe('idle-young');
    });

    it('deletes served calls’ keys whose outcome was kept before the cut-off, never one still held', async () => {
      const store = prunable();
      if (!store?.beginKeyed || !store.finishKeyed) return;
      for (const key of ['kept-1', 'kept-2']) {
        const start = await store.beginKeyed(key, HOUR_MS, DAY_MS);
        expect(start).toEqual({ state: 'started', fence: 1 });
        expect(await store.finishKeyed(key, 1, success(`ran ${key}`))).toBe(true);
      }
      expect(await store.beginKeyed('held', HOUR_MS, DAY_MS)).toEqual({ state: 'started', fence: 1 });
      // Kept now, by the store's clock: after a cut-off in the past, so nothing goes.
      expect(await store.prune({ finishedBefore: CUTOFF })).toEqual(report({}));
      expect(await store.beginKeyed('kept-1', HOUR_MS, DAY_MS)).toMatchObject({ state: 'done', outcome: { output: 'ran kept-1' } });
      const archived: PrunedBatch[] = [];
      const pruned = await store.prune({ finishedBefore: new Date(YOUNG), batchSize: 1, archive: (batch) => void archived.push(batch) });
      expect(pruned).toEqual(report({ keyedCalls: 2, batches: 2 }));
      expect(archived.map((batch) => `${batch.table} ${String(batch.rows[0]?.key)}`).sort()).toEqual([
        'keyedCalls kept-1',
        'keyedCalls kept-2',
      ]);
      // Its outcome gone, a repeat of the key runs again; the held key still makes a repeat wait.
      expect(await store.beginKeyed('kept-1', HOUR_MS, DAY_MS)).toEqual({ state: 'started', fence: 1 });
      expect(await store.beginKeyed('held', HOUR_MS, DAY_MS)).toEqual({ state: 'running' });
    });

    it('deletes A2A tasks whose run ended before the cut-off and whose outbox is empty, never one live or still pushing', async () => {
      const store = prunable();
      if (!store?.saveA2ATask || !store.loadA2ATask || !store.saveRun) return;
      const task = (taskId: string, createdAt: string, dueAt?: number): A2ATaskRecord => ({
        taskId,
        owner: 'ana',
        contextId: 'ctx-1',
        createdAt,
        version: 1,
        state: { configs: [], outbox: dueAt === undefined ? [] : [{ id: 'n1' }] },
        ...(dueAt === undefined ? {} : { dueAt }),
      });
      for (const [runId, phase, updatedAt] of [
        ['ended', 'done', OLD],
        ['waiting', 'halted', OLD],
        ['recent', 'failed', YOUNG],
        ['pushing', 'done', OLD],
      ] as const)
        await store.saveRun({ runId, version: 1, state: { phase }, updatedAt });
      for (const record of [
        task('ended', OLD),
        task('waiting', OLD),
        task('recent', OLD),
        task('pushing', OLD, Date.parse(OLD)),
        task('never-kept', OLD),
        task('new', YOUNG),
      ])
        expect(await store.saveA2ATask(record)).toBe(true);
      // The task without a kept run goes with the one whose run ended; the pushing task's run goes, the task stays.
      expect(await store.prune({ finishedBefore: CUTOFF })).toEqual(report({ a2aTasks: 2, runs: 2, batches: 2 }));
      for (const id of ['ended', 'never-kept']) expect(await store.loadA2ATask(id)).toBeUndefined();
      for (const id of ['waiting', 'recent', 'pushing', 'new']) expect((await store.loadA2ATask(id))?.taskId).toBe(id);
      // Its outbox delivered, the pushing task goes at the next prune.
      expect(await store.saveA2ATask({ ...task('pushing', OLD), version: 2 })).toBe(true);
      expect(await store.prune({ finishedBefore: CUTOFF })).toEqual(report({ a2aTasks: 1, batches: 1 }));
      expect(await store.loadA2ATask('pushing')).toBeUndefined();
    });

    it('deletes deliveries done and last saved before the cut-off, never a card still to post or edit', async () => {
      const store = prunable();
      if (!store?.deliveries) return;
      const card = (callId: string, done: boolean, at: string): Delivery => ({
        id: `${callId} slack:C1`,
        callId,
        platform: 'slack',
        target: 'slack:C1',
        version: 1,
        done,
        attempts: done ? 0 : 3,
        dueAt: Date.parse(at),
      });
      for (const delivery of [card('c1', true, OLD), card('c2', true, OLD), card('c3', false, OLD), card('c4', true, YOUNG)])
        expect(await store.deliveries.insertDelivery(delivery)).toBe(true);
      expect(await store.prune({ finishedBefore: CUTOFF, batchSize: 1 })).toEqual(report({ deliveries: 2, batches: 2 }));
      for (const call of ['c1', 'c2']) expect(await store.deliveries.getDelivery(`${call} slack:C1`)).toBeUndefined();
      for (const call of ['c3', 'c4']) expect((await store.deliveries.getDelivery(`${call} slack:C1`))?.callId).toBe(call);
    });

    it('hands each batch to archive before deleting it, and deletes nothing of a batch whose archive throws', async () => {
      const store = prunable();
      if (!store) return;
      for (const id of ['a1', 'a2', 'a3']) await store.insert(sampleCall(id, { status: 'expired', updatedAt: OLD }));
      const archived: PrunedBatch[] = [];
      const pruned = await store.prune({ settledBefore: CUTOFF, batchSize: 2, archive: (batch) => void archived.push(batch) });
      expect(pruned.suspensions).toBe(3);
      expect(archived.map((batch) => [batch.table, batch.rows.length])).toEqual([
        ['suspensions', 2],
        ['suspensions', 1],
      ]);
      expect(archived[0]?.rows[0]).toMatchObject({ id: 'a1', tool: 'transfer' });
      await store.insert(sampleCall('kept', { status: 'cancelled', updatedAt: OLD }));
      await expect(
        store.prune({
          settledBefore: CUTOFF,
          archive: () => {
            throw new Error('archive is down');
          },
        }),
      ).rejects.toThrow('archive is down');
      expect((await store.get('kept'))?.request.id).toBe('kept');
    });

    it('stops after maxBatches, and refuses options that prune nothing or are out of range', async () => {
      const store = prunable();
      if (!store) return;
      for (const id of ['m1', 'm2', 'm3']) await store.insert(sampleCall(id, { status: 'resolved', updatedAt: OLD }));
      expect(await store.prune({ settledBefore: CUTOFF, batchSize: 1, maxBatches: 2 })).toMatchObject({ suspensions: 2, batches: 2 });
      expect((await store.get('m3'))?.request.id).toBe('m3');
      const refused: PruneOptions[] = [
        {},
        { settledBefore: CUTOFF, batchSize: 0 },
        { settledBefore: new Date('nope') },
        { idleBefore: CUTOFF, maxBatches: 0 },
      ];
      for (const options of refused) await expect(store.prune(options)).rejects.toMatchObject({ code: INVALID });
    });
  });
}
