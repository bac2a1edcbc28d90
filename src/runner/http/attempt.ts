import { ModelConnectionError, ModelTimeoutError } from '../../errors';
import { messageOf } from '../../errors/message';
import type { Watched, Watchdog } from './watchdog';

/**
 * The live attempt behind a successful response. Its timeout keeps running while the body
 * is read, so a server that sends headers and then hangs still ends at the timeout; and
 * however often a stream restarts it, it never runs past the call's deadline.
 * Call `dispose` once the body is consumed.
 */
export class Attempt implements Watched {
  private readonly controller = new AbortController();
  private fired = false;
  readonly signal: AbortSignal;
  /** When the attempt times out, on the `performance.now()` clock (monotonic, unlike `Date.now()`). */
  deadline: number;
  private readonly onCallerAbort = (): void => this.controller.abort(this.callerSignal?.reason);

  constructor(
    private readonly provider: string,
    readonly timeoutMs: number,
    readonly number: number,
    private readonly callerSignal: AbortSignal | undefined,
    private readonly watchdog: Watchdog,
    /** The call's deadline on the same clock: no `touch` moves the timeout past it. */
    private readonly end = Number.POSITIVE_INFINITY,
    /** The call's whole budget, for the error once `end` is reached. */
    private readonly deadlineMs = Number.POSITIVE_INFINITY,
  ) {
    this.signal = this.controller.signal;
    // One listener, removed in dispose: AbortSignal.any would keep a dependent signal per
    // call alive on a long-lived caller signal (Node 20).
    if (callerSignal?.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.deadline = Math.min(performance.now() + timeoutMs, end);
    watchdog.watch(this);
  }

  /** Restarts the timeout: a stream calls it on every chunk, making the timeout an idle timeout, within the call's deadline. */
  touch(): void {
    if (!this.fired) this.deadline = Math.min(performance.now() + this.timeoutMs, this.end);
  }

  dispose(): void {
    this.watchdog.release(this);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  /** Called by the watchdog once the deadline has passed. */
  expire(): void {
    this.fired = true;
    this.controller.abort(this.timeoutError());
  }

  /** Turns whatever reading the body threw into the error the caller should see. */
  failure(error: unknown): unknown {
    if (this.callerSignal?.aborted) return this.callerSignal.reason;
    if (this.fired) return this.timeoutError();
    return new ModelConnectionError(this.provider, describeNetworkError(error), this.number, { cause: error });
  }

  private timeoutError(): ModelTimeoutError {
    const atEnd = Number.isFinite(this.end) && this.deadline >= this.end;
    return new ModelTimeoutError(this.provider, atEnd ? Math.round(this.deadlineMs) : this.timeoutMs, this.number);
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
  return cause.code
    ? `${typeof cause.code === 'string' || typeof cause.code === 'number' ? cause.code : 'error'} (${messageOf(cause)})`
    : messageOf(cause);
}

function hasMessage(value: unknown): value is { message: string; code?: unknown; cause?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
