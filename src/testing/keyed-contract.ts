import { defineTool, success, Toolkit } from '../index';
import { ResumeCoordinator, type SuspensionStore } from '../suspension';
import { executeOnce, type KeyedCallStore } from '../suspension/keyed';
import { storeGlobals } from './globals';

/** Leases in these tests are real and short; tests wait twice as long for one to lapse. */
const SHORT_LEASE_MS = 40;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The key lease of a served call that outlives it: long enough that a renewal every third of it holds on a loaded machine. */
const RUN_LEASE_MS = 600;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Served calls' incoming idempotency keys (src/suspension/keyed.ts), for a store that keeps them
 * (`beginKeyed`/`finishKeyed`; every built-in store does): one caller starts a key, a live holder
 * makes a repeat wait, the first outcome answers every repeat within the retention, a lapsed
 * holder's key is started again under a new fence that alone may finish or renew it, and a call
 * that runs longer than its lease keeps its key by renewing it.
 */
export function describeKeyedContract(current: () => SuspensionStore): void {
  let store: SuspensionStore & Partial<KeyedCallStore>;
  const { describe, it, expect } = storeGlobals(current, (each) => (store = each));

  describe('keyed calls', () => {
    it('starts a key once, keeps its first outcome for every repeat, and lets only its fence finish it', async () => {
      if (!store.beginKeyed || !store.finishKeyed) return;
      expect(await store.beginKeyed('k1', 60_000, DAY_MS)).toEqual({ state: 'started', fence: 1 });
      expect(await store.beginKeyed('k1', 60_000, DAY_MS)).toEqual({ state: 'running' });
      expect(await store.finishKeyed('k1', 2, success('forged'))).toBe(false);
      expect(await store.finishKeyed('k1', 1, success('charged', { id: 'ch_1' }))).toBe(true);
      expect(await store.finishKeyed('k1', 1, success('again'))).toBe(false);
      const done = { state: 'done', outcome: { output: 'charged', isError: false, metadata: { id: 'ch_1' } } };
      expect(await store.beginKeyed('k1', 60_000, DAY_MS)).toEqual(done);
      expect(await store.beginKeyed('k1', 60_000, DAY_MS)).toEqual(done);
      expect(await store.beginKeyed('k2', 60_000, DAY_MS)).toEqual({ state: 'started', fence: 1 });
    });

    it('starts a key again under a new fence once its holder’s lease lapsed, or its outcome is past the retention', async () => {
      if (!store.beginKeyed || !store.finishKeyed) return;
      expect(await store.beginKeyed('k-lapse', SHORT_LEASE_MS, DAY_MS)).toEqual({ state: 'started', fence: 1 });
      await sleep(2 * SHORT_LEASE_MS);
      expect(await store.beginKeyed('k-lapse', 60_000, DAY_MS)).toEqual({ state: 'started', fence: 2 });
      expect(await store.finishKeyed('k-lapse', 1, success('stale'))).toBe(false);
      expect(await store.finishKeyed('k-lapse', 2, success('fresh'))).toBe(true);
      expect(await store.beginKeyed('k-lapse', 60_000, DAY_MS)).toMatchObject({ state: 'done', outcome: { output: 'fresh' } });
      await sleep(2 * SHORT_LEASE_MS);
      expect(await store.beginKeyed('k-lapse', 60_000, SHORT_LEASE_MS / 4)).toEqual({ state: 'started', fence: 3 });
    });

    it('renews a held key’s lease only under its fence: a renewed key stays held past its first lease, a stale fence or a finished key is refused', async () => {
      if (!store.beginKeyed || !store.finishKeyed || !store.renewKeyed) return;
      expect(await store.beginKeyed('k-renew', SHORT_LEASE_MS, DAY_MS)).toEqual({ state: 'started', fence: 1 });
      expect(await store.renewKeyed('k-renew', 1, 60_000)).toBe(true);
      expect(await store.renewKeyed('k-renew', 2, 60_000)).toBe(false);
      expect(await store.renewKeyed('k-unknown', 1, 60_000)).toBe(false);
      await sleep(2 * SHORT_LEASE_MS);
      // Without the renewal the lease of SHORT_LEASE_MS would have lapsed and a repeat started the key again.
      expect(await store.beginKeyed('k-renew', 60_000, DAY_MS)).toEqual({ state: 'running' });
      expect(await store.finishKeyed('k-renew', 1, success('once'))).toBe(true);
      expect(await store.renewKeyed('k-renew', 1, 60_000)).toBe(false);
      expect(await store.beginKeyed('k-renew', 60_000, DAY_MS)).toMatchObject({ state: 'done', outcome: { output: 'once' } });
      // A holder whose lease lapsed and was taken over cannot renew it back: the newer fence holds it.
      expect(await store.beginKeyed('k-taken', SHORT_LEASE_MS, DAY_MS)).toEqual({ state: 'started', fence: 1 });
      await sleep(2 * SHORT_LEASE_MS);
      expect(await store.beginKeyed('k-taken', 60_000, DAY_MS)).toEqual({ state: 'started', fence: 2 });
      expect(await store.renewKeyed('k-taken', 1, 60_000)).toBe(false);
      expect(await store.renewKeyed('k-taken', 2, 60_000)).toBe(true);
    });

    it('keeps a served call’s key while it runs longer than its lease: a repeat meanwhile runs nothing', async () => {
      if (!store.beginKeyed || !store.renewKeyed) return;
      let runs = 0;
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const slow = defineTool({
        name: 'slow',
        description: 'Runs for as long as the test holds it',
        inputSchema: { type: 'object', properties: {} },
        run: async () => {
          const run = ++runs;
          // Only the first run waits: a second one (the hole this guards) answers at once, and the test says so.
          if (run === 1) await released;
          return success(`slow ${run}`);
        },
      });
      const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(slow), store });
      // Real time against the store's own clock: renewed every third of RUN_LEASE_MS, with two thirds to spare on a loaded machine.
      const keyed = { key: 'slow-key', principal: { id: 'alice' }, leaseMs: RUN_LEASE_MS };
      const first = executeOnce(coordinator, 'mcp', 'slow', {}, {}, keyed);
      await sleep(4 * RUN_LEASE_MS);
      const repeat = await executeOnce(coordinator, 'mcp', 'slow', {}, {}, keyed);
      expect(repeat.isError).toBe(true);
      expect(repeat.output).toContain('still running');
      expect(runs).toBe(1);
      release();
      expect((await first).output).toBe('slow 1');
      expect((await executeOnce(coordinator, 'mcp', 'slow', {}, {}, keyed)).output).toBe('slow 1');
      expect(runs).toBe(1);
    });

    it('lets exactly one of many concurrent begins of a key start it', async () => {
      if (!store.beginKeyed) return;
      const begun = await Promise.all(Array.from({ length: 8 }, () => store.beginKeyed!('k-race', 60_000, DAY_MS)));
      expect(begun.filter((start) => start.state === 'started')).toHaveLength(1);
    });

    it('runs a served call once per key and principal: a repeat gets the first outcome, another principal’s key is its own', async () => {
      if (!store.beginKeyed) return;
      let runs = 0;
      const keys: Array<string | undefined> = [];
      const charge = defineTool({
        name: 'charge',
        description: 'Charges once',
        inputSchema: { type: 'object', properties: {} },
        run: (_args, ctx) => {
          keys.push(ctx?.idempotencyKey);
          return success(`charge ${++runs}`);
        },
      });
      const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(charge), store });
      const as = (id: string) => ({ key: 'client-key-1', principal: { id } });
      const first = await executeOnce(coordinator, 'mcp', 'charge', {}, {}, as('alice'));
      const again = await executeOnce(coordinator, 'mcp', 'charge', {}, {}, as('alice'));
      const other = await executeOnce(coordinator, 'mcp', 'charge', {}, {}, as('bob'));
      expect([first.output, again.output, other.output]).toEqual(['charge 1', 'charge 1', 'charge 2']);
      expect(runs).toBe(2);
      // The tool's own key is the slot's, stable for the principal and key, another for another principal.
      expect(keys[0]).toMatch(/^tnx_/);
      expect(keys[1]).not.toBe(keys[0]);
      const unkeyed = await executeOnce(coordinator, 'mcp', 'charge', {}, {}, { key: undefined, principal: { id: 'alice' } });
      expect(unkeyed.output).toBe('charge 3');
      const tooLong = await executeOnce(coordinator, 'mcp', 'charge', {}, {}, { key: 'k'.repeat(256), principal: { id: 'alice' } });
      expect(tooLong.isError).toBe(true);
      expect(runs).toBe(3);
    });
  });
}
