import { InvalidArgumentError } from '../../errors';

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
    if (!(settings[key] >= 0) || !Number.isFinite(settings[key]))
      throw new InvalidArgumentError(`${key} must be a finite number >= 0, got ${settings[key]}`);
  }
  if (!Number.isInteger(settings.maxAttempts) || settings.maxAttempts < 1) {
    throw new InvalidArgumentError(`retry.maxAttempts must be an integer >= 1, got ${settings.maxAttempts}`);
  }
  if (typeof settings.fetch !== 'function') throw new InvalidArgumentError('no fetch available: pass options.fetch');
  return settings;
}
