import type { Clock } from './clock';

/** What {@link within} gave: the work's value (or its rejection, rethrown by the caller), or that time ran out first. */
export type Within<T> = { value: T } | { timedOut: true };

/**
 * `work` if it settles within `ms` on `clock`, else `{ timedOut: true }`: for a host's callback
 * that may never settle (an automatic-answer rule, a guardrail), so the caller decides what a
 * lapse means instead of waiting for ever. A rejection of `work` rejects this. The timer is
 * cleared when `work` settles first and never holds the process open. Internal.
 */
export async function within<T>(work: Promise<T>, ms: number, clock: Clock): Promise<Within<T>> {
  let timer: ReturnType<Clock['setTimeout']> | undefined;
  const lapse = new Promise<{ timedOut: true }>((resolve) => {
    timer = clock.setTimeout(() => resolve({ timedOut: true }), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([work.then((value) => ({ value })), lapse]);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}

/** Whether `ms` is a time limit a host may set: a positive, finite number of milliseconds. */
export function isTimeLimit(ms: unknown): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0;
}
