import type { SuspensionStore } from '../suspension';
import type { McpTaskRecord, McpTaskStore } from '../stores/mcp-tasks';
import { storeGlobals } from './globals';

/** Leases in these tests are real and short; a lapse is waited for (by the store's own judgement), never assumed. */
const SHORT_LEASE_MS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const task = (taskId: string, version: number, status: McpTaskRecord['status'], state: Record<string, unknown> = {}): McpTaskRecord => ({
  taskId,
  owner: 'alice',
  status,
  version,
  createdAt: '2030-01-01T00:00:00.000Z',
  updatedAt: `2030-01-01T00:00:0${Math.min(version, 9)}.000Z`,
  state,
});

/**
 * The tasks of served MCP calls (docs/mcp.md, "Tasks"), for a store that keeps them
 * (`loadMcpTask`/`saveMcpTask`/`renewMcpTask`/`pruneMcpTasks`; every built-in store does):
 * records round-trip as JSON under a version compare-and-set, owner and creation are the first
 * save's, a `working` task's lease is renewed only at its version and read as lapsed by the
 * store's clock once it ran out, and the prune deletes only old tasks nobody holds.
 * A store without them passes by having nothing to check.
 */
export function describeMcpTaskContract(current: () => SuspensionStore): void {
  let store: SuspensionStore & Partial<McpTaskStore>;
  const { describe, it, expect } = storeGlobals(current, (each) => (store = each));

  describe('MCP tasks', () => {
    it('saves a task by version compare-and-set, JSON round-trip, owner and creation the first save’s', async () => {
      if (!store.saveMcpTask || !store.loadMcpTask) return;
      expect(await store.loadMcpTask('tsk-1')).toBeUndefined();
      expect(await store.saveMcpTask(task('tsk-1', 1, 'working', { tool: 'slow' }), 60_000)).toBe(true);
      expect(await store.saveMcpTask(task('tsk-1', 1, 'working'), 60_000)).toBe(false);
      expect(await store.loadMcpTask('tsk-1')).toEqual({ ...task('tsk-1', 1, 'working', { tool: 'slow' }), lapsed: false });
      const result = { content: [{ type: 'text', text: 'done ✓ "quoted"' }], structuredContent: { n: 1.5, list: [null, true] } };
      const later = { ...task('tsk-1', 2, 'completed', { result }), owner: 'mallory', createdAt: '2031-01-01T00:00:00.000Z' };
      expect(await store.saveMcpTask({ ...later, version: 3 })).toBe(false);
      expect(await store.saveMcpTask(later)).toBe(true);
      expect(await store.saveMcpTask(later)).toBe(false);
      expect(await store.loadMcpTask('tsk-1')).toEqual({ ...task('tsk-1', 2, 'completed', { result }), lapsed: false });
      const invalid = { code: 'TOOLNEXUS_INVALID_ARGUMENT' };
      await expect(store.saveMcpTask({ ...task('', 1, 'working') })).rejects.toMatchObject(invalid);
      await expect(store.saveMcpTask({ ...task('tsk-2', 1, 'working'), owner: '' })).rejects.toMatchObject(invalid);
      await expect(store.saveMcpTask({ ...task('tsk-2', 1, 'working'), status: 'done' as never })).rejects.toMatchObject(invalid);
      await expect(store.saveMcpTask(task('tsk-2', 1, 'working'), 0)).rejects.toMatchObject(invalid);
      expect(await store.loadMcpTask('tsk-2')).toBeUndefined();
    });

    it('of concurrent savers of one version, exactly one wins', async () => {
      if (!store.saveMcpTask || !store.loadMcpTask) return;
      await store.saveMcpTask(task('tsk-race', 1, 'working'), 60_000);
      const won = await Promise.all([
        store.saveMcpTask(task('tsk-race', 2, 'cancelled')),
        store.saveMcpTask(task('tsk-race', 2, 'completed', { result: {} })),
        store.saveMcpTask(task('tsk-race', 2, 'failed', { error: { code: -32603, message: 'lapsed' } })),
      ]);
      expect(won.filter(Boolean)).toHaveLength(1);
      expect((await store.loadMcpTask('tsk-race'))?.version).toBe(2);
    });

    it('reads a working task lapsed once its lease ran out, renews it only at its version while working', async () => {
      if (!store.saveMcpTask || !store.loadMcpTask || !store.renewMcpTask) return;
      expect(await store.saveMcpTask(task('tsk-lease', 1, 'working'), SHORT_LEASE_MS)).toBe(true);
      expect(await store.renewMcpTask('tsk-lease', 1, 60_000)).toBe(true);
      await sleep(2 * SHORT_LEASE_MS);
      // Renewed for a minute: not lapsed.
      expect((await store.loadMcpTask('tsk-lease'))?.lapsed).toBe(false);
      expect(await store.renewMcpTask('tsk-lease', 2, 60_000)).toBe(false);
      expect(await store.renewMcpTask('tsk-unknown', 1, 60_000)).toBe(false);
      expect(await store.renewMcpTask('tsk-lease', 1, SHORT_LEASE_MS)).toBe(true);
      let lapsed = false;
      for (let tries = 0; tries < 100 && !lapsed; tries++) {
        await sleep(SHORT_LEASE_MS);
        lapsed = (await store.loadMcpTask('tsk-lease'))?.lapsed === true;
      }
      expect(lapsed).toBe(true);
      // A reader writes what it found (once: the version moves), and the late holder can no longer renew.
      expect(await store.saveMcpTask(task('tsk-lease', 2, 'failed', { error: { code: -32603, message: 'lapsed' } }))).toBe(true);
      expect(await store.renewMcpTask('tsk-lease', 1, 60_000)).toBe(false);
      expect(await store.loadMcpTask('tsk-lease')).toMatchObject({ status: 'failed', lapsed: false });
      // A task saved settled is held by nobody: it neither lapses nor renews.
      expect(await store.saveMcpTask(task('tsk-round', 1, 'input_required', { answers: {} }))).toBe(true);
      expect(await store.renewMcpTask('tsk-round', 1, 60_000)).toBe(false);
      expect((await store.loadMcpTask('tsk-round'))?.lapsed).toBe(false);
      await expect(store.renewMcpTask('tsk-round', 1, -1)).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    });

    it('prunes tasks last changed before the cut-off that nobody holds, at most `limit` at a time', async () => {
      if (!store.saveMcpTask || !store.loadMcpTask || !store.pruneMcpTasks) return;
      await store.saveMcpTask(task('tsk-old-1', 1, 'completed', { result: {} }));
      await store.saveMcpTask(task('tsk-old-2', 1, 'cancelled'));
      await store.saveMcpTask(task('tsk-held', 1, 'working'), 60_000);
      await store.saveMcpTask(task('tsk-gone', 1, 'working'), SHORT_LEASE_MS);
      await store.saveMcpTask({ ...task('tsk-new', 1, 'failed'), updatedAt: '2030-06-01T00:00:00.000Z' });
      let lapsed = false;
      for (let tries = 0; tries < 100 && !lapsed; tries++) {
        await sleep(SHORT_LEASE_MS);
        lapsed = (await store.loadMcpTask('tsk-gone'))?.lapsed === true;
      }
      const cutoff = '2030-02-01T00:00:00.000Z';
      expect(await store.pruneMcpTasks(cutoff, 2)).toBe(2);
      expect(await store.pruneMcpTasks(cutoff, 100)).toBe(1);
      expect(await store.pruneMcpTasks(cutoff, 100)).toBe(0);
      expect(await store.loadMcpTask('tsk-held')).toBeDefined();
      expect(await store.loadMcpTask('tsk-new')).toBeDefined();
      for (const id of ['tsk-old-1', 'tsk-old-2', 'tsk-gone']) expect(await store.loadMcpTask(id)).toBeUndefined();
      await expect(store.pruneMcpTasks('yesterday', 10)).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
      await expect(store.pruneMcpTasks(cutoff, 0)).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    });
  });
}
