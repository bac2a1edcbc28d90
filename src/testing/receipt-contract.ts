import { success } from '../index';
import type { SuspensionStore } from '../suspension';
import type { Claim } from '../suspension/store';
import type { Receipt } from '../toolkit/context';
import { storeGlobals } from './globals';
import { sampleCall } from './store-contract';

/** Leases in these tests are real and short; tests wait twice as long for one to lapse. */
const SHORT_LEASE_MS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const receipt = (id: string, attempt: number, status = 'succeeded'): Receipt => ({
  system: 'stripe',
  id,
  status,
  at: '2030-01-01T00:00:01.000Z',
  attempt,
  detail: { amount: 4200, currency: 'eur', live: false, note: null },
});

/**
 * Receipts (docs/tools.md, "Idempotency keys and receipts"): a store with `recordReceipt` appends
 * each to the claimed row at once, under the claim's fence, so it outlives a crash before the
 * outcome; `complete` keeps the settlement's receipts with the outcome in the same write, and
 * passes them on to the next link. A store without `recordReceipt` is checked on the latter only.
 */
export function describeReceiptContract(current: () => SuspensionStore): void {
  let store: SuspensionStore;
  const { describe, it, expect } = storeGlobals(current, (each) => (store = each));

  describe('receipts', () => {
    it('appends a receipt to the claimed call at once, in order, and only under the current fence', async () => {
      if (!store.recordReceipt) return;
      await store.insert(sampleCall('pnd-rcpt'));
      const pendingClaim = { id: 'pnd-rcpt', fence: 1 } as Claim;
      expect(await store.recordReceipt(pendingClaim, receipt('ch_0', 1))).toBe(false);
      const first = (await store.claim('pnd-rcpt', { id: 'pnd-rcpt', ok: true }, SHORT_LEASE_MS))!;
      expect(await store.recordReceipt(first, receipt('ch_1', 1))).toBe(true);
      expect(await store.recordReceipt(first, receipt('ch_1', 1, 'captured'))).toBe(true);
      // Written before any outcome: what a crash here leaves behind.
      expect((await store.get('pnd-rcpt'))?.receipts).toEqual([receipt('ch_1', 1), receipt('ch_1', 1, 'captured')]);
      await sleep(2 * SHORT_LEASE_MS);
      const second = (await store.claim('pnd-rcpt', { id: 'pnd-rcpt', ok: true }, 60_000))!;
      // The takeover reads what the dead holder recorded; the displaced holder records no more.
      expect(second.call.receipts).toEqual([receipt('ch_1', 1), receipt('ch_1', 1, 'captured')]);
      expect(await store.recordReceipt(first, receipt('ch_stale', 1))).toBe(false);
      expect(await store.recordReceipt(second, receipt('ch_1', 2))).toBe(true);
      const all = [receipt('ch_1', 1), receipt('ch_1', 1, 'captured'), receipt('ch_1', 2)];
      expect(await store.complete(second, { status: 'resolved', outcome: success('charged'), receipts: all })).toBe(true);
      expect((await store.get('pnd-rcpt'))?.receipts).toEqual(all);
      expect(await store.recordReceipt(second, receipt('ch_late', 2))).toBe(false);
      expect((await store.get('pnd-rcpt'))?.receipts).toEqual(all);
    });

    it('keeps the settlement’s receipts with the outcome and passes them on to the next link', async () => {
      await store.insert(sampleCall('pnd-rcpt-s'));
      const claim = (await store.claim('pnd-rcpt-s', { id: 'pnd-rcpt-s', ok: true }, 60_000))!;
      const receipts = [receipt('ch_9', 1)];
      const next = { ...sampleCall('pnd-rcpt-s2', { kind: 'recovery' }), receipts };
      expect(await store.complete(claim, { status: 'resolved', outcome: success('asked'), receipts, next })).toBe(true);
      expect(await store.get('pnd-rcpt-s')).toMatchObject({ status: 'resolved', outcome: { output: 'asked' }, receipts });
      expect((await store.get('pnd-rcpt-s2'))?.receipts).toEqual(receipts);
      expect((await store.history({ limit: 1 }))[0]?.receipts).toEqual(receipts);
    });

    it('keeps receipts absent when none was recorded, and a settlement without them keeps what was appended', async () => {
      await store.insert(sampleCall('pnd-rcpt-none'));
      const claim = (await store.claim('pnd-rcpt-none', { id: 'pnd-rcpt-none', ok: true }, 60_000))!;
      if (store.recordReceipt) await store.recordReceipt(claim, receipt('ch_2', 1));
      await store.complete(claim, { status: 'resolved', outcome: success('ok') });
      expect((await store.get('pnd-rcpt-none'))?.receipts).toEqual(store.recordReceipt ? [receipt('ch_2', 1)] : undefined);
      await store.insert(sampleCall('pnd-rcpt-plain'));
      expect((await store.get('pnd-rcpt-plain'))?.receipts).toBeUndefined();
    });
  });
}
