import { InvalidArgumentError, ModelConnectionError, ModelHttpError, ModelTimeoutError } from '../errors';

/** How a model call retries what may pass: 408, 429, 5xx, timeouts and network errors. */
export interface RetryOptions {
  /** Attempts in all, the first one included. Default 3; 1 disables retries. */
  maxAttempts?: number;
  /** The first backoff delay; it doubles on every retry (with jitter). Default 500 ms. */
  baseDelayMs?: number;
  /** The longest backoff delay. A server's `retry-after` is honoured even when longer, within the deadline. Default 8000 ms. */
  maxDelayMs?: number;
}

/** HTTP settings shared by the HTTP models. */
export interface HttpModelOptions {
  /** Bounds one attempt: connecting, the headers and the whole body (for a stream: each gap between chunks). Default 60 000 ms. */
  timeoutMs?: number;
  /** Bounds the whole call: every attempt and every wait between them. Default 120 000 ms. */
  deadlineMs?: number;
  retry?: RetryOptions;
  /** Extra request headers (an OpenRouter `HTTP-Referer`, a gateway key...). */
  headers?: Record<string, string>;
  /** The `fetch` to use; defaults to the platform's. */
  fetch?: typeof fetch;
}

/** {@link HttpModelOptions} with every default applied. */
export interface HttpSettings {
  timeoutMs: number;
  deadlineMs: number;
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  headers: Record<string, string>;
  fetch: typeof fetch;
}

/** Applies the defaults and rejects nonsense at construction (a programmer error). */
export function httpSettings(options: HttpModelOptions): HttpSettings {
  const settings: HttpSettings = {
    timeoutMs: options.timeoutMs ?? 60_000,
    deadlineMs: options.deadlineMs ?? 120_000,
    maxAttempts: options.retry?.maxAttempts ?? 3,
    baseDelayMs: options.retry?.baseDelayMs ?? 500,
    maxDelayMs: options.retry?.maxDelayMs ?? 8_000,
    headers: options.headers ?? {},
    fetch: options.fetch ?? globalThis.fetch,
  };
  for (const key of ['timeoutMs', 'deadlineMs', 'baseDelayMs', 'maxDelayMs'] as const) {
    if (!(settings[key] >= 0) || !Number.isFinite(settings[key])) throw new InvalidArgumentError(`${key} must be a finite number >= 0, got ${settings[key]}`);
  }
  if (!Number.isInteger(settings.maxAttempts) || settings.maxAttempts < 1) {
    throw new InvalidArgumentError(`retry.maxAttempts must be an integer >= 1, got ${settings.maxAttempts}`);
  }
  if (typeof settings.fetch !== 'function') throw new InvalidArgumentError('no fetch available: pass options.fetch');
  return settings;
}

/** One POST, as a model builds it. */
export interface HttpCall {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
}

/**
 * The live attempt behind a successful response. Its timeout keeps running while the body
 * is read, so a server that sends headers and then hangs still ends at the timeout.
 * Call `dispose` once the body is consumed.
 */
export class Attempt {
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
 * Times out the attempts of one model with ONE timer, armed for the earliest deadline.
 * A timer per attempt, armed and then cleared a millisecond later by the response, is
 * measurable overhead on a 1 ms request (docs/performance.md, "Agents"); here an attempt
 * only joins and leaves a set. The timer is re-armed when it fires (a response that came
 * in meanwhile just left the set) or when an attempt with an earlier deadline joins.
 */
export class Watchdog {
  private readonly attempts = new Set<Attempt>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  watch(attempt: Attempt): void {
    this.attempts.add(attempt);
    if (attempt.deadline < this.armedFor) this.arm(attempt.deadline);
    // Pending work keeps the process alive, as a timer per attempt did...
    else if (this.attempts.size === 1) this.timer?.ref();
  }

