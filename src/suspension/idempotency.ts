import { createHash } from 'node:crypto';

/**
 * The idempotency key of a call with a run and a call id: a digest of both, 47 characters, so
 * it fits any API's key field and shows neither id. `undefined` without both.
 */
export function idempotencyKeyOf(place: { runId?: string; callId?: string }): string | undefined {
  if (place.runId === undefined || place.callId === undefined) return undefined;
  return `tnx_${createHash('sha256').update(`${place.runId}\n${place.callId}`).digest('base64url')}`;
}
