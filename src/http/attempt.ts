import { ModelConnectionError, ModelTimeoutError } from '../errors';
import { messageOf } from '../errors/message';
import type { Watched, Watchdog } from './watchdog';

/**
 * The live attempt behind a successful response. Its timeout keeps running while the body
 * is read, so a server that sends headers and then hangs still ends at the timeout; and
 * however often a stream restarts it, it never runs past the call's deadline.
 * Call `dispose` once the body is consumed.
 */
export class Attempt implements Watched {
  /** Made only for a transport that takes a signal (`fetch`): an AbortController costs ≈10 µs on Node 20. */
  private controller: AbortController | undefined;
  private abortHook: (() => void) | undefined;
  private abortReason: unknown;
  private fired = false;
  /** The watchdog's links (see {@link Watched}). */
  watchedBy: Watchdog | undefined = undefined;
  watchPrevious: Watched | undefined = undefined;
  watchNext: Watched | undefined = undefined;
  private abandoned = false;
  /** When the attempt times out, on the `performance.now()` clock (monotonic, unlike `Date.now()`). */
  deadline: number;
  private readonly onCallerAbort = (): void => this.abort(this.callerSignal?.reason);

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
    // One listener, removed in dispose: AbortSignal.any would keep a dependent signal per
    // call alive on a long-lived caller signal (Node 20).
    if (callerSignal?.aborted) this.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.deadline = Math.min(performance.now() + timeoutMs, end);
    watchdog.watch(this);
  }

  /** Abandoned: timed out, or the caller aborted. */
  get aborted(): boolean {
    return this.abandoned;
  }

  /** A signal that aborts with the attempt, for a transport that takes one (`fetch`). */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** Runs `hook` once when the attempt is abandoned (at once if it already is): a transport cancels its request there. */
  onAbort(hook: () => void): void {
    if (this.aborted) hook();
    else this.abortHook = hook;
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
    this.abort(this.timeoutError());
  }

  private abort(reason: unknown): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
    const hook = this.abortHook;
    this.abortHook = undefined;
    hook?.();
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
 * What went wrong on the network (`ECONNREFUSED`, a TLS failure), with its code when it has
 * one. node:http's errors carry it themselves; fetch says only "fetch failed" and carries it
 * in its cause, so there the cause is what the message reports.
 */
function describeNetworkError(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (a VM context), where instanceof fails.
  if (!hasMessage(error)) return messageOf(error);
  const { cause } = error;
  const source = hasMessage(cause) ? cause : error;
  return source.code
    ? `${typeof source.code === 'string' || typeof source.code === 'number' ? source.code : 'error'} (${messageOf(source)})`
    : messageOf(source);
}

function hasMessage(value: unknown): value is { message: string; code?: unknown; cause?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
