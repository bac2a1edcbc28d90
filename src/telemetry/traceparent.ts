import type { OtelSpanContext } from './otel';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const INVALID_TRACE = /^0+$/;

/** A span context as a W3C `traceparent` header value (version 00). */
export function formatTraceparent(context: OtelSpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${(context.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The remote span context a `traceparent` names, or `undefined` for anything else (no throw: it is stored data). */
export function parseTraceparent(value: unknown): OtelSpanContext | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value);
  if (!match) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (INVALID_TRACE.test(traceId) || INVALID_TRACE.test(spanId)) return undefined;
  return { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
}

/** True for a value {@link parseTraceparent} accepts. */
export function isTraceparent(value: unknown): value is string {
  return parseTraceparent(value) !== undefined;
}
