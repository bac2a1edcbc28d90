import type { PrunableStore, PruneOptions, PrunedBatch, RunStore } from '../runner';
import type { SessionStore, StoredSession } from '../sessions/store';
import type { SuspensionStore } from '../suspension';
import { testGlobals } from './globals';
import { sampleCall } from './store-contract';

const OLD = '2020-01-01T00:00:00.000Z';
const CUTOFF = new Date('2025-01-01T00:00:00.000Z');
const YOUNG = '2030-01-01T00:00:00.000Z';
const INVALID = 'TOOLNEXUS_INVALID_ARGUMENT';

type Store = SuspensionStore & Partial<RunStore & SessionStore & PrunableStore>;

/**
 * Retention (`prune`), checked on a store that has it: only what the cut-offs name goes, in
 * batches, and nothing still in flight (a waiting call, a settled link whose next request
 * waits, a running or halted run, a session with an active run). A store without `prune`
 * passes these by having nothing to check.
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
      const report = await store.prune({ settledBefore: CUTOFF, batchSize: 2 });
      expect(report).toEqual({ suspensions: 5, runs: 0, sessions: 0, streams: 0, batches: 3 });
      for (const id of ['s1', 's2', 's3', 's4', 's5']) expect(await store.get(id)).toBeUndefined();
      for (const id of ['young', 'waiting', 'link-1', 'link-2']) expect((await store.get(id))?.request.id).toBe(id);
      expect(await store.prune({ settledBefore: CUTOFF })).toEqual({ suspensions: 0, runs: 0, sessions: 0, streams: 0, batches: 0 });
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
      expect(await store.prune({ finishedBefore: CUTOFF })).toEqual({ suspensions: 0, runs: 2, sessions: 0, streams: 0, batches: 1 });
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
      expect(await store.prune({ idleBefore: CUTOFF })).toEqual({ suspensions: 0, runs: 0, sessions: 1, streams: 0, batches: 1 });
      expect(await store.loadSession('idle-old')).toBeUndefined();
      expect((await store.loadSession('busy-old'))?.id).toBe('busy-old');
      expect((await store.loadSession('idle-young'))?.id).toBe('idle-young');
    });

    it('hands each batch to archive before deleting it, and deletes nothing of a batch whose archive throws', async () => {
      const store = prunable();
      if (!store) return;
      for (const id of ['a1', 'a2', 'a3']) await store.insert(sampleCall(id, { status: 'expired', updatedAt: OLD }));
      const archived: PrunedBatch[] = [];
      const report = await store.prune({ settledBefore: CUTOFF, batchSize: 2, archive: (batch) => void archived.push(batch) });
      expect(report.suspensions).toBe(3);
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
