import { ModelConnectionError, ModelHttpError, ModelRedirectError, ModelRequestError, ModelTimeoutError } from '../../errors';
import { sleep } from '../../timing/sleep';
import { Attempt } from './attempt';
import { discard, readPrefix } from './body';
import { providerMessage } from './provider-errors';
import { backoff, isRetryableStatus, retryAfter } from './retry';
import type { HttpSettings } from './settings';
import { MAX_TIMER_MS, type Watchdog } from './watchdog';

/** One POST, as a model builds it. */
export interface HttpCall {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
  /**
   * How long the provider asks to wait, read from a retryable error's body, for providers
   * that say it there rather than in a header (Gemini's `RetryInfo.retryDelay`). A header wins.
   */
  retryDelayOf?: (body: string) => number | undefined;
}

/** A successful (2xx) response with the attempt that produced it. */
export interface HttpSuccess {
  response: Response;
  attempt: Attempt;
}

/**
 * POSTs `call`, retrying 408 / 429 / 5xx, timeouts and network errors with exponential
 * backoff and jitter (a `retry-after` or `retry-after-ms` header wins, else the delay
 * `retryDelayOf` reads from the error body), within
 * `maxAttempts` and the deadline. Any other status fails at once with a
 * {@link ModelHttpError} carrying the provider's message (read up to `maxErrorBodyBytes`).
 * A redirect is never followed (the request carries the key): it fails at once with a
 * {@link ModelRedirectError}. A request `fetch` refuses locally (a bad header value or URL)
 * fails at once with a {@link ModelRequestError}. The caller's signal aborts everything,
 * waits included, and rejects with the signal's reason.
 */
export async function postWithRetry(call: HttpCall, settings: HttpSettings, watchdog: Watchdog): Promise<HttpSuccess> {
  const end = performance.now() + settings.deadlineMs;
  for (let number = 1; ; number++) {
    throwIfAborted(call.signal);
    const attemptTimeout = Math.max(1, Math.min(settings.timeoutMs, end - performance.now()));
    const attempt = new Attempt(call.provider, attemptTimeout, number, call.signal, watchdog, end, settings.deadlineMs);
    let failure: Error;
    let retryAfterMs: number | undefined;
    try {
      let response: Response;
      try {
        response = await settings.fetch(call.url, {
          method: 'POST',
          headers: call.headers,
          body: call.body,
          signal: attempt.signal,
          redirect: 'manual',
        });
      } catch (error) {
        if (isLocalRefusal(error, attempt.signal)) throw new ModelRequestError(call.provider, localDetail(error));
        throw error;
      }
      if (response.ok) return { response, attempt };
      if (isRedirect(response)) {
        await discard(response);
        throw new ModelRedirectError(call.provider, response.status, originOf(response.headers.get('location'), call.url));
      }
      const text = await readPrefix(response, settings.maxErrorBodyBytes);
      attempt.dispose();
      const error = new ModelHttpError(call.provider, response.status, providerMessage(text, response.statusText), number);
      if (!isRetryableStatus(response.status)) throw error;
      failure = error;
      retryAfterMs = retryAfter(response.headers) ?? call.retryDelayOf?.(text);
    } catch (error) {
      attempt.dispose();
      if (error instanceof ModelHttpError || error instanceof ModelRedirectError || error instanceof ModelRequestError) throw error;
      const translated = attempt.failure(error);
      if (!(translated instanceof ModelTimeoutError || translated instanceof ModelConnectionError)) throw translated;
      failure = translated;
    }
    if (number >= settings.maxAttempts) throw failure;
    const delay = retryAfterMs ?? backoff(number, settings);
    if (performance.now() + delay >= end) throw failure;
    await sleep(Math.min(delay, MAX_TIMER_MS), call.signal);
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

/** 3xx with somewhere to go. (`opaqueredirect` is what a browser's fetch gives in manual mode.) */
function isRedirect(response: Response): boolean {
  return (response.status >= 300 && response.status < 400) || response.type === 'opaqueredirect';
}

/** The origin of a redirect target, never its path or query (which may hold anything). */
function originOf(location: string | null, base: string): string {
  if (location === null) return 'unknown';
  try {
    const origin = new URL(location, base).origin;
    return origin === 'null' ? 'unknown' : origin;
  } catch {
    return 'unknown';
  }
}

/**
 * A `fetch` that rejected without touching the network: undici's network failures are
 * `TypeError('fetch failed')` with a cause, aborts are the signal's; anything else thrown
 * as a TypeError (an invalid header value, an unparseable URL) was refused locally, and
 * will be refused again on every retry.
 */
function isLocalRefusal(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return false;
  if (!(error instanceof TypeError) && (error as { name?: unknown } | null)?.name !== 'TypeError') return false;
  const { message, cause } = error as { message?: unknown; cause?: unknown };
  return message !== 'fetch failed' && cause === undefined;
}

/** What was refused, without the value: fetch's own message quotes it (a header value is usually a key). */
function localDetail(error: unknown): string {
  const raw = (error as { message?: unknown }).message;
  const message = typeof raw === 'string' ? raw : '';
  if (/header/i.test(message))
    return 'fetch refused a header value (a control character, CR, LF, NUL or non-ASCII character in a key or header)';
  if (/url/i.test(message)) return 'fetch refused the URL';
  return 'fetch refused the request before sending it';
}
