import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import {
  ClaimLostError,
  ResumeCoordinator,
  SuspensionMismatchError,
  type SuspensionStore,
  type SuspendedCall,
  type Claim,
} from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FakeClock, until } from '../fixtures/fake-clock';

/** A gate the test opens: a replay "takes its time" until then, however far the fake clock moves. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Lets pending promise callbacks and I/O (a store write) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

function slowTool(done: Promise<void>) {
  const replays: Array<{ fence?: number; aborted: boolean }> = [];
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'slow',
      description: 'Takes its time once approved',
      // Running it again has no further effect: a takeover replays it (docs/suspension.md, "the takeover rule").
      idempotent: true,
      async run(_args, ctx) {
        if (ctx?.replay?.request.kind !== 'approval') return pending({ kind: 'approval', prompt: 'Go?' });
        const entry = { fence: ctx.replay.fence, aborted: false };
        replays.push(entry);
        await done;
        entry.aborted = ctx.signal?.aborted ?? false;
        return success(`done under fence ${String(ctx.replay.fence)}`);
      },
    }),
  );
  return { toolkit, replays };
}

// Leases, renewals and lapses on a fake clock shared by the coordinators and the store
// (ResumeCoordinatorOptions.clock, MemoryStoreOptions.clock): stepped, never raced.
describe('leases that hold', () => {
  it('a replay slower than its lease runs once: the holder renews, a second resolver waits and gets the outcome', async () => {
    const clock = new FakeClock();
    const slow = gate();
    const { toolkit, replays } = slowTool(slow.wait);
    const store = new MemoryStore({ clock });
    const coordinator = new ResumeCoordinator({ toolkit, store, leaseMs: 200, clock });
    const request = pendingOf(await coordinator.execute('slow'))!;
    const first = coordinator.resolve({ id: request.id, ok: true });
    await until(() => replays.length === 1);
    const second = new ResumeCoordinator({ toolkit, store, leaseMs: 200, clock }).resolve({ id: request.id, ok: true }); // a double click
    // Ten leases pass while the replay runs: the holder renews every third of one, so the
    // claim never lapses and the second resolver, trying twice a lease, never takes it over.
    for (let step = 0; step < 30; step++) {
      clock.advance(67);
      for (let i = 0; i < 5; i++) await settle();
      expect(await store.get(request.id)).toMatchObject({ status: 'resolving', fence: 1 });
      expect(Date.parse((await store.get(request.id))!.leaseUntil!)).toBeGreaterThan(clock.now());
    }
    slow.open();
    const outcomes = await Promise.all([first, second]);
    expect(outcomes).toEqual([
      { output: 'done under fence 1', isError: false },
      { output: 'done under fence 1', isError: false },
    ]);
    expect(replays).toEqual([{ fence: 1, aborted: false }]);
    expect(await store.get(request.id)).toMatchObject({ status: 'resolved', fence: 1 });
  });

  it('a holder that loses its claim has its signal aborted, stores nothing, never claims again; the next resolve replays', async () => {
    const clock = new FakeClock();
    const slow = gate();
    const { toolkit, replays } = slowTool(slow.wait);
    const store = new MemoryStore({ clock });
    // The store says the claim moved on (as after a takeover) at the first renewal.
    const displaced: SuspensionStore & RunStore = Object.assign(Object.create(store) as SuspensionStore & RunStore, {
      renew: async () => false,
      complete: (claim: Claim, settlement: Parameters<SuspensionStore['complete']>[1]) => store.complete(claim, settlement),
    });
    const coordinator = new ResumeCoordinator({ toolkit, store: displaced, leaseMs: 90, clock });
    const request = pendingOf(await coordinator.execute('slow'))!;
    const resolving = coordinator.resolve({ id: request.id, ok: true });
    await until(() => replays.length === 1);
    clock.advance(29);
    await settle();
    expect(replays).toEqual([{ fence: 1, aborted: false }]); // no renewal yet: nothing lost
    clock.advance(1); // the first renewal, a third of the lease in
    slow.open();
    await until(() => replays.length === 1 && replays[0]!.aborted); // the tool finishes its own await; it saw the signal aborted
    expect((await store.get(request.id))?.status).toBe('resolving');

    clock.advance(90); // the lost claim's lease lapses by the store's clock; the loser never claims again
    await expect(resolving).rejects.toBeInstanceOf(ClaimLostError);
    expect((await store.get(request.id))?.status).toBe('resolving');
    const later = new ResumeCoordinator({ toolkit, store, leaseMs: 5_000, clock });
    expect(await later.resolve({ id: request.id, ok: true })).toEqual({ output: 'done under fence 2', isError: false });
    expect(replays.map((replay) => replay.fence)).toEqual([1, 2]);
  });

  it('a holder whose renewals cannot get through for a whole lease gives its claim up', async () => {
    const clock = new FakeClock();
    const slow = gate();
    const { toolkit, replays } = slowTool(slow.wait);
    const store = new MemoryStore({ clock });
    const unreachable: SuspensionStore & RunStore = Object.assign(Object.create(store) as SuspensionStore & RunStore, {
      renew: async () => {
        throw new Error('connection refused');
      },
    });
    const coordinator = new ResumeCoordinator({ toolkit, store: unreachable, leaseMs: 300, clock });
    const request = pendingOf(await coordinator.execute('slow'))!;
    let settled = false;
    const resolving = coordinator.resolve({ id: request.id, ok: true }).finally(() => (settled = true));
    await until(() => replays.length === 1);
    for (let step = 0; step < 2; step++) {
      clock.advance(100); // a failed renewal: the lease may still hold, keep trying
      for (let i = 0; i < 5; i++) await settle();
      expect(settled).toBe(false);
    }
    clock.advance(100); // a whole lease without a renewal: it can no longer be vouched for
    slow.open();
    await until(() => replays.length === 1 && replays[0]!.aborted);
    expect(settled).toBe(false); // nothing stored: it waits, as a loser does, for the lease to lapse
    clock.advance(300);
    await expect(resolving).rejects.toBeInstanceOf(ClaimLostError);
    expect((await store.get(request.id))?.status).toBe('resolving');
  });

  it('a resolver waiting on a live claim stops when its own signal aborts', async () => {
    const clock = new FakeClock();
    const slow = gate();
    const { toolkit, replays } = slowTool(slow.wait);
    const store = new MemoryStore({ clock });
    const coordinator = new ResumeCoordinator({ toolkit, store, leaseMs: 100, clock });
    const request = pendingOf(await coordinator.execute('slow'))!;
    const holder = coordinator.resolve({ id: request.id, ok: true });
    await until(() => replays.length === 1);
    const controller = new AbortController();
    const waiting = coordinator.resolve({ id: request.id, ok: true }, { signal: controller.signal });
    await settle();
    controller.abort(new Error('gave up waiting'));
    await expect(waiting).rejects.toThrow('gave up waiting');
    slow.open();
    expect((await holder).isError).toBe(false);
  });
});

describe('a suspension bound to its call', () => {
  /** A store whose rows someone edits between the insert and the resolve. */
  function tampered(edit: (call: SuspendedCall) => SuspendedCall): { store: SuspensionStore & RunStore; inner: MemoryStore } {
    const inner = new MemoryStore();
    const store: SuspensionStore & RunStore = Object.assign(Object.create(inner) as SuspensionStore & RunStore, {
      get: async (id: string) => {
        const call = await inner.get(id);
        return call && edit(call);
      },
      claim: async (...args: Parameters<SuspensionStore['claim']>) => {
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
    const plain = new ResumeCoordinator({ toolkit: echo(), store: new MemoryStore() });
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
    const unkeyed = new ResumeCoordinator({ toolkit: transferTool(ran), store: new MemoryStore() });
    const forged = pendingOf(await unkeyed.execute('transfer', { to: 'mallory', cents: 1 }))!;
    const forgedRow = (await unkeyed.get(forged.id))!;
    const swapped = tampered(() => forgedRow);
    const victim = new ResumeCoordinator({ toolkit: transferTool(ran), store: swapped.store, bindingKey: 'k-1' });
    const real = pendingOf(await victim.execute('transfer', { to: 'alice', cents: 5 }))!;
    await expect(victim.resolve({ id: real.id, ok: true })).rejects.toBeInstanceOf(SuspensionMismatchError);
    expect(ran).toEqual([]);

    // The untouched row resolves, keyed.
    const clean = new ResumeCoordinator({ toolkit: transferTool(ran), store: new MemoryStore(), bindingKey: 'k-1' });
    const fine = pendingOf(await clean.execute('transfer', { to: 'alice', cents: 5 }))!;
    expect((await clean.get(fine.id))?.binding).toMatch(/^hmac-sha256:/);
    expect(await clean.resolve({ id: fine.id, ok: true })).toEqual({ output: 'sent', isError: false });
    expect(ran).toEqual(['alice/5']);
  });
});
