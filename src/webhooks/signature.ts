import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the Unix time (seconds) the delivery was signed at. */
export const WEBHOOK_TIMESTAMP_HEADER = 'x-toolnexus-timestamp';
/** The header carrying `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-toolnexus-signature';
/** The header naming the event: `suspension.pending` or `suspension.settled`. */
export const WEBHOOK_EVENT_HEADER = 'x-toolnexus-event';
/** The header carrying the delivery id, the same on every retry of one delivery: dedupe on it. */
export const WEBHOOK_DELIVERY_HEADER = 'x-toolnexus-delivery';

/** How far a delivery's timestamp may be from the receiver's clock by default: 5 minutes. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

/**
 * The signature header value of a delivery: `v1=` and the hex HMAC-SHA256, keyed with the
 * shared secret, of the timestamp, a dot and the exact body bytes.
 */
export function signWebhook(secret: string | Uint8Array, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** What {@link verifyWebhook} checks: the raw body as received and the two headers. */
export interface WebhookVerification {
  secret: string | Uint8Array;
  /** The request body exactly as received (before any JSON parsing). */
  body: string | Uint8Array;
  /** The `x-toolnexus-timestamp` header. */
  timestamp: string | undefined;
  /** The `x-toolnexus-signature` header. */
  signature: string | undefined;
  /** Largest accepted distance between the timestamp and `now`, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock, in milliseconds since the epoch. Default `Date.now()`. */
  now?: number;
}

/**
 * True when a delivery was signed with `secret` and its timestamp is within the tolerance
 * (so a captured delivery cannot be replayed later). Compares in constant time. For
 * receivers in other languages, docs/operating.md ("Webhooks") spells the check out.
 */
export function verifyWebhook(check: WebhookVerification): boolean {
  const { timestamp, signature } = check;
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp) || typeof signature !== 'string') return false;
  const tolerance = check.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const now = (check.now ?? Date.now()) / 1000;
  if (Math.abs(now - Number(timestamp)) > tolerance) return false;
  const body = typeof check.body === 'string' ? check.body : Buffer.from(check.body).toString('utf8');
  const expected = Buffer.from(signWebhook(check.secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
