import { success } from '../index';
import type { SettledPageQuery, SuspendedCall, SuspensionStore } from '../suspension';
import { storeGlobals } from './globals';
import { sampleCall } from './store-contract';

/** Every page of `query`, walked from the first by each page's `next`, with the size of each page. */
async function walk(store: SuspensionStore, query: Omit<SettledPageQuery, 'after'>): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let after: string | undefined;
  do {
    const page = await store.settledPage!({ ...query, ...(after === undefined ? {} : { after }) });
    ids.push(...page.calls.map((call) => call.request.id));
    sizes.push(page.calls.length);
    after = page.next;
  } while (after !== undefined && sizes.length < 100);
  return { ids, sizes };
}

const settled = (id: string, updatedAt: string, over: Partial<SuspendedCall> = {}): SuspendedCall =>
  sampleCall(id, { status: 'resolved', outcome: success('done'), updatedAt, ...over });

/**
 * The paged read of settled calls (`settledPage`, docs/operating.md, "Decisions as evaluation
 * data"): oldest settlement first, `[since, until)`, by tool, a bounded page at a time with a
 * cursor that survives calls settling between pages. A store without the optional method is
 * passed over (it cannot export decisions); every built-in store has it.
 */
export function describeSettledPageContract(current: () => SuspensionStore): void {
  let store: SuspensionStore;
  const { describe, it, expect } = storeGlobals(current, (each) => (store = each));

  describe('settled pages', () => {
    it('walks settled calls oldest settlement first, in [since, until), by tool, in bounded pages', async () => {
      if (store.settledPage === undefined) return;
      const calls = [
        settled('pg-late', '2030-01-01T00:00:09.000Z'),
        settled('pg-a', '2030-01-01T00:00:01.000Z'),
        settled('pg-b', '2030-01-01T00:00:02.000Z', { status: 'declined' }),
        // Three settled in one millisecond: the insertion order breaks the tie, and a page boundary between them loses none.
        settled('pg-c1', '2030-01-01T00:00:03.000Z'),
        settled('pg-c2', '2030-01-01T00:00:03.000Z', { tool: 'refund' }),
        settled('pg-c3', '2030-01-01T00:00:03.000Z', { status: 'expired' }),
        settled('pg-d', '2030-01-01T00:00:04.000Z', { status: 'cancelled' }),
        settled('pg-before', '2029-12-31T23:59:59.999Z'),
        sampleCall('pg-pending', { updatedAt: '2030-01-01T00:00:02.500Z' }),
        sampleCall('pg-resolving', { status: 'resolving', fence: 1, updatedAt: '2030-01-01T00:00:02.600Z' }),
      ];
      for (const call of calls) await store.insert(call);
      const query = { since: '2030-01-01T00:00:00.000Z', until: '2030-01-01T00:00:09.000Z', limit: 2 };
      const all = await walk(store, query);
      expect(all.ids).toEqual(['pg-a', 'pg-b', 'pg-c1', 'pg-c2', 'pg-c3', 'pg-d']);
      expect(all.sizes).toEqual([2, 2, 2]);
      expect((await walk(store, { ...query, limit: 4 })).sizes).toEqual([4, 2]);
      expect((await walk(store, { ...query, until: undefined, limit: 100 })).ids).toEqual([...all.ids, 'pg-late']);
      expect((await walk(store, { ...query, tools: ['refund'] })).ids).toEqual(['pg-c2']);
      expect((await walk(store, { ...query, tools: ['transfer', 'refund'], limit: 6 })).sizes).toEqual([6]);
      expect((await walk(store, { ...query, tools: [] })).ids).toEqual([]);
      const first = await store.settledPage({ ...query, since: '2030-01-01T00:00:03.000Z', limit: 1 });
      expect(first.calls.map((call) => call.request.id)).toEqual(['pg-c1']);
      expect(first.calls[0]).toEqual(calls[3]);
    });

    it('finds a call settled after the cursor in a later page, and refuses a cursor it did not write', async () => {
      if (store.settledPage === undefined) return;
      await store.insert(settled('pg-1', '2030-01-01T00:00:01.000Z'));
      await store.insert(settled('pg-2', '2030-01-01T00:00:02.000Z'));
      const query = { since: '2030-01-01T00:00:00.000Z', limit: 1 };
      const first = await store.settledPage(query);
      expect(first.next).toEqual(expect.any(String));
      await store.insert(settled('pg-3', '2030-01-01T00:00:03.000Z'));
      const second = await store.settledPage({ ...query, after: first.next });
      const third = await store.settledPage({ ...query, after: second.next });
      expect([...second.calls, ...third.calls].map((call) => call.request.id)).toEqual(['pg-2', 'pg-3']);
      expect(third.next).toBeUndefined();
      await expect(store.settledPage({ ...query, after: 'not a cursor' })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    });
  });
}
