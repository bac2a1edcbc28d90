import type { Watched, Watchdog } from './watchdog';

/**
 * What an attempt's failures are called by the one sending it: the models' `ModelTimeoutError`
 * and `ModelConnectionError` (model-errors.ts), or the webhooks' reasons.
 */
export interface AttemptErrors {
  /** The attempt ran out of time: `ms` is its timeout, or the call's whole budget when the call's deadline ended it. */
  timeout(ms: number, attempt: number): Error;
  /** The request failed on the network (refused, reset, a TLS failure), with no HTTP answer. */
  network(error: unknown, attempt: number): Error;
}

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
  /** When the attempt times out, on its watchdog's clock (`performance.now()` unless it was given another). */
  deadline: number;
  private readonly onCallerAbort = (): void => this.abort(this.callerSignal?.reason);

  constructor(
    private readonly errors: AttemptErrors,
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
    this.deadline = Math.min(watchdog.now() + timeoutMs, end);
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
    if (!this.fired) this.deadline = Math.min(this.watchdog.now() + this.timeoutMs, this.end);
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
    return this.errors.network(error, this.number);
  }

  private timeoutError(): Error {
    const atEnd = Number.isFinite(this.end) && this.deadline >= this.end;
    return this.errors.timeout(atEnd ? Math.round(this.deadlineMs) : this.timeoutMs, this.number);
  }
}
