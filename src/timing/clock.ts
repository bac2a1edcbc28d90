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
}

/** The system clock: `Date.now()` and Node's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};
