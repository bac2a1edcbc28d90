import { ModelConnectionError, ModelHttpError, ModelTimeoutError } from '../../errors';
import { sleep } from '../../timing/sleep';
import { Attempt } from './attempt';
import { providerMessage } from './provider-errors';
import { backoff, isRetryableStatus, retryAfter } from './retry';
import type { HttpSettings } from './settings';
import type { Watchdog } from './watchdog';

/** One POST, as a model builds it. */
export interface HttpCall {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  signal?: AbortSignal;
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

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}
