import {
  ClaimLostError,
  MemoryPendingStore,
  ResumeCoordinator,
  SuspensionMismatchError,
  Toolkit,
  defineTool,
  pending,
  pendingOf,
  success,
  type PendingStore,
  type SuspendedCall,
} from 'toolnexus-ts';
import type { Claim } from 'toolnexus-ts/testing';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function slowTool(ms: number) {
  const replays: Array<{ fence?: number; aborted: boolean }> = [];
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'slow',
      description: 'Takes its time once approved',
      async run(_args, ctx) {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: 'Go?' });
        const entry = { fence: ctx.replay?.fence, aborted: false };
        replays.push(entry);
        await sleep(ms);
        entry.aborted = ctx.signal?.aborted ?? false;
        return success(`done under fence ${String(ctx.replay?.fence)}`);
      },
    }),
  );
  return { toolkit, replays };
}

describe('leases that hold', () => {
  it('a replay slower than its lease runs once: the holder renews, a second resolver waits and gets the outcome', async () => {
    const { toolkit, replays } = slowTool(600);
    const store = new MemoryPendingStore();
    const coordinator = new ResumeCoordinator({ toolkit, store, leaseMs: 200 });
    const request = pendingOf(await coordinator.execute('slow'))!;
    const first = coordinator.resolve({ id: request.id, ok: true });
    await sleep(50); // a double click
    const second = new ResumeCoordinator({ toolkit, store, leaseMs: 200 }).resolve({ id: request.id, ok: true });
    const outcomes = await Promise.all([first, second]);
    expect(outcomes).toEqual([
      { output: 'done under fence 1', isError: false },
      { output: 'done under fence 1', isError: false },
    ]);
    expect(replays).toEqual([{ fence: 1, aborted: false }]);
    expect(await store.get(request.id)).toMatchObject({ status: 'resolved', fence: 1 });
  });

  it('a holder that loses its claim has its signal aborted, stores nothing, never claims again; the next resolve replays', async () => {
    const { toolkit, replays } = slowTool(300);
    const store = new MemoryPendingStore();
    // The store says the claim moved on (as after a takeover) at the first renewal.
    const displaced: PendingStore = Object.assign(Object.create(store) as PendingStore, {
      renew: async () => false,
      complete: (claim: Claim, settlement: Parameters<PendingStore['complete']>[1]) => store.complete(claim, settlement),
    });
    const coordinator = new ResumeCoordinator({ toolkit, store: displaced, leaseMs: 90 });
    const request = pendingOf(await coordinator.execute('slow'))!;
    await expect(coordinator.resolve({ id: request.id, ok: true })).rejects.toBeInstanceOf(ClaimLostError);
    await sleep(300); // the tool itself finishes its own await; it saw the signal aborted
    expect(replays).toEqual([{ fence: 1, aborted: true }]);
    expect((await store.get(request.id))?.status).toBe('resolving');

    const later = new ResumeCoordinator({ toolkit, store, leaseMs: 5_000 });
    expect(await later.resolve({ id: request.id, ok: true })).toEqual({ output: 'done under fence 2', isError: false });
    expect(replays.map((replay) => replay.fence)).toEqual([1, 2]);
  });

  it('a resolver waiting on a live claim stops when its own signal aborts', async () => {
    const { toolkit } = slowTool(400);
    const store = new MemoryPendingStore();
    const coordinator = new ResumeCoordinator({ toolkit, store, leaseMs: 100 });
    const request = pendingOf(await coordinator.execute('slow'))!;
    const holder = coordinator.resolve({ id: request.id, ok: true });
    await sleep(20);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('gave up waiting')), 100);
    await expect(coordinator.resolve({ id: request.id, ok: true }, { signal: controller.signal })).rejects.toThrow('gave up waiting');
    expect((await holder).isError).toBe(false);
  });
});

