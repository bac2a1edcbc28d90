/**
 * How the HTTP models talk to a provider, and the webhooks to their receiver: settings with
 * their defaults, one POST with retries (one policy: which failures are retried, how a
 * `retry-after` is read), each attempt timed out by a shared watchdog, and the provider's own
 * words pulled out of an error body. One file per job; this one only gathers them.
 */
export { httpSettings } from './settings';
export type { HttpModelOptions, HttpSettings, RetryOptions } from './settings';
export { postWithRetry } from './post';
export type { HttpCall, HttpSuccess } from './post';
export { Attempt } from './attempt';
export type { AttemptErrors } from './attempt';
export { modelAttemptErrors } from './model-errors';
export { Watchdog } from './watchdog';
export type { Watched } from './watchdog';
export { isRetryableStatus, retryAfter } from './retry';
export { providerMessage } from './provider-errors';
