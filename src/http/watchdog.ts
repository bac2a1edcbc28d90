import { monotonicOf, type Clock, type ClockTimer } from '../timing/clock';

/** What the {@link Watchdog} times out: anything with a deadline that can be expired. */
export interface Watched {
  /** When to expire, on the watchdog's clock ({@link Watchdog.now}). */
  readonly deadline: number;
  /** Called once, when the deadline has passed while still watched. */
  expire(): void;
  /**
   * The watchdog's links, read and written by the watchdog alone: the one watching it, and
   * its neighbours in that watchdog's list. Declared (undefined) when the item is built, so
   * that linking it adds no property to it.
   */
  watchedBy: Watchdog | undefined;
  watchPrevious: Watched | undefined;
  watchNext: Watched | undefined;
}

/** The longest delay setTimeout honours. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Times out the attempts of one model with ONE timer, armed for the earliest deadline.
 * A timer per attempt, armed and then cleared a millisecond later by the response, is
 * measurable overhead on a 1 ms request (docs/performance.md, "Agents"); here an attempt
 * only joins and leaves a set. The timer is re-armed when it fires (a response that came
 * in meanwhile just left the set) or when an attempt with an earlier deadline joins.
 */
export class Watchdog {
  /**
   * The items watched, as a list threaded through the items themselves. A Set held them
   * before: at 64 requests in flight, adding and deleting an attempt per request in a
   * long-lived Set cost the agent run about a tenth of its client CPU, mostly in young
   * collections (docs/performance.md, "Where the time goes"); linking costs a few stores.
   */
  private head: Watched | undefined;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The timer armed on a given clock, in place of {@link timer}. */
  private clockTimer: ClockTimer | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  /** The time deadlines are read against: monotonic, unlike `Date.now()`, unless a clock says otherwise. */
  readonly now: () => number;

  /**
   * On `clock` when given (the webhooks' clock, which a test fakes): deadlines are read
   * against its monotonic time, its timer is armed and, once nothing is watched, cleared.
   * Without one, on `performance.now()` and Node's own timer.
   */
  constructor(private readonly clock?: Clock) {
    this.now = clock ? monotonicOf(clock) : () => performance.now();
  }

  watch(item: Watched): void {
    if (item.watchedBy !== undefined) item.watchedBy.unlink(item);
    item.watchedBy = this;
    item.watchPrevious = undefined;
    item.watchNext = this.head;
    if (this.head !== undefined) this.head.watchPrevious = item;
    this.head = item;
    this.count++;
    if (item.deadline < this.armedFor) this.arm(item.deadline);
    // Pending work keeps the process alive, as a timer per attempt did...
    else if (this.count === 1) this.timer?.ref();
  }

  release(item: Watched): void {
    if (!this.unlink(item) || this.count > 0) return;
    // ...and idle, the timer left armed must not hold the process open. A clock's timer is
    // cleared instead: a clock has no unref to count on, and a fake one lists what is armed.
    if (this.clock === undefined) this.timer?.unref();
    else if (this.clockTimer !== undefined) {
      this.clock.clearTimeout(this.clockTimer);
      this.clockTimer = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
    }
  }

  /** Takes `item` out of the list; false when this watchdog was not watching it. */
  private unlink(item: Watched): boolean {
    if (item.watchedBy !== this) return false;
    const { watchPrevious: previous, watchNext: next } = item;
    if (previous === undefined) this.head = next;
    else previous.watchNext = next;
    if (next !== undefined) next.watchPrevious = previous;
    item.watchedBy = undefined;
    item.watchPrevious = undefined;
    item.watchNext = undefined;
    this.count--;
    return true;
  }

  private arm(at: number): void {
    this.armedFor = at;
    // setTimeout fires at once (after a warning) for a delay over 2^31-1 ms: arm for at most
    // that long; fire() re-arms for what is left.
    const ms = Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - this.now())));
    if (this.clock !== undefined) {
      if (this.clockTimer !== undefined) this.clock.clearTimeout(this.clockTimer);
      this.clockTimer = this.clock.setTimeout(() => this.fire(), ms);
      return;
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fire(), ms);
  }

  private fire(): void {
    this.timer = undefined;
    this.clockTimer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.now();
    let next = Number.POSITIVE_INFINITY;
    const expired: Watched[] = [];
    for (let item = this.head; item !== undefined; item = item.watchNext) {
      if (item.deadline <= now) expired.push(item);
      else next = Math.min(next, item.deadline);
    }
    // All taken out before any is told: what an expiry does to the list cannot derail the walk.
    for (const item of expired) this.unlink(item);
    for (const item of expired) item.expire();
    // An expiry may have watched something new, and armed for it already.
    if (next < this.armedFor) this.arm(next);
  }
}
