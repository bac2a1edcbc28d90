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
  pending,
  pendingOf,
  success,
  type Answer,
  type PendingStore,
  type ToolContext,
} from '../index';
import { testGlobals } from './globals';

/** Every ResumeCoordinator rule, on top of whatever `current()` returns (a fresh, empty store per test). */
export function describeCoordinatorRules(current: () => PendingStore): void {
  const { describe, it, expect, beforeEach } = testGlobals();
  let store: PendingStore;
  beforeEach(() => {
    store = current();
  });

  describe('ResumeCoordinator on this store (durable posture)', () => {
    let runs: Array<{ args: unknown; ctx: ToolContext<{ tenant?: string }> | undefined }>;
    let toolkit: Toolkit;
    let coordinator: ResumeCoordinator;

    beforeEach(() => {
      runs = [];
      toolkit = new Toolkit().register(...approvalTools((args, ctx) => runs.push({ args, ctx })));
      coordinator = new ResumeCoordinator({ toolkit, store });
    });

    it('records a suspension and returns the pending result unchanged', async () => {
      const before = Date.now();
      const result = await coordinator.execute('transfer', { amount: 5 }, undefined, { callId: 'call_7', runId: 'run_7' });
      const request = pendingOf(result)!;
      expect(result).toEqual({ output: 'Transfer 5?', isError: true, metadata: { pending: request } });
      const call = (await coordinator.get(request.id))!;
      expect(call).toMatchObject({ request, tool: 'transfer', args: { amount: 5 }, callId: 'call_7', runId: 'run_7', status: 'pending' });
      expect(Date.parse(call.createdAt)).toBeGreaterThanOrEqual(before - 1);
      expect(runs).toHaveLength(1);
    });

    it('passes a result that is not a suspension through and records nothing', async () => {
      expect(await coordinator.execute('echo', { text: 'hi' })).toEqual({ output: 'hi', isError: false });
      expect(await coordinator.execute('nope', {})).toEqual({ output: 'unknown tool: nope', isError: true });
      expect(await coordinator.list()).toEqual([]);
    });

    it('records missing arguments as an empty object', async () => {
      const request = pendingOf(await coordinator.execute('confirm'))!;
      expect((await coordinator.get(request.id))?.args).toEqual({});
    });

    it('resolves: replays once with { ...ctx, answer }, stores and returns the outcome', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }, { tenant: 'acme' }))!;
      const answer: Answer = { id: request.id, ok: true, data: { approver: 'ada' } };
      const result = await coordinator.resolve(answer, { tenant: 'acme' });
      expect(result).toEqual({ output: 'transferred 5 for acme, approved by ada', isError: false });
      expect(runs).toHaveLength(2);
      expect(runs[1]?.ctx).toEqual({ tenant: 'acme', answer, signal: expect.any(AbortSignal), replay: { request, chain: [], fence: 1 } });
      expect(await coordinator.get(request.id)).toMatchObject({ status: 'resolved', answer, outcome: result });
    });

    it('returns the stored outcome to a repeated identical answer without running the tool again', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const first = await coordinator.resolve({ id: request.id, ok: true, data: { approver: 'ada', level: 2 } });
      const again = await coordinator.resolve({ id: request.id, ok: true, data: { level: 2, approver: 'ada' } });
      expect(again).toEqual(first);
      expect(runs).toHaveLength(2);
    });

    it('throws AlreadyResolvedError for an answer that conflicts with the recorded outcome', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      await coordinator.resolve({ id: request.id, ok: true, data: { approver: 'ada' } });
      await expect(coordinator.resolve({ id: request.id, ok: false })).rejects.toThrow(new AlreadyResolvedError(request.id, 'resolved'));
      await expect(coordinator.resolve({ id: request.id, ok: true, data: { approver: 'eve' } })).rejects.toBeInstanceOf(
        AlreadyResolvedError,
      );
      await expect(coordinator.resolve({ id: request.id, ok: true })).rejects.toBeInstanceOf(AlreadyResolvedError);
      expect(runs).toHaveLength(2);
      expect((await coordinator.get(request.id))?.outcome?.output).toBe('transferred 5 for nobody, approved by ada');
    });

    it('declines on ok:false: records it, returns "declined/expired: …", never runs the tool', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const result = await coordinator.resolve({ id: request.id, ok: false, reason: 'declined' });
      expect(result).toEqual({ output: 'declined/expired: Transfer 5? (declined)', isError: true });
      expect(runs).toHaveLength(1);
      expect(await coordinator.get(request.id)).toMatchObject({ status: 'declined', outcome: result, answer: { ok: false } });
      expect(await coordinator.resolve({ id: request.id, ok: false })).toEqual(result);
      await expect(coordinator.resolve({ id: request.id, ok: true })).rejects.toThrow(new AlreadyResolvedError(request.id, 'declined'));
      expect(runs).toHaveLength(1);
    });

    it('treats an answer after expiresAt as expired: records it, never runs the tool', async () => {
      const request = pendingOf(await coordinator.execute('expiring', { expiresAt: new Date(Date.now() - 1).toISOString() }))!;
      const result = await coordinator.resolve({ id: request.id, ok: true });
      expect(result).toEqual({ output: 'declined/expired: Approve before the deadline? (expired)', isError: true });
      expect(await coordinator.get(request.id)).toMatchObject({ status: 'expired', outcome: result });
      expect(await coordinator.resolve({ id: request.id, ok: false })).toEqual(result);
      expect(runs).toHaveLength(1);
    });

    it('replays a call whose expiresAt is still ahead', async () => {
      const request = pendingOf(await coordinator.execute('expiring', { expiresAt: new Date(Date.now() + 60_000).toISOString() }))!;
      expect(await coordinator.resolve({ id: request.id, ok: true })).toEqual({ output: 'in time', isError: false });
    });

    it('refuses a suspension whose expiresAt is not an instant: an error result, nothing recorded', async () => {
      const result = await coordinator.execute('expiring', { expiresAt: 'tomorrow-ish' });
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(/invalid expiresAt "tomorrow-ish"/);
      expect(pendingOf(result)).toBeUndefined();
      expect(await coordinator.list()).toEqual([]);
    });

    it('throws UnknownSuspensionError for an id no store holds', async () => {
      await expect(coordinator.resolve({ id: 'pnd-never', ok: true })).rejects.toThrow(new UnknownSuspensionError('pnd-never'));
      await expect(coordinator.cancel('pnd-never')).rejects.toBeInstanceOf(UnknownSuspensionError);
    });

    it('throws InvalidAnswerError for a malformed answer and leaves the call pending', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const bad: unknown[] = [
        null,
        'yes',
        [request.id, true],
        { ok: true },
        { id: '', ok: true },
        { id: request.id },
        { id: request.id, ok: 'true' },
        { id: request.id, ok: true, data: 'approved' },
        { id: request.id, ok: true, data: [1] },
        { id: request.id, ok: false, reason: 'bored' },
      ];
      for (const answer of bad) await expect(coordinator.resolve(answer as Answer)).rejects.toBeInstanceOf(InvalidAnswerError);
      expect((await coordinator.get(request.id))?.status).toBe('pending');
      expect(runs).toHaveLength(1);
    });

    it('throws UnregisteredToolError when this process lacks the tool, and leaves the call pending', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const elsewhere = new ResumeCoordinator({ toolkit: new Toolkit(), store });
      await expect(elsewhere.resolve({ id: request.id, ok: true })).rejects.toThrow(new UnregisteredToolError(request.id, 'transfer'));
      expect((await coordinator.get(request.id))?.status).toBe('pending');
      expect((await coordinator.resolve({ id: request.id, ok: true })).output).toBe('transferred 5 for nobody, approved by nobody');
    });

    it('a replay that suspends again stores "unresolved: " + prompt, never loops', async () => {
      const request = pendingOf(await coordinator.execute('stubborn', {}))!;
      const result = await coordinator.resolve({ id: request.id, ok: true });
      expect(result).toEqual({ output: 'unresolved: Still need a second signature', isError: true });
      expect(await coordinator.get(request.id)).toMatchObject({ status: 'resolved', outcome: result });
      expect(await coordinator.list()).toHaveLength(1);
    });

    it('stores a replay result whose metadata JSON cannot carry without it, and says so', async () => {
      const odd = new Toolkit().register(
        defineTool({
          name: 'odd',
          description: 'Odd metadata',
          run: (_a, ctx) => (ctx?.answer ? success('sent', { bytes: 10n }) : pending({ kind: 'approval', prompt: 'Send?' })),
        }),
      );
      const oddCoordinator = new ResumeCoordinator({ toolkit: odd, store });
      const request = pendingOf(await oddCoordinator.execute('odd', {}))!;
      const result = await oddCoordinator.resolve({ id: request.id, ok: true });
      expect(result).toEqual({
        output: 'sent',
        isError: false,
        metadata: { metadataDropped: expect.stringMatching(/cannot be stored as JSON: .*BigInt/) },
      });
      expect(await oddCoordinator.get(request.id)).toMatchObject({ status: 'resolved', outcome: result });
      expect(await oddCoordinator.resolve({ id: request.id, ok: true })).toEqual(result);
    });

    it('replays once for many concurrent resolves of one id; all get the same outcome', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 9 }))!;
      const others = Array.from({ length: 5 }, () => new ResumeCoordinator({ toolkit, store }));
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? coordinator : others[i % 5]!).resolve({ id: request.id, ok: true, data: { approver: 'ada' } }),
        ),
      );
      expect(new Set(results.map((r) => JSON.stringify(r)))).toEqual(
        new Set([JSON.stringify({ output: 'transferred 9 for nobody, approved by ada', isError: false })]),
      );
      expect(runs).toHaveLength(2);
    });

    it('waits for the holder of a live claim and returns its outcome', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const held = (await store.claim(request.id, { id: request.id, ok: true }, 60_000))!;
      let settled = false;
      const waiting = coordinator.resolve({ id: request.id, ok: true }).then((r) => {
        settled = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 60));
      expect(settled).toBe(false);
      await store.complete(held, { status: 'resolved', outcome: success('done by the other process') });
      expect(await waiting).toEqual({ output: 'done by the other process', isError: false });
      expect(runs).toHaveLength(1);
    });

    it("leaves the call untouched when the caller's signal is already aborted", async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const controller = new AbortController();
      controller.abort(new Error('the user left'));
      await expect(coordinator.resolve({ id: request.id, ok: true }, { signal: controller.signal })).rejects.toThrow('the user left');
      expect(await coordinator.get(request.id)).toMatchObject({ status: 'pending' });
      expect(runs).toHaveLength(1);
      expect((await coordinator.resolve({ id: request.id, ok: true })).isError).toBe(false);
    });

    it("stops waiting for another holder when the caller's signal aborts, and leaves the claim to its holder", async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const held = (await store.claim(request.id, { id: request.id, ok: true }, 60_000))!;
      const controller = new AbortController();
      const started = Date.now();
      const waiting = coordinator.resolve({ id: request.id, ok: true }, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('run cancelled')), 50);
      await expect(waiting).rejects.toThrow('run cancelled');
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((await coordinator.get(request.id))?.status).toBe('resolving');
      expect(await store.complete(held, { status: 'resolved', outcome: success('the holder finished') })).toBe(true);
    });

    it('takes over a claim whose lease ran out (its holder died) and completes it', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const dead = (await store.claim(request.id, { id: request.id, ok: true }, 40))!;
      const result = await coordinator.resolve({ id: request.id, ok: true });
      expect(result.output).toBe('transferred 5 for nobody, approved by nobody');
      expect(runs).toHaveLength(2);
      expect(await store.complete(dead, { status: 'resolved', outcome: success('zombie') })).toBe(false);
      expect((await coordinator.get(request.id))?.outcome).toEqual(result);
    });

    it('cancels a pending call: stored as cancelled, never runs, repeatable; a later approval conflicts', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      const result = await coordinator.cancel(request.id, 'user closed the chat');
      expect(result).toEqual({ output: 'declined/expired: Transfer 5? (cancelled: "user closed the chat")', isError: true });
      expect(await coordinator.get(request.id)).toMatchObject({
        status: 'cancelled',
        answer: { id: request.id, ok: false, reason: 'cancelled', data: { reason: 'user closed the chat' } },
        outcome: result,
      });
      expect(await coordinator.cancel(request.id)).toEqual(result);
      await expect(coordinator.resolve({ id: request.id, ok: true })).rejects.toThrow(new AlreadyResolvedError(request.id, 'cancelled'));
      expect(runs).toHaveLength(1);
    });

    it('refuses to cancel a call that already ran', async () => {
      const request = pendingOf(await coordinator.execute('transfer', { amount: 5 }))!;
      await coordinator.resolve({ id: request.id, ok: true });
      await expect(coordinator.cancel(request.id)).rejects.toThrow(new AlreadyResolvedError(request.id, 'resolved'));
    });

    it('lists through the coordinator with filters, and refuses an unknown status', async () => {
      const a = pendingOf(await coordinator.execute('transfer', { amount: 1 }, undefined, { runId: 'r1' }))!;
      const b = pendingOf(await coordinator.execute('confirm', {}, undefined, { runId: 'r2' }))!;
      await coordinator.resolve({ id: a.id, ok: true });
      expect((await coordinator.list({ status: 'pending' })).map((c) => c.request.id)).toEqual([b.id]);
      expect((await coordinator.list({ runId: 'r1' })).map((c) => c.request.id)).toEqual([a.id]);
      expect((await coordinator.list({ kind: 'input' })).map((c) => c.request.id)).toEqual([b.id]);
      await expect(coordinator.list({ status: 'done' as never })).rejects.toThrow(
        new InvalidArgumentError('unknown suspension status: done'),
      );
      await expect(coordinator.list({ runId: 7 as never })).rejects.toThrow(new InvalidArgumentError('list filter runId must be a string'));
      await expect(coordinator.list({ kind: null as never })).rejects.toThrow(
        new InvalidArgumentError('list filter kind must be a string'),
      );
      await expect(coordinator.list(null as never)).rejects.toBeInstanceOf(InvalidArgumentError);
    });

    it('rejects with DuplicateSuspensionError when a tool reuses a recorded request id, and keeps the first call', async () => {
      const reuse = new Toolkit().register(
        defineTool({
          name: 'fixed',
          description: 'Always the same id',
          run: (args) => pending({ id: 'pnd-fixed', kind: 'approval', prompt: `Again ${JSON.stringify(args)}?` }),
        }),
      );
      const fixed = new ResumeCoordinator({ toolkit: reuse, store });
      await fixed.execute('fixed', { n: 1 });
      await expect(fixed.execute('fixed', { n: 2 })).rejects.toThrow(new DuplicateSuspensionError('pnd-fixed'));
      expect((await fixed.get('pnd-fixed'))?.args).toEqual({ n: 1 });
    });

    it('rejects with PendingStoreError, instead of claiming a suspension, when the store cannot record it', async () => {
      await store.close();
      await expect(coordinator.execute('transfer', { amount: 5 })).rejects.toBeInstanceOf(PendingStoreError);
      await expect(coordinator.execute('echo', { text: 'still works' })).resolves.toEqual({ output: 'still works', isError: false });
    });
  });
}

