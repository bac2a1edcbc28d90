/**
 * MemoryStore on a fake clock (MemoryStoreOptions.clock): a lease lapses and an
 * expiry passes when the clock says so, stepped through without waiting or wall-clock margins.
 */
import 'reflect-metadata';
import { Tool, Toolkit, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator, type Clock, type ClockTimer } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';

/** A clock that moves only when told to (no timers are needed by the store). */
class FakeClock implements Clock {
  at = Date.UTC(2030, 0, 1);
  now(): number {
    return this.at;
  }
  setTimeout(): ClockTimer {
    throw new Error('the store sets no timers');
  }
  clearTimeout(): void {}
}

@Tool({ name: 'ship', description: 'Ships once approved within the hour' })
class ShipTool {
  static clock: FakeClock;
  run(_args: object, ctx?: ToolContext) {
    if (ctx?.replay?.request.kind !== 'approval')
      return pending({ kind: 'approval', prompt: 'Ship?', expiresAt: new Date(ShipTool.clock.now() + 3_600_000).toISOString() });
    return success('shipped');
  }
}

describe('MemoryStore on a fake clock', () => {
  it('a claim is held until its lease lapses by the clock, then taken over under the next fence', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(ShipTool), store });
    ShipTool.clock = clock;
    const { id } = pendingOf(await coordinator.execute('ship', {}))!;

    const first = await store.claim(id, { id, ok: true }, 10_000);
    expect(first).toMatchObject({ fence: 1, at: new Date(clock.at).toISOString() });
    expect(first!.call.leaseUntil).toBe(new Date(clock.at + 10_000).toISOString());
    clock.at += 10_000; // the lease's last instant: still held
    expect(await store.claim(id, { id, ok: true }, 10_000)).toBeUndefined();
    expect(await store.renew(first!, 10_000)).toBe(true); // renewed from the clock's now
    clock.at += 10_000;
    expect(await store.claim(id, { id, ok: true }, 10_000)).toBeUndefined();
    clock.at += 1;
    const second = await store.claim(id, { id, ok: true }, 10_000);
    expect(second).toMatchObject({ fence: 2 });
    expect(await store.renew(first!, 10_000)).toBe(false); // the old holder is fenced out
  });

  it('judges a request’s expiry by the claim’s instant on the store clock', async () => {
    const clock = new FakeClock();
    ShipTool.clock = clock;
    const store = new MemoryStore({ clock });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(ShipTool), store });

    const inTime = pendingOf(await coordinator.execute('ship', {}))!;
    clock.at += 3_599_000;
    expect(await coordinator.resolve({ id: inTime.id, ok: true })).toEqual({ output: 'shipped', isError: false });

    const late = pendingOf(await coordinator.execute('ship', {}))!;
    clock.at += 3_600_001;
    const result = await coordinator.resolve({ id: late.id, ok: true });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^declined\/expired: Ship\?/);
    expect((await store.get(late.id))!.status).toBe('expired');
  });

  it('refuses a clock that is not one', () => {
    expect(() => new MemoryStore({ clock: {} as Clock })).toThrow('MemoryStore: clock must be a Clock');
  });
});
