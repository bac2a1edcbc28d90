import type { HttpSettings } from './settings';
import type { ReplyHeaders } from './transport';

/** 408 and 429 say "later"; 5xx say "not now". Everything else will not change on a retry. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** "Equal jitter": half the exponential step, plus a random share of the other half. */
export function backoff(retryNumber: number, settings: HttpSettings): number {
  const step = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (retryNumber - 1));
  return step / 2 + Math.random() * (step / 2);
}

/** `retry-after-ms` (OpenAI), else `retry-after` as seconds or an HTTP date (read against `now`, ms since the epoch). */
export function retryAfter(headers: ReplyHeaders, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
