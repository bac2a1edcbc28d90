/**
 * How the HTTP models talk to a provider: settings with their defaults, one POST with
 * retries, each attempt timed out by a shared watchdog, and the provider's own words
 * pulled out of an error body. One file per job; this one only gathers them.
 */
export { httpSettings } from './settings';
export type { HttpModelOptions, HttpSettings, RetryOptions } from './settings';
export { postWithRetry } from './post';
export type { HttpCall, HttpSuccess } from './post';
export { Attempt } from './attempt';
export { Watchdog } from './watchdog';
export type { Watched } from './watchdog';
export { isRetryableStatus, retryAfter } from './retry';
export { providerMessage } from './provider-errors';
