/** A timer a {@link Clock} started: opaque, handed back to `clearTimeout`. */
export interface ClockTimer {
  /** Lets the process exit while the timer waits (Node's `Timeout.unref`); a fake clock need not have it. */
  unref?(): void;
}

/**
 * Where a component reads the time and waits from: the system's by default, a fake one in
 * tests, so that a retry's backoff or a timeout is stepped through instead of waited for
 * with wall-clock margins (docs/design.md, glossary: "clock").
 */
export interface Clock {
  /** Milliseconds since the epoch, as `Date.now()`. */
  now(): number;
  /** Calls `callback` once, `ms` milliseconds from now on this clock. */
  setTimeout(callback: () => void, ms: number): ClockTimer;
  /** Cancels a timer this clock started; a timer already fired or cancelled is ignored. */
  clearTimeout(timer: ClockTimer): void;
  /**
   * Milliseconds on a monotonic clock, for measuring elapsed time only (a lease keeper's "no
   * renewal got through for a whole lease"): a stepped wall clock cannot stretch or shrink it.
   * Optional: without it, elapsed time is measured with `now()`, as a fake clock wants.
   */
  monotonic?(): number;
}

/** Elapsed-time readings from `clock`: its monotonic clock when it has one, else its `now()`. */
export function monotonicOf(clock: Clock): () => number {
  return clock.monotonic ? () => clock.monotonic!() : () => clock.now();
}

/** The system clock: `Date.now()`, Node's timers and `performance.now()` for elapsed time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
  monotonic: () => performance.now(),
};
