import { Toolkit, defineTool, failure, pending, pendingOf, success } from '../index';
import { ResumeCoordinator, type SuspensionStore, type SuspendedCall } from '../suspension';
import { storeGlobals } from './globals';
import { sampleCall } from './store-contract';

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const SHORT_LEASE_MS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (calls: SuspendedCall[]) => calls.map((call) => call.request.id);
const INVALID_ARGUMENT = 'TOOLNEXUS_INVALID_ARGUMENT';

/**
 * The audit trail (docs/operating.md, "Audit trail"): who answered a call, when by the
 * store's clock and with which words, recorded in the claim's own write; and `history`,
 * the settled calls newest first. Checked on the store directly and through a coordinator.
 */
export function describeAuditContract(current: () => SuspensionStore): void {
  let store: SuspensionStore;
  const { describe, it, expect, beforeEach } = storeGlobals(current, (each) => (store = each));

  describe('audit trail', () => {
    it('records the principal, the comment and the answer instant with the claim, and a losing claim records nothing', async () => {
      await store.insert(sampleCall('pnd-audit'));
      const claim = (await store.claim('pnd-audit', { id: 'pnd-audit', ok: true }, 60_000, {
        by: { id: 'user:alice', name: 'Alice' },
        comment: 'looks right',
      }))!;
      expect(claim.call).toMatchObject({ answeredBy: { id: 'user:alice', name: 'Alice' }, answeredAt: claim.at, comment: 'looks right' });
      expect(claim.call.answeredAt).toMatch(RFC3339);
      expect(
        await store.claim('pnd-audit', { id: 'pnd-audit', ok: false }, 60_000, { by: { id: 'user:bob' }, comment: 'no' }),
      ).toBeUndefined();
      expect(await store.get('pnd-audit')).toEqual(claim.call);
      await store.complete(claim, { status: 'resolved', outcome: success('done') });
      expect(await store.get('pnd-audit')).toMatchObject({
        status: 'resolved',
        answeredBy: { id: 'user:alice', name: 'Alice' },
        answeredAt: claim.at,
        comment: 'looks right',
      });
    });

    it('records the answer instant without a principal, and a takeover replaces the audit with its own', async () => {
      await store.insert(sampleCall('pnd-take'));
      const first = (await store.claim('pnd-take', { id: 'pnd-take', ok: true }, SHORT_LEASE_MS, { by: { id: 'a' }, comment: 'first' }))!;
      await sleep(2 * SHORT_LEASE_MS);
      const second = (await store.claim('pnd-take', { id: 'pnd-take', ok: true }, 60_000))!;
      expect(second.call.answeredAt).toBe(second.at);
      expect(Date.parse(second.at)).toBeGreaterThanOrEqual(Date.parse(first.at));
      expect(second.call.answeredBy).toBeUndefined();
      expect(second.call.comment).toBeUndefined();
      expect(Object.keys((await store.get('pnd-take'))!)).not.toContain('answeredBy');
    });

    it('round-trips the audit fields when inserted', async () => {
      const call = sampleCall('pnd-rt-audit', {
        status: 'declined',
        answeredBy: { id: 'cli:root', name: 'root' },
        answeredAt: '2030-01-02T03:04:05.678Z',
        comment: 'not today',
        outcome: failure('declined/expired: no'),
        updatedAt: '2030-01-02T03:04:05.678Z',
      });
      await store.insert(call);
      expect(await store.get('pnd-rt-audit')).toEqual(call);
    });

    it('lists settled calls newest settlement first in history, filtered by status, kind, runId and tool, with a limit', async () => {
      const calls = [
        sampleCall('pnd-h1', { runId: 'r1' }),
        sampleCall('pnd-h2', { runId: 'r2', kind: 'input' }),
        sampleCall('pnd-h3', { runId: 'r1', tool: 'refund' }),
        sampleCall('pnd-h4', { runId: 'r1' }),
        sampleCall('pnd-h5', { runId: 'r1' }),
      ];
      for (const call of calls) await store.insert(call);
      const settle = async (id: string, status: 'resolved' | 'declined' | 'cancelled') => {
        const claim = (await store.claim(id, { id, ok: status === 'resolved' }, 60_000, { by: { id: `by-${id}` } }))!;
        expect(await store.complete(claim, { status, outcome: status === 'resolved' ? success(id) : failure(id) })).toBe(true);
        await sleep(5); // distinct settlement instants, by any store's millisecond clock
      };
      await settle('pnd-h3', 'resolved');
      await settle('pnd-h1', 'declined');
      await settle('pnd-h2', 'resolved');
      await settle('pnd-h5', 'cancelled');
      await store.claim('pnd-h4', { id: 'pnd-h4', ok: true }, 60_000); // resolving: not history yet

      const all = await store.history();
      expect(ids(all)).toEqual(['pnd-h5', 'pnd-h2', 'pnd-h1', 'pnd-h3']);
      expect(all[0]).toMatchObject({ status: 'cancelled', answeredBy: { id: 'by-pnd-h5' }, outcome: { output: 'pnd-h5', isError: true } });
      expect(ids(await store.history({ status: 'resolved' }))).toEqual(['pnd-h2', 'pnd-h3']);
      expect(ids(await store.history({ kind: 'input' }))).toEqual(['pnd-h2']);
      expect(ids(await store.history({ runId: 'r1' }))).toEqual(['pnd-h5', 'pnd-h1', 'pnd-h3']);
      expect(ids(await store.history({ tool: 'refund' }))).toEqual(['pnd-h3']);
      expect(ids(await store.history({ runId: 'r1', status: 'declined', tool: 'transfer', kind: 'approval' }))).toEqual(['pnd-h1']);
      expect(ids(await store.history({ limit: 2 }))).toEqual(['pnd-h5', 'pnd-h2']);
      expect(await store.history({ runId: 'nobody' })).toEqual([]);
    });
  });

  describe('audit trail through a ResumeCoordinator', () => {
    let coordinator: ResumeCoordinator;
    let runs: number;
    beforeEach(() => {
      runs = 0;
      const toolkit = new Toolkit().register(
        defineTool({
          name: 'transfer',
          description: 'Moves money after approval',
          async run(_args, ctx) {
            if (!ctx?.answer) return pending({ kind: 'approval', prompt: 'Transfer?' });
            runs++;
            await sleep(20); // holds the claim while a rival answers
            return success('transferred');
          },
        }),
      );
      coordinator = new ResumeCoordinator({ toolkit, store });
    });

    const suspend = async () => pendingOf(await coordinator.execute('transfer', {}, undefined, { runId: 'run-a' }))!.id;

    it('records who approved, when and why; of two racing approvers one wins and the call names the winner', async () => {
      const id = await suspend();
      const before = Date.now();
      const [a, b] = await Promise.allSettled([
        coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'user:alice' }, comment: 'ok by me' }),
        coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'user:bob' }, comment: 'fine' }),
      ]);
      expect(a).toEqual({ status: 'fulfilled', value: success('transferred') });
      expect(b).toEqual({ status: 'fulfilled', value: success('transferred') });
      expect(runs).toBe(1);
      const call = (await coordinator.get(id))!;
      expect(['user:alice', 'user:bob']).toContain(call.answeredBy?.id);
      expect(call.comment).toBe(call.answeredBy?.id === 'user:alice' ? 'ok by me' : 'fine');
      expect(Date.parse(call.answeredAt!)).toBeGreaterThanOrEqual(before - 2_000);
      expect(ids(await coordinator.history({ runId: 'run-a' }))).toEqual([id]);
    });

    it('tells the model a decline’s comment when the answer carries no reason, and keeps a given reason', async () => {
      const first = await suspend();
      const declined = await coordinator.resolve({ id: first, ok: false }, undefined, { by: { id: 'u' }, comment: 'over budget' });
      expect(declined.output).toBe('declined/expired: Transfer? (declined: "over budget")');
      expect((await coordinator.get(first))?.answer?.data).toEqual({ reason: 'over budget' });
      const second = await suspend();
      const own = await coordinator.resolve({ id: second, ok: false, data: { reason: 'policy 7' } }, undefined, { comment: 'see ticket' });
      expect(own.output).toBe('declined/expired: Transfer? (declined: "policy 7")');
      expect((await coordinator.get(second))?.comment).toBe('see ticket');
    });

    it('records who cancelled, with the reason as the comment', async () => {
      const id = await suspend();
      await coordinator.cancel(id, 'duplicate request', { by: { id: 'cli:ops' } });
      expect(await coordinator.get(id)).toMatchObject({ status: 'cancelled', answeredBy: { id: 'cli:ops' }, comment: 'duplicate request' });
      expect(runs).toBe(0);
    });

    it('keeps only a principal’s id and name', async () => {
      const id = await suspend();
      const by = { id: 'svc', name: 'Service', password: 'hunter2' } as { id: string; name: string };
      await coordinator.resolve({ id, ok: true }, undefined, { by });
      expect((await coordinator.get(id))?.answeredBy).toEqual({ id: 'svc', name: 'Service' });
      expect(JSON.stringify(await coordinator.get(id))).not.toContain('hunter2');
      expect(JSON.stringify(await coordinator.history())).not.toContain('hunter2');
    });

    it('refuses malformed options and history filters with TOOLNEXUS_INVALID_ARGUMENT before the store, changing nothing', async () => {
      const id = await suspend();
      const options: unknown[] = [
        'alice',
        { by: 'alice' },
        { by: { id: '' } },
        { by: { name: 'no id' } },
        { by: { id: 'a', name: 5 } },
        { by: { id: 'x'.repeat(201) } },
        { comment: 42 },
        { comment: 'x'.repeat(501) },
      ];
      for (const given of options) {
        await expect(coordinator.resolve({ id, ok: true }, undefined, given as never)).rejects.toMatchObject({ code: INVALID_ARGUMENT });
      }
      const filters: unknown[] = [null, { status: 'pending' }, { tool: 1 }, { limit: 0 }, { limit: 2.5 }, { limit: 1001 }];
      for (const filter of filters) await expect(coordinator.history(filter as never)).rejects.toMatchObject({ code: INVALID_ARGUMENT });
      expect((await coordinator.get(id))?.status).toBe('pending');
      expect(runs).toBe(0);
    });
  });
}