describe('a suspension bound to its call', () => {
  /** A store whose rows someone edits between the insert and the resolve. */
  function tampered(edit: (call: SuspendedCall) => SuspendedCall): { store: PendingStore; inner: MemoryPendingStore } {
    const inner = new MemoryPendingStore();
    const store: PendingStore = Object.assign(Object.create(inner) as PendingStore, {
      get: async (id: string) => {
        const call = await inner.get(id);
        return call && edit(call);
      },
      claim: async (...args: Parameters<PendingStore['claim']>) => {
        const claim = await inner.claim(...args);
        return claim && { ...claim, call: edit(claim.call) };
      },
    });
    return { store, inner };
  }

  function transferTool(ran: string[]) {
    return new Toolkit().register(
      defineTool({
        name: 'transfer',
        description: 'Moves money',
        inputSchema: { type: 'object', properties: { to: { type: 'string' }, cents: { type: 'integer' } }, required: ['to', 'cents'] },
        run(args, ctx) {
          if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Send ${String(args.cents)} to ${String(args.to)}?` });
          ran.push(`${String(args.to)}/${String(args.cents)}`);
          return success('sent');
        },
      }),
    );
  }

  it('refuses a row whose arguments were changed in the store: a typed error, nothing runs', async () => {
    const ran: string[] = [];
    const { store } = tampered((call) => ({ ...call, args: { to: 'mallory', cents: 999_999 } }));
    const coordinator = new ResumeCoordinator({ toolkit: transferTool(ran), store });
    const request = pendingOf(await coordinator.execute('transfer', { to: 'alice', cents: 5 }))!;
    await expect(coordinator.resolve({ id: request.id, ok: true })).rejects.toThrow(SuspensionMismatchError);
    expect(ran).toEqual([]);
  });

  it('a replay gets its arguments in the order they were given, and a store that reorders keys still verifies', async () => {
    const seen: string[] = [];
    const echo = () =>
      new Toolkit().register(
        defineTool({
          name: 'echo',
          description: 'Echoes its arguments',
          run(args, ctx) {
            seen.push(JSON.stringify(args));
            return ctx?.answer ? success('done') : pending({ kind: 'approval', prompt: 'Go?' });
          },
        }),
      );
    const given = { zulu: 1, alpha: { yankee: true, bravo: [2, { x: 1, a: 0 }] } };
    const plain = new ResumeCoordinator({ toolkit: echo(), store: new MemoryPendingStore() });
    const first = pendingOf(await plain.execute('echo', given))!;
    expect((await plain.get(first.id))?.binding).toMatch(/^sha256:[\w-]+\/[\w-]+$/); // canonical, then plain
    expect(await plain.resolve({ id: first.id, ok: true })).toEqual({ output: 'done', isError: false });
    expect(seen).toEqual([JSON.stringify(given), JSON.stringify(given)]);

    // A store that gives JSON back with its keys in another order (as PostgreSQL jsonb would).
    const sortKeys = (value: unknown): unknown =>
      Array.isArray(value)
        ? value.map(sortKeys)
        : value !== null && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value)
                .sort(([a], [b]) => (a < b ? 1 : -1))
                .map(([k, v]) => [k, sortKeys(v)]),
            )
          : value;
    const { store } = tampered((call) => ({ ...call, args: sortKeys(call.args), request: sortKeys(call.request) as typeof call.request }));
    const reordering = new ResumeCoordinator({ toolkit: echo(), store });
    const second = pendingOf(await reordering.execute('echo', given))!;
    expect(await reordering.resolve({ id: second.id, ok: true })).toEqual({ output: 'done', isError: false });
  });

  it('with a binding key, a row whose digest was stripped or recomputed without the key is refused', async () => {
    const ran: string[] = [];
    const stripped = tampered(({ binding: _gone, ...call }) => ({ ...call, args: { to: 'mallory', cents: 1 } }));
    const keyed = new ResumeCoordinator({ toolkit: transferTool(ran), store: stripped.store, bindingKey: 'k-1' });
    const request = pendingOf(await keyed.execute('transfer', { to: 'alice', cents: 5 }))!;
    await expect(keyed.resolve({ id: request.id, ok: true })).rejects.toThrow(/carries no binding digest/);

    // Recomputed by someone who has the row but not the key: a plain digest of the edited call.
    const unkeyed = new ResumeCoordinator({ toolkit: transferTool(ran), store: new MemoryPendingStore() });
    const forged = pendingOf(await unkeyed.execute('transfer', { to: 'mallory', cents: 1 }))!;
    const forgedRow = (await unkeyed.get(forged.id))!;
    const swapped = tampered(() => forgedRow);
    const victim = new ResumeCoordinator({ toolkit: transferTool(ran), store: swapped.store, bindingKey: 'k-1' });
    const real = pendingOf(await victim.execute('transfer', { to: 'alice', cents: 5 }))!;
    await expect(victim.resolve({ id: real.id, ok: true })).rejects.toBeInstanceOf(SuspensionMismatchError);
    expect(ran).toEqual([]);

    // The untouched row resolves, keyed.
    const clean = new ResumeCoordinator({ toolkit: transferTool(ran), store: new MemoryPendingStore(), bindingKey: 'k-1' });
    const fine = pendingOf(await clean.execute('transfer', { to: 'alice', cents: 5 }))!;
    expect((await clean.get(fine.id))?.binding).toMatch(/^hmac-sha256:/);
    expect(await clean.resolve({ id: fine.id, ok: true })).toEqual({ output: 'sent', isError: false });
    expect(ran).toEqual(['alice/5']);
  });
});
