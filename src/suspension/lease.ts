import { ClaimLostError } from '../errors';
import { AbortLatch } from '../timing/abort-latch';
import { monotonicOf, systemClock, type Clock, type ClockTimer } from '../timing/clock';
import type { Claim, SuspensionStore } from './store';

/**
 * Holds a lease while the work under it runs (a claim's replay, a keyed call's execution):
 * renews it every third of it, and aborts the work the moment the lease is known lost
 * (another process took it over) or can no longer be vouched for (no renewal got through for
 * a whole lease). A holder that lost its lease must not store an outcome: the new holder's stands.
 *
 * Renewal is judged by the store's clock; this process only measures elapsed time (with a
 * monotonic clock), so a wrong wall clock here cannot make it believe it still holds a lease.
 * Its heartbeat runs on `clock` (the coordinator's), so tests step through renewals on fake time.
 */
export class HeldLease {
  private readonly latch = new AbortLatch();
  private readonly every: number;
  private readonly onCallerAbort?: () => void;
  private timer: ClockTimer | undefined;
  private readonly elapsed: () => number;
  private renewedAt: number;
  private stopped = false;
  private lostLease = false;

  /**
   * @param renewal renews the lease for `leaseMs`: true while still held, false once another holder has it.
   * @param lostError what the work is aborted with once the lease is lost.
   */
  constructor(
    private readonly renewal: () => Promise<boolean>,
    private readonly lostError: () => Error,
    private readonly leaseMs: number,
    private readonly caller?: AbortSignal,
    private readonly clock: Clock = systemClock,
  ) {
    this.elapsed = monotonicOf(clock);
    this.renewedAt = this.elapsed();
    this.every = Math.max(1, Math.floor(leaseMs / 3));
    if (caller) {
      this.onCallerAbort = () => this.latch.abort(caller.reason);
      if (caller.aborted) this.onCallerAbort();
      else caller.addEventListener('abort', this.onCallerAbort, { once: true });
    }
    this.schedule();
  }

  /** Aborts when the caller's signal does, or when the lease is lost. Its `signal` is made only when read. */
  get cancellation(): AbortLatch {
    return this.latch;
  }

  /** True once the lease is known lost: the work's outcome must not be stored. */
  get lost(): boolean {
    return this.lostLease;
  }

  /** Stops renewing (the work is over). */
  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    if (this.onCallerAbort) this.caller?.removeEventListener('abort', this.onCallerAbort);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.renew(), this.every);
    // The work keeps its process alive by itself; the heartbeat alone should not.
    this.timer.unref?.();
  }

  private async renew(): Promise<void> {
    const asked = this.elapsed();
    let held: boolean | undefined;
    try {
      held = await this.renewal();
    } catch {
      held = undefined; // the store is unreachable: keep trying while the lease may still hold
    }
    if (this.stopped) return;
    if (held === true) this.renewedAt = asked;
    else if (held === false || this.elapsed() - this.renewedAt >= this.leaseMs) return this.lose();
    this.schedule();
  }

  private lose(): void {
    this.lostLease = true;
    this.stop();
    this.latch.abort(this.lostError());
  }
}

/** Holds a claim while its replay runs (a {@link HeldLease} of the claim): a replay that lost it aborts with {@link ClaimLostError}. */
export class LeaseKeeper extends HeldLease {
  constructor(store: SuspensionStore, claim: Claim, leaseMs: number, caller?: AbortSignal, clock: Clock = systemClock) {
    super(
      () => store.renew(claim, leaseMs),
      () => new ClaimLostError(claim.id, claim.fence),
      leaseMs,
      caller,
      clock,
    );
  }
}
