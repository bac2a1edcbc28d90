import {
  DuplicateSuspensionError,
  InvalidArgumentError,
  PendingStoreError,
  failure,
  success,
  type Answer,
  type PendingStore,
  type RunCheckpoint,
  type SuspendedCall,
} from '../index';
import { testGlobals } from './globals';

/** Leases in these tests are real and short; tests wait twice as long for one to lapse. */
const SHORT_LEASE_MS = 40;
/** How far the store's clock (a database server on this host) may be from this process's in these tests. */
const CLOCK_SLACK_MS = 2_000;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The store contract, checked directly on whatever `current()` returns (a fresh, empty store per test). */
export function describeStoreContract(current: () => PendingStore): void {
  const { describe, it, expect, beforeEach } = testGlobals();
  let store: PendingStore;
  beforeEach(() => {
    store = current();
  });

  describe('store contract', () => {
    it('round-trips a call as JSON and hands out copies', async () => {
      const call = sampleCall('pnd-rt', {
        args: { account: 'a', nested: { list: [1, 'two', null], flag: true } },
        callId: 'call_1',
        runId: 'run_1',
      });
      await store.insert(call);
      call.args = 'mutated after insert';
      const read = await store.get('pnd-rt');
      expect(read).toEqual(
        sampleCall('pnd-rt', { args: { account: 'a', nested: { list: [1, 'two', null], flag: true } }, callId: 'call_1', runId: 'run_1' }),
      );
      (read as SuspendedCall).status = 'resolved';
      expect((await store.get('pnd-rt'))?.status).toBe('pending');
    });

    it('keeps optional fields absent when they were not given', async () => {
      await store.insert(sampleCall('pnd-min'));
      const read = (await store.get('pnd-min')) as SuspendedCall;
      expect(Object.keys(read).sort()).toEqual(['args', 'createdAt', 'request', 'status', 'tool']);
    });

    it('returns undefined for an unknown id', async () => {
      expect(await store.get('pnd-nope')).toBeUndefined();
    });

    it('refuses a duplicate id with DuplicateSuspensionError and keeps the first', async () => {
      await store.insert(sampleCall('pnd-dup', { args: { first: true } }));
      await expect(store.insert(sampleCall('pnd-dup', { args: { first: false } }))).rejects.toBeInstanceOf(DuplicateSuspensionError);
      expect((await store.get('pnd-dup'))?.args).toEqual({ first: true });
    });

    it('refuses arguments JSON cannot carry with PendingStoreError and stores nothing', async () => {
      await expect(store.insert(sampleCall('pnd-bigint', { args: { amount: 10n } }))).rejects.toBeInstanceOf(PendingStoreError);
      expect(await store.get('pnd-bigint')).toBeUndefined();
    });

    it('refuses a malformed call with InvalidArgumentError and stores nothing', async () => {
      const good = sampleCall('pnd-shape');
      const malformed: unknown[] = [
        null,
        { ...good, request: { kind: 'approval', prompt: 'no id' } },
        { ...good, request: { ...good.request, id: '' } },
        { ...good, tool: '' },
        { ...good, status: 'waiting' },
        { ...good, createdAt: undefined },
        { ...good, runId: 42 },
        { ...good, fence: 0 },
        { ...good, fence: 1.5 },
        { ...good, chain: 'no' },
        { ...good, chain: [{ request: good.request }] },
        { ...good, next: 7 },
        { ...good, binding: { digest: 'x' } },
      ];
      for (const call of malformed) await expect(store.insert(call as SuspendedCall)).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await store.list()).toEqual([]);
    });

    it('lists oldest first and filters by status, runId and kind (combined with AND)', async () => {
      await store.insert(sampleCall('pnd-c', { createdAt: '2026-01-03T00:00:00.000Z', runId: 'r1', kind: 'input' }));
      await store.insert(sampleCall('pnd-a', { createdAt: '2026-01-01T00:00:00.000Z', runId: 'r1', kind: 'approval' }));
      await store.insert(sampleCall('pnd-b', { createdAt: '2026-01-02T00:00:00.000Z', runId: 'r2', kind: 'approval' }));
      await store.insert(sampleCall('pnd-b2', { createdAt: '2026-01-02T00:00:00.000Z', kind: 'approval' }));
      const claimed = await store.claim('pnd-b', { id: 'pnd-b', ok: true }, 60_000);
      await store.complete(claimed!, { status: 'resolved', outcome: success('done') });
      const ids = (calls: SuspendedCall[]) => calls.map((c) => c.request.id);
      expect(ids(await store.list())).toEqual(['pnd-a', 'pnd-b', 'pnd-b2', 'pnd-c']);
      expect(ids(await store.list({}))).toEqual(['pnd-a', 'pnd-b', 'pnd-b2', 'pnd-c']);
      expect(ids(await store.list({ status: 'pending' }))).toEqual(['pnd-a', 'pnd-b2', 'pnd-c']);
      expect(ids(await store.list({ status: 'resolved' }))).toEqual(['pnd-b']);
      expect(ids(await store.list({ runId: 'r1' }))).toEqual(['pnd-a', 'pnd-c']);
      expect(ids(await store.list({ kind: 'approval' }))).toEqual(['pnd-a', 'pnd-b', 'pnd-b2']);
      expect(ids(await store.list({ kind: 'approval', status: 'pending', runId: 'r1' }))).toEqual(['pnd-a']);
      expect(ids(await store.list({ runId: 'nobody' }))).toEqual([]);
    });

    it('claims a pending call once: status resolving, the answer, fence 1 and a lease from the store clock', async () => {
      await store.insert(sampleCall('pnd-claim'));
      const answer: Answer = { id: 'pnd-claim', ok: true, data: { note: 'yes' } };
      const before = Date.now();
      const claim = await store.claim('pnd-claim', answer, 5_000);
      const after = Date.now();
      expect(claim).toBeDefined();
      expect(claim!.id).toBe('pnd-claim');
      expect(claim!.fence).toBe(1);
      expect(claim!.at).toMatch(RFC3339);
      // The store's clock (the database server's for PostgreSQL) runs on this host in tests.
      expect(Date.parse(claim!.at)).toBeGreaterThanOrEqual(before - CLOCK_SLACK_MS);
      expect(Date.parse(claim!.at)).toBeLessThanOrEqual(after + CLOCK_SLACK_MS);
      expect(claim!.call).toMatchObject({ status: 'resolving', answer, fence: 1, updatedAt: claim!.at });
      expect(Date.parse(claim!.call.leaseUntil!) - Date.parse(claim!.at)).toBe(5_000);
      expect(await store.get('pnd-claim')).toEqual(claim!.call);
      expect(await store.claim('pnd-claim', answer, 5_000)).toBeUndefined();
      expect(await store.claim('pnd-unknown', { id: 'pnd-unknown', ok: true }, 5_000)).toBeUndefined();
      expect((await store.get('pnd-claim'))?.fence).toBe(1);
    });

    it('lets exactly one of many concurrent claims win', async () => {
      await store.insert(sampleCall('pnd-race'));
      const claims = await Promise.all(Array.from({ length: 25 }, () => store.claim('pnd-race', { id: 'pnd-race', ok: true }, 60_000)));
      expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
      expect((await store.get('pnd-race'))?.fence).toBe(1);
    });

    it('completes only with the current fence, and only once', async () => {
      await store.insert(sampleCall('pnd-done'));
      const claim = (await store.claim('pnd-done', { id: 'pnd-done', ok: true }, 60_000))!;
      expect(await store.complete({ ...claim, fence: claim.fence + 1 }, { status: 'resolved', outcome: success('forged') })).toBe(false);
      expect(await store.complete({ ...claim, id: 'pnd-other' }, { status: 'resolved', outcome: success('elsewhere') })).toBe(false);
      expect(await store.complete(claim, { status: 'resolved', outcome: success('real', { n: 1 }) })).toBe(true);
      const settled = (await store.get('pnd-done'))!;
      expect(settled).toMatchObject({ status: 'resolved', outcome: { output: 'real', isError: false, metadata: { n: 1 } }, fence: 1 });
      expect(settled.updatedAt).toMatch(RFC3339);
      expect(Date.parse(settled.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(claim.at));
      expect(settled.leaseUntil).toBeUndefined();
      expect(settled.next).toBeUndefined();
      expect(await store.complete(claim, { status: 'declined', outcome: failure('again') })).toBe(false);
      expect(await store.renew(claim, 60_000)).toBe(false);
      expect(await store.claim('pnd-done', { id: 'pnd-done', ok: true }, 60_000)).toBeUndefined();
      expect((await store.get('pnd-done'))?.outcome?.output).toBe('real');
    });

    it('lets a call be taken over once its lease ran out: the fence grows, and the stale fence can neither renew nor complete', async () => {
      await store.insert(sampleCall('pnd-lease'));
      const first = (await store.claim('pnd-lease', { id: 'pnd-lease', ok: true }, SHORT_LEASE_MS))!;
      expect(await store.claim('pnd-lease', { id: 'pnd-lease', ok: true }, SHORT_LEASE_MS)).toBeUndefined();
      await sleep(2 * SHORT_LEASE_MS);
      const second = await store.claim('pnd-lease', { id: 'pnd-lease', ok: true, data: { v: 2 } }, 60_000);
      expect(second).toBeDefined();
      expect(second!.fence).toBe(2);
      expect(second!.call).toMatchObject({ fence: 2, answer: { id: 'pnd-lease', ok: true, data: { v: 2 } } });
      expect(await store.renew(first, 60_000)).toBe(false);
      expect(await store.complete(first, { status: 'resolved', outcome: success('stale') })).toBe(false);
      expect(await store.renew(second!, 60_000)).toBe(true);
      expect(await store.complete(second!, { status: 'resolved', outcome: success('fresh') })).toBe(true);
      expect(await store.get('pnd-lease')).toMatchObject({ status: 'resolved', fence: 2, outcome: { output: 'fresh' } });
    });

    it('lets a holder whose lease ran out but whom nobody displaced still renew and complete', async () => {
      await store.insert(sampleCall('pnd-late'));
      const claim = (await store.claim('pnd-late', { id: 'pnd-late', ok: true }, SHORT_LEASE_MS))!;
      await sleep(2 * SHORT_LEASE_MS);
      expect(await store.renew(claim, 60_000)).toBe(true);
      expect(await store.claim('pnd-late', { id: 'pnd-late', ok: true }, 60_000)).toBeUndefined();
      expect(await store.complete(claim, { status: 'resolved', outcome: success('late but fine') })).toBe(true);
    });

    it('renews a lease from the store clock: a renewed claim cannot be taken after its first lease would have lapsed', async () => {
      await store.insert(sampleCall('pnd-renew'));
      const claim = (await store.claim('pnd-renew', { id: 'pnd-renew', ok: true }, 3 * SHORT_LEASE_MS))!;
      await sleep(SHORT_LEASE_MS);
      expect(await store.renew(claim, 60_000)).toBe(true);
      const renewed = (await store.get('pnd-renew'))!;
      expect(Date.parse(renewed.leaseUntil!)).toBeGreaterThan(Date.parse(claim.call.leaseUntil!));
      expect(renewed).toMatchObject({ status: 'resolving', fence: 1, updatedAt: claim.at });
      await sleep(3 * SHORT_LEASE_MS);
      expect(await store.claim('pnd-renew', { id: 'pnd-renew', ok: true }, 60_000)).toBeUndefined();
      expect(await store.renew({ ...claim, fence: 2 }, 60_000)).toBe(false);
      expect(await store.renew({ ...claim, id: 'pnd-nobody' }, 60_000)).toBe(false);
    });

    it('inserts the next link of a chain in the same step as the settlement', async () => {
      await store.insert(sampleCall('pnd-link-1', { runId: 'run-chain', binding: 'sha256:one' }));
      const claim = (await store.claim('pnd-link-1', { id: 'pnd-link-1', ok: true }, 60_000))!;
      const next = sampleCall('pnd-link-2', {
        runId: 'run-chain',
        createdAt: '2030-01-01T00:00:01.000Z',
        chain: [{ request: { id: 'pnd-link-1', kind: 'approval', prompt: 'Approve pnd-link-1?' }, answer: { id: 'pnd-link-1', ok: true } }],
        binding: 'sha256:two',
      });
      expect(await store.complete(claim, { status: 'resolved', outcome: success('asked again'), next })).toBe(true);
      expect(await store.get('pnd-link-1')).toMatchObject({ status: 'resolved', next: 'pnd-link-2', binding: 'sha256:one' });
      expect(await store.get('pnd-link-2')).toEqual(next);
      expect((await store.list({ runId: 'run-chain' })).map((c) => c.request.id)).toEqual(['pnd-link-1', 'pnd-link-2']);
      expect((await store.claim('pnd-link-2', { id: 'pnd-link-2', ok: true }, 60_000))?.fence).toBe(1);
    });

    it('changes nothing when the next link cannot be inserted: a taken id, JSON it cannot carry, a malformed call, a stale fence', async () => {
      await store.insert(sampleCall('pnd-taken', { args: { mine: true } }));
      await store.insert(sampleCall('pnd-chained'));
      const claim = (await store.claim('pnd-chained', { id: 'pnd-chained', ok: true }, 60_000))!;
      const before = await store.get('pnd-chained');
      await expect(
        store.complete(claim, { status: 'resolved', outcome: success('x'), next: sampleCall('pnd-taken') }),
      ).rejects.toBeInstanceOf(DuplicateSuspensionError);
      await expect(
        store.complete(claim, { status: 'resolved', outcome: success('x'), next: sampleCall('pnd-chained') }),
      ).rejects.toBeInstanceOf(DuplicateSuspensionError);
      await expect(
        store.complete(claim, { status: 'resolved', outcome: success('x'), next: sampleCall('pnd-big', { args: { n: 1n } }) }),
      ).rejects.toBeInstanceOf(PendingStoreError);
      await expect(
        store.complete(claim, { status: 'resolved', outcome: success('x'), next: { ...sampleCall('pnd-bad'), tool: '' } }),
      ).rejects.toThrow(new InvalidArgumentError('complete (next link): suspension pnd-bad has no tool name'));
      expect(
        await store.complete({ ...claim, fence: 9 }, { status: 'resolved', outcome: success('x'), next: sampleCall('pnd-stale') }),
      ).toBe(false);
      expect(await store.get('pnd-chained')).toEqual(before);
      expect(await store.get('pnd-taken')).toEqual(sampleCall('pnd-taken', { args: { mine: true } }));
      expect((await store.list()).map((c) => c.request.id)).toEqual(['pnd-taken', 'pnd-chained']);
      expect(await store.complete(claim, { status: 'resolved', outcome: success('then fine'), next: sampleCall('pnd-fresh') })).toBe(true);
      expect((await store.get('pnd-fresh'))?.status).toBe('pending');
    });

    it('round-trips fence, chain, next and binding exactly when inserted', async () => {
      const full = sampleCall('pnd-v2', {
        status: 'resolving',
        fence: 3,
        leaseUntil: '2020-01-01T00:00:05.000Z',
        updatedAt: '2030-01-01T00:00:01.000Z',
        answer: { id: 'pnd-v2', ok: true, data: { z: 1, a: [2] } },
        chain: [
          { request: { id: 'pnd-v0', kind: 'input', prompt: 'Which?' }, answer: { id: 'pnd-v0', ok: true, data: { pick: 'b' } } },
          { request: { id: 'pnd-v1', kind: 'approval', prompt: 'Sure?' }, answer: { id: 'pnd-v1', ok: false, reason: 'declined' } },
        ],
        next: 'pnd-v3',
        binding: 'sha256:abc',
      });
      await store.insert(full);
      expect(await store.get('pnd-v2')).toEqual(full);
      expect(await store.list()).toEqual([full]);
      // An inserted lease is judged like a granted one: this one lapsed years ago, so the next claim takes over.
      expect((await store.claim('pnd-v2', { id: 'pnd-v2', ok: true }, 60_000))?.fence).toBe(4);
    });

    it('refuses bad arguments to every method with the same InvalidArgumentError, and changes nothing', async () => {
      await store.insert(sampleCall('pnd-args'));
      const claim = (await store.claim('pnd-args', { id: 'pnd-args', ok: true }, 60_000))!;
      const before = await store.get('pnd-args');
      const answer: Answer = { id: 'pnd-args', ok: true };
      const ok = { status: 'resolved' as const, outcome: success('x') };
      const checkpoint: RunCheckpoint = { runId: 'run-args', version: 1, state: {}, updatedAt: '2030-01-01T00:00:00.000Z' };
      const lease = (value: unknown) => `leaseMs must be a positive finite number of milliseconds, got ${String(value)}`;
      const notAClaim = 'the claim must be one returned by claim() (a string id and a positive integer fence)';
      const cases: Array<[string, () => Promise<unknown>]> = [
        ['get: the suspension id must be a string', () => store.get(42 as never)],
        ['claim: the suspension id must be a string', () => store.claim(undefined as never, answer, 1_000)],
        ['claim: the answer must be an object', () => store.claim('pnd-args', null as never, 1_000)],
        ...[0, -5, Number.NaN, Number.POSITIVE_INFINITY, '100'].map((value): [string, () => Promise<unknown>] => [
          `claim: ${lease(value)}`,
          () => store.claim('pnd-args', answer, value as never),
        ]),
        [`renew: ${notAClaim}`, () => store.renew(null as never, 1_000)],
        [`renew: ${notAClaim}`, () => store.renew({ id: 'pnd-args', token: 'v1' } as never, 1_000)],
        [`renew: ${lease(-1)}`, () => store.renew(claim, -1)],
        [`complete: ${notAClaim}`, () => store.complete({ ...claim, fence: 0 }, ok)],
        [`complete: ${notAClaim}`, () => store.complete({ ...claim, id: 7 } as never, ok)],
        ['complete: the settlement must be an object { status, outcome, next? }', () => store.complete(claim, null as never)],
        [
          'complete: "pending" is not a settled status (resolved, declined, expired or cancelled)',
          () => store.complete(claim, { ...ok, status: 'pending' as never }),
        ],
        [
          'complete: "done" is not a settled status (resolved, declined, expired or cancelled)',
          () => store.complete(claim, { ...ok, status: 'done' as never }),
        ],
        ['complete: the outcome must be a ToolResult object', () => store.complete(claim, { status: 'resolved', outcome: 'ok' as never })],
        [
          'complete (next link): call.request.id must be a non-empty string',
          () => store.complete(claim, { ...ok, next: { ...sampleCall('x'), request: {} } as never }),
        ],
        ['list: the filter must be an object', () => store.list(null as never)],
        ['list: unknown status filter "done"', () => store.list({ status: 'done' as never })],
        ['list: runId filter must be a string', () => store.list({ runId: 5 as never })],
        ['list: kind filter must be a string', () => store.list({ kind: ['approval'] as never })],
        ['saveRun: the checkpoint must be an object', () => store.saveRun(undefined as never)],
        ['saveRun: runId must be a non-empty string', () => store.saveRun({ ...checkpoint, runId: '' })],
        ['saveRun: updatedAt must be an RFC 3339 string', () => store.saveRun({ ...checkpoint, updatedAt: 5 as never })],
        ['saveRun: state must be an object', () => store.saveRun({ ...checkpoint, state: [] as never })],
        ['loadRun: runId must be a string', () => store.loadRun(null as never)],
      ];
      for (const [message, act] of cases) {
        const error = await act().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect({ message, error }).toEqual({ message, error: expect.any(InvalidArgumentError) });
        expect((error as Error).message).toBe(message);
      }
      expect(await store.get('pnd-args')).toEqual(before);
      expect(await store.list()).toHaveLength(1);
      expect(await store.loadRun('run-args')).toBeUndefined();
      expect(await store.complete(claim, ok)).toBe(true);
    });

    it('saves run checkpoints with optimistic versions and round-trips their state', async () => {
      const v1: RunCheckpoint = {
        runId: 'run-a',
        version: 1,
        state: { transcript: [{ role: 'user', content: 'pay' }], turns: 1 },
        updatedAt: '2030-01-01T00:00:00.000Z',
      };
      expect(await store.loadRun('run-a')).toBeUndefined();
      expect(await store.saveRun({ ...v1, version: 2 })).toBe(false);
      expect(await store.saveRun(v1)).toBe(true);
      expect(await store.saveRun(v1)).toBe(false);
      expect(await store.loadRun('run-a')).toEqual(v1);
      const v2: RunCheckpoint = { ...v1, version: 2, state: { turns: 2 }, updatedAt: '2030-01-01T00:00:01.000Z' };
      expect(await store.saveRun({ ...v2, version: 3 })).toBe(false);
      expect(await store.saveRun(v2)).toBe(true);
      expect(await store.saveRun(v2)).toBe(false);
      expect(await store.loadRun('run-a')).toEqual(v2);
      expect(await store.saveRun({ ...v1, runId: 'run-b', version: 0 })).toBe(false);
      expect(await store.loadRun('run-b')).toBeUndefined();
    });

    it('lets exactly one of two concurrent saves of the same version win', async () => {
      const base: RunCheckpoint = { runId: 'run-c', version: 1, state: {}, updatedAt: '2030-01-01T00:00:00.000Z' };
      await store.saveRun(base);
      const results = await Promise.all([
        store.saveRun({ ...base, version: 2, state: { by: 'a' } }),
        store.saveRun({ ...base, version: 2, state: { by: 'b' } }),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store.loadRun('run-c'))?.version).toBe(2);
    });

    it('rejects every call with PendingStoreError once closed, and closes twice without error', async () => {
      await store.close();
      await store.close();
      await expect(store.get('x')).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.insert(sampleCall('pnd-closed'))).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.list()).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.claim('x', { id: 'x', ok: true }, 1)).rejects.toBeInstanceOf(PendingStoreError);
      const stale = { id: 'x', fence: 1, call: sampleCall('x'), at: '2030-01-01T00:00:00.000Z' };
      await expect(store.renew(stale, 1)).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.complete(stale, { status: 'resolved', outcome: success('x') })).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.saveRun({ runId: 'x', version: 1, state: {}, updatedAt: '2030-01-01T00:00:00.000Z' })).rejects.toBeInstanceOf(
        PendingStoreError,
      );
      await expect(store.loadRun('x')).rejects.toBeInstanceOf(PendingStoreError);
    });
  });
}

export function sampleCall(id: string, over: Partial<SuspendedCall> & { kind?: string } = {}): SuspendedCall {
  const { kind = 'approval', ...rest } = over;
  return {
    request: { id, kind, prompt: `Approve ${id}?` },
    tool: 'transfer',
    args: { amount: 5 },
    status: 'pending',
    createdAt: '2030-01-01T00:00:00.000Z',
    ...rest,
  };
}