type RunLog = (args: unknown, ctx: ToolContext<{ tenant?: string }> | undefined) => void;

/** Tools whose first run suspends and whose replay finishes with the answer. */
function approvalTools(log: RunLog) {
  return [
    defineTool({
      name: 'transfer',
      description: 'Moves money after approval',
      inputSchema: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
      run(args, ctx?: ToolContext<{ tenant?: string }>) {
        log(args, ctx);
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Transfer ${String(args.amount)}?` });
        const approver = typeof ctx.answer.data?.approver === 'string' ? ctx.answer.data.approver : 'nobody';
        return success(`transferred ${String(args.amount)} for ${ctx.tenant ?? 'nobody'}, approved by ${approver}`);
      },
    }),
    defineTool({
      name: 'confirm',
      description: 'Asks for a value',
      run(args, ctx) {
        log(args, ctx);
        return ctx?.answer
          ? success('confirmed')
          : pending({ kind: 'input', prompt: 'Type a value', data: { schema: { type: 'string' } } });
      },
    }),
    defineTool({
      name: 'expiring',
      description: 'Suspends with a deadline',
      inputSchema: { type: 'object', properties: { expiresAt: { type: 'string' } }, required: ['expiresAt'] },
      run(args, ctx) {
        log(args, ctx);
        return ctx?.answer
          ? success('in time')
          : pending({ kind: 'approval', prompt: 'Approve before the deadline?', expiresAt: String(args.expiresAt) });
      },
    }),
    defineTool({
      name: 'stubborn',
      description: 'Suspends every time',
      run(args, ctx) {
        log(args, ctx);
        return pending({ kind: 'approval', prompt: ctx?.answer ? 'Still need a second signature' : 'Need a signature' });
      },
    }),
    defineTool({
      name: 'echo',
      description: 'Echoes text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      run: (args) => String(args.text),
    }),
  ];
}
