/** What the {@link Watchdog} times out: anything with a deadline that can be expired. */
export interface Watched {
  /** When to expire, on the `performance.now()` clock (monotonic, unlike `Date.now()`). */
  readonly deadline: number;
  /** Called once, when the deadline has passed while still watched. */
  expire(): void;
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
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  watch(item: Watched): void {
    this.watched.add(item);
    if (item.deadline < this.armedFor) this.arm(item.deadline);
    // Pending work keeps the process alive, as a timer per attempt did...
    else if (this.watched.size === 1) this.timer?.ref();
  }

  release(item: Watched): void {
    // ...and idle, the timer left armed must not hold the process open.
    if (this.watched.delete(item) && this.watched.size === 0) this.timer?.unref();
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = at;
    // setTimeout fires at once (after a warning) for a delay over 2^31-1 ms: arm for at most
    // that long; fire() re-arms for what is left.
    this.timer = setTimeout(() => this.fire(), Math.min(MAX_TIMER_MS, Math.max(1, Math.ceil(at - performance.now()))));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const item of this.watched) {
      if (item.deadline <= now) {
        this.watched.delete(item);
        item.expire();
      } else {
        next = Math.min(next, item.deadline);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}