  release(attempt: Attempt): void {
    // ...and idle, the timer left armed must not hold the process open.
    if (this.attempts.delete(attempt) && this.attempts.size === 0) this.timer?.unref();
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(1, Math.ceil(at - performance.now())));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const attempt of this.attempts) {
      if (attempt.deadline <= now) {
        this.attempts.delete(attempt);
        attempt.expire();
      } else {
        next = Math.min(next, attempt.deadline);
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

/** A successful (2xx) response with the attempt that produced it. */
export interface HttpSuccess {
  response: Response;
  attempt: Attempt;
}

/**
 * POSTs `call`, retrying 408 / 429 / 5xx, timeouts and network errors with exponential
 * backoff and jitter (a `retry-after` or `retry-after-ms` header wins), within
 * `maxAttempts` and the deadline. Any other status fails at once with a
 * {@link ModelHttpError} carrying the provider's message. The caller's signal aborts
 * everything, waits included, and rejects with the signal's reason.
 */
export async function postWithRetry(call: HttpCall, settings: HttpSettings, watchdog: Watchdog): Promise<HttpSuccess> {
  const deadline = Date.now() + settings.deadlineMs;
  for (let number = 1; ; number++) {
    throwIfAborted(call.signal);
    const attemptTimeout = Math.max(1, Math.min(settings.timeoutMs, deadline - Date.now()));
    const attempt = new Attempt(call.provider, attemptTimeout, number, call.signal, watchdog);
    let failure: Error;
    let retryAfterMs: number | undefined;
    try {
      const response = await settings.fetch(call.url, {
        method: 'POST',
        headers: call.headers,
        body: call.body,
        signal: attempt.signal,
      });
      if (response.ok) return { response, attempt };
      const text = await response.text();
      attempt.dispose();
      const error = new ModelHttpError(call.provider, response.status, providerMessage(text, response.statusText), number);
      if (!isRetryableStatus(response.status)) throw error;
      failure = error;
      retryAfterMs = retryAfter(response.headers);
    } catch (error) {
      attempt.dispose();
      if (error instanceof ModelHttpError) throw error;
      const translated = attempt.failure(error);
      if (!(translated instanceof ModelTimeoutError || translated instanceof ModelConnectionError)) throw translated;
      failure = translated;
    }
    if (number >= settings.maxAttempts) throw failure;
    const delay = retryAfterMs ?? backoff(number, settings);
    if (Date.now() + delay >= deadline) throw failure;
    await sleep(delay, call.signal);
  }
}

/** 408 and 429 say "later"; 5xx say "not now". Everything else will not change on a retry. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** "Equal jitter": half the exponential step, plus a random share of the other half. */
function backoff(retryNumber: number, settings: HttpSettings): number {
  const step = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (retryNumber - 1));
  return step / 2 + Math.random() * (step / 2);
}

/** `retry-after-ms` (OpenAI), else `retry-after` as seconds or an HTTP date. */
export function retryAfter(headers: Headers): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The provider's explanation from an error body (`{error:{message}}`, `{error:"..."}`, `{message}`, `{detail}`), else the body itself. */
export function providerMessage(body: string, statusText: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return statusText || 'no message';
  try {
    const parsed: unknown = JSON.parse(trimmed);
    const found = messageIn(parsed);
    if (found !== undefined) return found;
  } catch {
    // not JSON: the raw text is the message
  }
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}...` : trimmed;
}

function messageIn(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const error = record.error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof (error as Record<string, unknown>).message === 'string') {
    return (error as Record<string, unknown>).message as string;
  }
  if (typeof record.message === 'string') return record.message;
  if (typeof record.detail === 'string') return record.detail;
  return undefined;
}

function describeNetworkError(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (a VM context), where instanceof fails.
  const outer = asErrorLike(error);
  if (!outer) return String(error);
  const cause = asErrorLike(outer.cause);
  if (cause) return cause.code ? `${cause.code} (${cause.message})` : cause.message;
  return outer.message;
}

function asErrorLike(value: unknown): { message: string; code?: string; cause?: unknown } | undefined {
  if (typeof value !== 'object' || value === null || typeof (value as { message?: unknown }).message !== 'string') return undefined;
  return value as { message: string; code?: string; cause?: unknown };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
