import { ModelConnectionError, ModelTimeoutError } from '../../errors';
import { messageOf } from '../../errors/message';
import type { Watched, Watchdog } from './watchdog';

/**
 * The live attempt behind a successful response. Its timeout keeps running while the body
 * is read, so a server that sends headers and then hangs still ends at the timeout.
 * Call `dispose` once the body is consumed.
 */
export class Attempt implements Watched {
  private readonly controller = new AbortController();
  private fired = false;
  readonly signal: AbortSignal;
  /** When the attempt times out, on the `performance.now()` clock (monotonic, unlike `Date.now()`). */
  deadline: number;

  constructor(
    private readonly provider: string,
    readonly timeoutMs: number,
    readonly number: number,
    private readonly callerSignal: AbortSignal | undefined,
    private readonly watchdog: Watchdog,
  ) {
    this.signal = callerSignal ? AbortSignal.any([callerSignal, this.controller.signal]) : this.controller.signal;
    this.deadline = performance.now() + timeoutMs;
    watchdog.watch(this);
  }

  /** Restarts the timeout: a stream calls it on every chunk, making the timeout an idle timeout. */
  touch(): void {
    if (!this.fired) this.deadline = performance.now() + this.timeoutMs;
  }

  dispose(): void {
    this.watchdog.release(this);
  }

  /** Called by the watchdog once the deadline has passed. */
  expire(): void {
    this.fired = true;
    this.controller.abort(new ModelTimeoutError(this.provider, this.timeoutMs, this.number));
  }

  /** Turns whatever reading the body threw into the error the caller should see. */
  failure(error: unknown): unknown {
    if (this.callerSignal?.aborted) return this.callerSignal.reason;
    if (this.fired) return new ModelTimeoutError(this.provider, this.timeoutMs, this.number);
    return new ModelConnectionError(this.provider, describeNetworkError(error), this.number, { cause: error });
  }
}

/**
 * fetch says only "fetch failed"; what went wrong (`ECONNREFUSED`, a TLS failure) is its
 * cause, so the cause is what the message reports, with its code when it has one.
 */
function describeNetworkError(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (a VM context), where instanceof fails.
  if (!hasMessage(error)) return messageOf(error);
  const { cause } = error;
  if (!hasMessage(cause)) return messageOf(error);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- code is whatever the runtime set (a string like ECONNREFUSED, sometimes a number); String() prints either
  return cause.code ? `${String(cause.code)} (${messageOf(cause)})` : messageOf(cause);
}

function hasMessage(value: unknown): value is { message: string; code?: unknown; cause?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
