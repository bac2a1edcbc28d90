import { createHash } from 'node:crypto';

/**
 * The idempotency key of a call with a run and a call id: a digest of both, 47 characters, so
 * it fits any API's key field and shows neither id. `undefined` without both.
 */
export function idempotencyKeyOf(place: { runId?: string; callId?: string }): string | undefined {
  if (place.runId === undefined || place.callId === undefined) return undefined;
  return `tnx_${createHash('sha256').update(`${place.runId}\n${place.callId}`).digest('base64url')}`;
}

/**
 * `ctx` with its `idempotencyKey` (of the call's run and call id) computed on first read: a
 * SHA-256 costs about 3 µs, and most tools never read the key. The value is the same on every
 * read, and a copy of the context (a spread reads the getter) carries it as a plain value.
 * Without both ids the context is left as it is.
 */
export function withIdempotencyKey<T extends { idempotencyKey?: string }>(ctx: T, place: { runId?: string; callId?: string }): T {
  const { runId, callId } = place;
  if (runId === undefined || callId === undefined) return ctx;
  let key: string | undefined;
  Object.defineProperty(ctx, 'idempotencyKey', {
    get: () => (key ??= idempotencyKeyOf({ runId, callId })),
    // A host (a beforeTool hook) may still set its own.
    set: (value: string) => {
      key = value;
    },
    enumerable: true,
    configurable: true,
  });
  return ctx;
}

/** Whether `ctx` already has a key (given, or to be computed on first read), without computing it. */
export function hasIdempotencyKey(ctx: { idempotencyKey?: string } | undefined): boolean {
  if (ctx === undefined) return false;
  const own = Object.getOwnPropertyDescriptor(ctx, 'idempotencyKey');
  return own !== undefined && (own.get !== undefined || own.value !== undefined);
}
