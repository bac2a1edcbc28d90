import { InvalidArgumentError } from '../errors';
import { systemClock, type Clock } from '../timing/clock';

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
  /**
   * Bounds one attempt: connecting, the headers and the whole body (for a stream: each gap
   * between chunks). Default 60 000 ms. `Infinity` means no attempt timeout.
   */
  timeoutMs?: number;
  /**
   * Bounds the whole call: every attempt, every wait between them and the whole body of a
   * stream, however steadily the server keeps sending. Default 120 000 ms. `Infinity`
   * means no deadline.
   */
  deadlineMs?: number;
  /**
   * The most bytes read from a successful response: a JSON body, or a whole stream. A
   * larger one is cut off with a `ModelResponseTooLargeError`. Default 32 MiB.
   */
  maxResponseBytes?: number;
  /**
   * The most bytes read from an error (non-2xx) response, for the provider's message; the
   * rest is discarded unread. Default 64 KiB.
   */
  maxErrorBodyBytes?: number;
  /**
   * The longest server-sent event (and line) of a stream, in bytes. A longer one (a server
   * sending bytes without a line end) ends the stream with a `ModelResponseTooLargeError`.
   * Default 4 MiB.
   */
  maxEventBytes?: number;
  retry?: RetryOptions;
  /** Extra request headers (an OpenRouter `HTTP-Referer`, a gateway key...). */
  headers?: Record<string, string>;
  /**
   * A `fetch` to send the requests with (a proxy's, an instrumented one). By default the
   * models use node:http(s) with a keep-alive pool per model, which costs a fraction of the
   * platform `fetch` per call on Node 20 (docs/agents.md, "HTTP").
   */
  fetch?: typeof fetch;
  /**
   * Paces the waits between retries (the backoff, a `retry-after`) and reads a `retry-after`
   * date against its `now()`. Default: the system clock; tests pass a fake one to step through
   * the backoff. Attempt timeouts and the deadline bound real I/O and stay on the monotonic clock.
   */
  clock?: Clock;
}

/** {@link HttpModelOptions} with every default applied. */
export interface HttpSettings {
  timeoutMs: number;
  deadlineMs: number;
  maxResponseBytes: number;
  maxErrorBodyBytes: number;
  maxEventBytes: number;
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  headers: Record<string, string>;
  /** The user's `fetch`, or undefined for the built-in node:http(s) transport. */
  fetch: typeof fetch | undefined;
  clock: Clock;
}

export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_ERROR_BODY_BYTES = 64 * 1024;
export const DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** Applies the defaults and rejects nonsense at construction (a programmer error). */
export function httpSettings(options: HttpModelOptions): HttpSettings {
  const settings: HttpSettings = {
    timeoutMs: options.timeoutMs ?? 60_000,
    deadlineMs: options.deadlineMs ?? 120_000,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    maxErrorBodyBytes: options.maxErrorBodyBytes ?? DEFAULT_MAX_ERROR_BODY_BYTES,
    maxEventBytes: options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
    maxAttempts: options.retry?.maxAttempts ?? 3,
    baseDelayMs: options.retry?.baseDelayMs ?? 500,
    maxDelayMs: options.retry?.maxDelayMs ?? 8_000,
    headers: options.headers ?? {},
    fetch: options.fetch,
    clock: options.clock ?? systemClock,
  };
  // Timeouts may be Infinity (none); timers longer than setTimeout's 2^31-1 ms are re-armed by the watchdog.
  for (const key of ['timeoutMs', 'deadlineMs'] as const) {
    if (typeof settings[key] !== 'number' || !(settings[key] >= 0))
      throw new InvalidArgumentError(`${key} must be a finite number >= 0, got ${settings[key]} (or Infinity for none)`);
  }
  for (const key of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!(settings[key] >= 0) || !Number.isFinite(settings[key]))
      throw new InvalidArgumentError(`${key} must be a finite number >= 0, got ${settings[key]}`);
  }
  for (const key of ['maxResponseBytes', 'maxErrorBodyBytes', 'maxEventBytes'] as const) {
    if (!Number.isSafeInteger(settings[key]) || settings[key] < 1)
      throw new InvalidArgumentError(`${key} must be an integer >= 1, got ${settings[key]}`);
  }
  if (!Number.isInteger(settings.maxAttempts) || settings.maxAttempts < 1) {
    throw new InvalidArgumentError(`retry.maxAttempts must be an integer >= 1, got ${settings.maxAttempts}`);
  }
  if (settings.fetch !== undefined && typeof settings.fetch !== 'function') throw new InvalidArgumentError('fetch must be a function');
  const clock = settings.clock as Partial<Clock> | null;
  if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function' || typeof clock.clearTimeout !== 'function')
    throw new InvalidArgumentError('clock must have now, setTimeout and clearTimeout');
  if (typeof settings.headers !== 'object' || settings.headers === null)
    throw new InvalidArgumentError('headers must be an object of strings');
  return settings;
}

/**
 * Checks a request header at construction, so a bad one is a clear programmer error here
 * and not an HTTP client's failure later whose message quotes the value (often a key). The
 * message names the header, never its value.
 */
export function checkHeader(owner: string, name: string, value: unknown, what = `header "${safeName(name)}"`): void {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
    throw new InvalidArgumentError(`${owner}: ${JSON.stringify(safeName(name))} is not a valid HTTP header name`);
  if (typeof value !== 'string') throw new InvalidArgumentError(`${owner}: ${what} must be a string`);
  // Visible ASCII, spaces and tabs inside: no CR, LF, NUL, other controls or non-ASCII characters.
  if (!/^[\x21-\x7e]([\t\x20-\x7e]*[\x21-\x7e])?$/.test(value) && value !== '') {
    throw new InvalidArgumentError(
      `${owner}: ${what} contains a character not allowed in an HTTP header value (CR, LF, NUL, another control character, non-ASCII, or surrounding whitespace); the value is not shown`,
    );
  }
}

function safeName(name: string): string {
  return name.replace(/[^\x20-\x7e]/g, '?').slice(0, 64);
}

/**
 * `raw` as an absolute http: or https: URL, checked where a caller hands one over; else an
 * {@link InvalidArgumentError} saying `notUrl` (it does not parse) or `notHttp` (another scheme).
 * The URL is not echoed (it may carry a key).
 */
export function httpUrlOf(raw: unknown, notUrl: string, notHttp: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(raw as string);
  } catch {
    throw new InvalidArgumentError(notUrl);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidArgumentError(notHttp);
  return parsed;
}

/** Checks a request URL at construction: parseable and http(s). The URL is not echoed (it may carry a key in its query). */
export function checkUrl(owner: string, url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgumentError(`${owner}: baseUrl is not a valid absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new InvalidArgumentError(`${owner}: baseUrl must be http: or https:, got ${parsed.protocol}`);
  // A URL ends up in logs and traces; a key belongs in a header (apiKey, options.headers).
  if (parsed.username !== '' || parsed.password !== '')
    throw new InvalidArgumentError(`${owner}: baseUrl must not carry credentials (user:password@); pass them as a header instead`);
}
