import { systemClock, type Clock } from './clock';

/**
 * Waits `ms` milliseconds, or less if `signal` aborts first: then it rejects with the
 * signal's `reason`, at once when the signal is already aborted. Either way it leaves no
 * timer and no listener behind, so a long wait that is cancelled holds neither the process
 * open nor the signal's listeners (a run's signal lives as long as the run).
 * On `clock` (the system's by default), so a fake clock steps through the wait.
 * Internal: not re-exported from the package entry.
 */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- rejects with the signal's own reason, whatever it is, as AbortSignal-aware APIs do
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the signal's own reason, as above
      reject(signal?.reason);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
