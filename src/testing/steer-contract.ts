import type { RunStore } from '../runner';
import type { PrunableStore } from '../runner/durability/retention';
import { storeGlobals } from './globals';

const AT = '2030-01-01T00:00:00.000Z';

/**
 * The steering queue (docs/agents.md, "Steering"), for a run store that keeps one
 * (`queueSteer`/`queuedSteers`/`dropSteers`; every built-in store does): messages queued for a
 * run with a checkpoint, in order, once per id, at most `max`, apart from the checkpoint's
 * version, deleted by id, and pruned with their run. A store without them passes by having nothing to check.
 */
export function describeSteerQueueContract(current: () => RunStore): void {
  let store: RunStore & Partial<PrunableStore>;
  const { describe, it, expect } = storeGlobals(current, (each) => (store = each));
  const running = (runId: string, version = 1, updatedAt = AT) =>
    store.saveRun({ runId, version, state: { phase: 'running', turns: 1 }, updatedAt });

  describe('steering queue', () => {
    it('queues messages for a run in order, once per id, without touching its checkpoint', async () => {
      if (!store.queueSteer || !store.queuedSteers || !store.dropSteers) return;
      expect(await store.queueSteer('run-s', { id: 'm1', content: 'nope' }, 10)).toBe('no-run');
      expect(await running('run-s')).toBe(true);
      expect(await store.queueSteer('run-s', { id: 'm1', content: 'first' }, 10)).toBe('queued');
      expect(await store.queueSteer('run-s', { id: 'm2', content: 'second ✓ "quoted"' }, 10)).toBe('queued');
      expect(await store.queueSteer('run-s', { id: 'm1', content: 'again' }, 10)).toBe('held');
      expect(await store.queuedSteers('run-s', 100)).toEqual([
        { id: 'm1', content: 'first' },
        { id: 'm2', content: 'second ✓ "quoted"' },
      ]);
      expect(await store.queuedSteers('run-s', 1)).toEqual([{ id: 'm1', content: 'first' }]);
      expect(await store.queuedSteers('run-other', 100)).toEqual([]);
      // The driver's compare-and-set goes on as if nothing was queued.
      expect((await store.loadRun('run-s'))?.version).toBe(1);
      expect(await running('run-s', 2)).toBe(true);
      expect(await store.dropSteers('run-s', ['m1', 'unknown'])).toBe(1);
      expect(await store.dropSteers('run-s', [])).toBe(0);
      expect(await store.queuedSteers('run-s', 100)).toEqual([{ id: 'm2', content: 'second ✓ "quoted"' }]);
      // A dropped id may be queued again (the runner knows a taken one by the run's transcript).
      expect(await store.queueSteer('run-s', { id: 'm1', content: 'later' }, 10)).toBe('queued');
      expect((await store.queuedSteers('run-s', 100)).map((steer) => steer.id)).toEqual(['m2', 'm1']);
    });

    it('refuses a message beyond the cap, and bad arguments, with nothing queued', async () => {
      if (!store.queueSteer || !store.queuedSteers) return;
      await running('run-cap');
      for (const id of ['a', 'b', 'c']) expect(await store.queueSteer('run-cap', { id, content: id }, 3)).toBe('queued');
      expect(await store.queueSteer('run-cap', { id: 'd', content: 'd' }, 3)).toBe('full');
      expect(await store.queueSteer('run-cap', { id: 'a', content: 'a' }, 3)).toBe('held');
      const invalid = { code: 'TOOLNEXUS_INVALID_ARGUMENT' };
      await expect(store.queueSteer('', { id: 'e', content: 'e' }, 10)).rejects.toMatchObject(invalid);
      await expect(store.queueSteer('run-cap', { id: '', content: 'e' }, 10)).rejects.toMatchObject(invalid);
      await expect(store.queueSteer('run-cap', { id: 'e', content: 'x'.repeat(100_001) }, 10)).rejects.toMatchObject(invalid);
      await expect(store.queueSteer('run-cap', { id: 'e', content: 'e' }, 0)).rejects.toMatchObject(invalid);
      await expect(store.queuedSteers('run-cap', 0)).rejects.toMatchObject(invalid);
      expect((await store.queuedSteers('run-cap', 100)).map((steer) => steer.id)).toEqual(['a', 'b', 'c']);
    });

    it('prunes a finished run’s queued messages with its checkpoint', async () => {
      if (!store.queueSteer || !store.queuedSteers || !store.prune) return;
      await running('run-gone');
      await running('run-kept');
      expect(await store.queueSteer('run-gone', { id: 'g', content: 'late' }, 10)).toBe('queued');
      expect(await store.queueSteer('run-kept', { id: 'k', content: 'kept' }, 10)).toBe('queued');
      expect(await store.saveRun({ runId: 'run-gone', version: 2, state: { phase: 'done' }, updatedAt: AT })).toBe(true);
      await store.prune({ finishedBefore: new Date('2030-01-02T00:00:00.000Z') });
      expect(await store.loadRun('run-gone')).toBeUndefined();
      expect(await store.queuedSteers('run-gone', 100)).toEqual([]);
      expect(await store.queuedSteers('run-kept', 100)).toEqual([{ id: 'k', content: 'kept' }]);
    });
  });
}
