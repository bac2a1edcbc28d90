import { getEventListeners } from 'node:events';
// Internal module: the package does not export sleep.
import { sleep } from '../../src/timing/sleep';

/**
 * The timers sleep arms and clears, watched through spies: counting the process's active
 * timers instead would count jest's own too, which come and go on their own schedule.
 */
function watchTimers(): { armed: NodeJS.Timeout[]; cleared: unknown[]; restore(): void } {
  const armed: NodeJS.Timeout[] = [];
  const cleared: unknown[] = [];
  const originalSet = globalThis.setTimeout;
  const originalClear = globalThis.clearTimeout;
  const setSpy = jest.spyOn(globalThis, 'setTimeout').mockImplementation((callback: () => void, ms?: number) => {
    const timer = originalSet(callback, ms);
    armed.push(timer);
    return timer;
  });
  const clearSpy = jest.spyOn(globalThis, 'clearTimeout').mockImplementation((timer) => {
    cleared.push(timer);
    originalClear(timer);
  });
  return {
    armed,
    cleared,
    restore: () => {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    },
  };
}

describe('sleep', () => {
  it('resolves after ms, no sooner, and takes its abort listener off', async () => {
    const controller = new AbortController();
    const started = performance.now();
    const waiting = sleep(40, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await expect(waiting).resolves.toBeUndefined();
    // setTimeout may fire a millisecond early by performance.now()'s clock.
    expect(performance.now() - started).toBeGreaterThanOrEqual(39);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('resolves without a signal', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });

  it('rejects with the reason as soon as the signal aborts, clearing its timer and listener', async () => {
    const controller = new AbortController();
    const timers = watchTimers();
    try {
      const started = performance.now();
      const waiting = sleep(60_000, controller.signal);
      expect(timers.armed).toHaveLength(1);
      const reason = new Error('stop');
      queueMicrotask(() => controller.abort(reason));
      await expect(waiting).rejects.toBe(reason);
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(timers.cleared).toEqual(timers.armed);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      timers.restore();
    }
  });

  it('rejects at once, arming nothing, when the signal has already aborted', async () => {
    const timers = watchTimers();
    try {
      const signal = AbortSignal.abort('already');
      const waiting = sleep(60_000, signal);
      expect(timers.armed).toHaveLength(0);
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      await expect(waiting).rejects.toBe('already');
    } finally {
      timers.restore();
    }
  });

  it('rejects with whatever the reason is: an AbortError DOMException by default', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });
});
