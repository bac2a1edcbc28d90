import {
  AlreadyResolvedError,
  DuplicateSuspensionError,
  InvalidAnswerError,
  InvalidArgumentError,
  PendingStoreError,
  ResumeCoordinator,
  Toolkit,
  UnknownSuspensionError,
  UnregisteredToolError,
  defineTool,
  failure,
  pending,
  pendingOf,
  success,
  type Answer,
  type PendingStore,
  type RunCheckpoint,
  type SuspendedCall,
  type ToolContext,
} from 'toolnexus-ts';


/** The store contract, checked directly on whatever `current()` returns (a fresh, empty store per test). */
export function describeStoreContract(current: () => PendingStore): void {
  let store: PendingStore;
  beforeEach(() => {
    store = current();
  });

  describe('store contract', () => {
    it('round-trips a call as JSON and hands out copies', async () => {
      const call = sampleCall('pnd-rt', { args: { account: 'a', nested: { list: [1, 'two', null], flag: true } }, callId: 'call_1', runId: 'run_1' });
      await store.insert(call);
      call.args = 'mutated after insert';
      const read = await store.get('pnd-rt');
      expect(read).toEqual(sampleCall('pnd-rt', { args: { account: 'a', nested: { list: [1, 'two', null], flag: true } }, callId: 'call_1', runId: 'run_1' }));
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
      ];
      for (const call of malformed) await expect(store.insert(call as SuspendedCall)).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await store.list()).toEqual([]);
    });

    it('lists oldest first and filters by status, runId and kind (combined with AND)', async () => {
      await store.insert(sampleCall('pnd-c', { createdAt: '2026-01-03T00:00:00.000Z', runId: 'r1', kind: 'input' }));
      await store.insert(sampleCall('pnd-a', { createdAt: '2026-01-01T00:00:00.000Z', runId: 'r1', kind: 'approval' }));
      await store.insert(sampleCall('pnd-b', { createdAt: '2026-01-02T00:00:00.000Z', runId: 'r2', kind: 'approval' }));
      await store.insert(sampleCall('pnd-b2', { createdAt: '2026-01-02T00:00:00.000Z', kind: 'approval' }));
      const claimed = await store.claim('pnd-b', { id: 'pnd-b', ok: true }, 60_000, new Date());
      await store.complete(claimed!, 'resolved', success('done'), new Date());
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

    it('claims a pending call once: status resolving, the answer and a lease recorded', async () => {
      await store.insert(sampleCall('pnd-claim'));
      const now = new Date('2030-01-01T00:00:00.000Z');
      const answer: Answer = { id: 'pnd-claim', ok: true, data: { note: 'yes' } };
      const claim = await store.claim('pnd-claim', answer, 5_000, now);
      expect(claim).toBeDefined();
      expect(claim!.id).toBe('pnd-claim');
      expect(typeof claim!.token).toBe('string');
      expect(claim!.call).toMatchObject({ status: 'resolving', answer, leaseUntil: '2030-01-01T00:00:05.000Z' });
      expect(await store.claim('pnd-claim', answer, 5_000, new Date('2030-01-01T00:00:04.999Z'))).toBeUndefined();
      expect(await store.claim('pnd-unknown', { id: 'pnd-unknown', ok: true }, 5_000, now)).toBeUndefined();
      expect((await store.get('pnd-claim'))?.status).toBe('resolving');
    });

    it('lets exactly one of many concurrent claims win', async () => {
      await store.insert(sampleCall('pnd-race'));
      const now = new Date();
      const claims = await Promise.all(Array.from({ length: 25 }, () => store.claim('pnd-race', { id: 'pnd-race', ok: true }, 60_000, now)));
      expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
    });

    it('completes only for the holder of the claim, and only once', async () => {
      await store.insert(sampleCall('pnd-done'));
      const claim = (await store.claim('pnd-done', { id: 'pnd-done', ok: true }, 60_000, new Date()))!;
      expect(await store.complete({ ...claim, token: 'forged' }, 'resolved', success('forged'), new Date())).toBe(false);
      expect(await store.complete(claim, 'resolved', success('real', { n: 1 }), new Date('2030-02-02T00:00:00.000Z'))).toBe(true);
      const settled = (await store.get('pnd-done'))!;
      expect(settled).toMatchObject({ status: 'resolved', outcome: { output: 'real', isError: false, metadata: { n: 1 } }, updatedAt: '2030-02-02T00:00:00.000Z' });
      expect(settled.leaseUntil).toBeUndefined();
      expect(await store.complete(claim, 'declined', failure('again'), new Date())).toBe(false);
      expect(await store.claim('pnd-done', { id: 'pnd-done', ok: true }, 60_000, new Date('2099-01-01T00:00:00.000Z'))).toBeUndefined();
      expect((await store.get('pnd-done'))?.outcome?.output).toBe('real');
    });

    it('lets a call be claimed again once its lease ran out, and the displaced holder cannot complete', async () => {
      await store.insert(sampleCall('pnd-lease'));
      const t0 = new Date('2030-01-01T00:00:00.000Z');
      const first = (await store.claim('pnd-lease', { id: 'pnd-lease', ok: true }, 1_000, t0))!;
      expect(await store.claim('pnd-lease', { id: 'pnd-lease', ok: true }, 1_000, new Date('2030-01-01T00:00:01.000Z'))).toBeUndefined();
      const second = await store.claim('pnd-lease', { id: 'pnd-lease', ok: true, data: { v: 2 } }, 1_000, new Date('2030-01-01T00:00:01.001Z'));
      expect(second).toBeDefined();
      expect(second!.token).not.toBe(first.token);
      expect(second!.call.answer).toEqual({ id: 'pnd-lease', ok: true, data: { v: 2 } });
      expect(await store.complete(first, 'resolved', success('stale'), new Date())).toBe(false);
      expect(await store.complete(second!, 'resolved', success('fresh'), new Date())).toBe(true);
      expect((await store.get('pnd-lease'))?.outcome?.output).toBe('fresh');
    });

    it('lets a holder whose lease ran out but whom nobody displaced still complete', async () => {
      await store.insert(sampleCall('pnd-late'));
      const claim = (await store.claim('pnd-late', { id: 'pnd-late', ok: true }, 1, new Date('2030-01-01T00:00:00.000Z')))!;
      expect(await store.complete(claim, 'resolved', success('late but fine'), new Date('2030-01-01T01:00:00.000Z'))).toBe(true);
    });

    it('saves run checkpoints with optimistic versions and round-trips their state', async () => {
      const v1: RunCheckpoint = { runId: 'run-a', version: 1, state: { transcript: [{ role: 'user', content: 'pay' }], turns: 1 }, updatedAt: '2030-01-01T00:00:00.000Z' };
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
      const results = await Promise.all([store.saveRun({ ...base, version: 2, state: { by: 'a' } }), store.saveRun({ ...base, version: 2, state: { by: 'b' } })]);
      expect(results.filter(Boolean)).toHaveLength(1);
      expect((await store.loadRun('run-c'))?.version).toBe(2);
    });

    it('rejects every call with PendingStoreError once closed, and closes twice without error', async () => {
      await store.close();
      await store.close();
      await expect(store.get('x')).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.insert(sampleCall('pnd-closed'))).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.list()).rejects.toBeInstanceOf(PendingStoreError);
      await expect(store.claim('x', { id: 'x', ok: true }, 1, new Date())).rejects.toBeInstanceOf(PendingStoreError);
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

