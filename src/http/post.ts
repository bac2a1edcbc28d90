import { ModelConnectionError, ModelHttpError, ModelRedirectError, ModelRequestError, ModelTimeoutError } from '../errors';
import { noteRetry } from '../telemetry/retry';
import { sleep } from '../timing/sleep';
import { Attempt } from './attempt';
import { modelAttemptErrors } from './model-errors';
import { providerMessage } from './provider-errors';
import { backoff, isRetryableStatus, retryAfter } from './retry';
import type { HttpSettings } from './settings';
import { RequestRefused, type Reply, type Transport } from './transport';
import { MAX_TIMER_MS, type Watchdog } from './watchdog';

/** One POST, as a model builds it. */
export interface HttpCall {
  provider: string;
  /** Where the transport sends it; errors name only its origin. */
  url: string;
  transport: Transport;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
  /**
   * How long the provider asks to wait, read from a retryable error's body, for providers
   * that say it there rather than in a header (Gemini's `RetryInfo.retryDelay`). A header wins.
   */
  retryDelayOf?: (body: string) => number | undefined;
}

/** A successful (2xx) reply with the attempt that produced it. */
export interface HttpSuccess {
  reply: Reply;
  attempt: Attempt;
}

/**
 * POSTs `call`, retrying 408 / 429 / 5xx, timeouts and network errors with exponential
 * backoff and jitter (a `retry-after` or `retry-after-ms` header wins, else the delay
 * `retryDelayOf` reads from the error body), within
 * `maxAttempts` and the deadline. Any other status fails at once with a
 * {@link ModelHttpError} carrying the provider's message (read up to `maxErrorBodyBytes`).
 * A redirect is never followed (the request carries the key): it fails at once with a
 * {@link ModelRedirectError}. A request the HTTP client refuses locally (a bad header value
 * or URL) fails at once with a {@link ModelRequestError}. The caller's signal aborts everything,
 * waits included, and rejects with the signal's reason.
 */
export async function postWithRetry(call: HttpCall, settings: HttpSettings, watchdog: Watchdog): Promise<HttpSuccess> {
  const end = performance.now() + settings.deadlineMs;
  for (let number = 1; ; number++) {
    throwIfAborted(call.signal);
    const attemptTimeout = Math.max(1, Math.min(settings.timeoutMs, end - performance.now()));
    const attempt = new Attempt(modelAttemptErrors(call.provider), attemptTimeout, number, call.signal, watchdog, end, settings.deadlineMs);
    let failure: Error;
    let retryAfterMs: number | undefined;
    try {
      const reply = await call.transport.send(call.headers, call.body, attempt);
      if (reply.status >= 200 && reply.status < 300) return { reply, attempt };
      if (reply.isRedirect) {
        await reply.discard();
        throw new ModelRedirectError(call.provider, reply.status, originOf(reply.headers.get('location'), call.url));
      }
      const text = await reply.prefix(settings.maxErrorBodyBytes);
      attempt.dispose();
      const error = new ModelHttpError(call.provider, reply.status, providerMessage(text, reply.statusText), number);
      if (!isRetryableStatus(reply.status)) throw error;
      failure = error;
      retryAfterMs = retryAfter(reply.headers, settings.clock.now()) ?? call.retryDelayOf?.(text);
    } catch (error) {
      attempt.dispose();
      if (error instanceof RequestRefused) throw new ModelRequestError(call.provider, error.detail);
      if (error instanceof ModelHttpError || error instanceof ModelRedirectError) throw error;
      const translated = attempt.failure(error);
      if (!(translated instanceof ModelTimeoutError || translated instanceof ModelConnectionError)) throw translated;
      failure = translated;
    }
    if (number >= settings.maxAttempts) throw failure;
    const delay = retryAfterMs ?? backoff(number, settings);
    if (performance.now() + delay >= end) throw failure;
    noteRetry(number, failure);
    await sleep(Math.min(delay, MAX_TIMER_MS), call.signal, settings.clock);
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
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
