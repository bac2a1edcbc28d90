/**
 * The part of `@opentelemetry/api` this library uses, described structurally: no type of
 * ours names the package, so an app without it type-checks (and `skipLibCheck: false`
 * holds), and the package itself is required only when telemetry is first asked for.
 */

/** Attribute values, as OpenTelemetry takes them. */
export type OtelValue = string | number | boolean | string[] | number[] | boolean[];
export type OtelAttributes = Record<string, OtelValue | undefined>;

export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
}

export interface OtelLink {
  context: OtelSpanContext;
  attributes?: OtelAttributes;
}

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(key: string, value: OtelValue): unknown;
  setAttributes(attributes: OtelAttributes): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  isRecording(): boolean;
  end(): void;
}

/** An opaque OpenTelemetry context. */
export type OtelContext = object;

export interface OtelSpanOptions {
  kind?: number;
  attributes?: OtelAttributes;
  links?: OtelLink[];
  root?: boolean;
}

export interface OtelTracer {
  startSpan(name: string, options?: OtelSpanOptions, context?: OtelContext): OtelSpan;
}

/** What {@link TelemetryOptions.tracerProvider} must be: any OpenTelemetry `TracerProvider`. */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}

/** What {@link TelemetryOptions.meterProvider} must be: any OpenTelemetry `MeterProvider`. */
export interface MeterProviderLike {
  getMeter(name: string, version?: string): unknown;
}

export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

export interface OtelCounter {
  add(value: number, attributes?: OtelAttributes): void;
}

export interface OtelMeter {
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): OtelHistogram;
  createCounter(name: string, options?: { description?: string; unit?: string }): OtelCounter;
}

export interface OtelTextMapGetter {
  keys(carrier: Record<string, unknown>): string[];
  get(carrier: Record<string, unknown>, key: string): string | undefined;
}

/** The api's module object, as far as this library reads it. */
export interface OtelApi {
  trace: {
    getTracerProvider(): TracerProviderLike & { getDelegate?(): unknown };
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
    setSpanContext(context: OtelContext, spanContext: OtelSpanContext): OtelContext;
    getSpan(context: OtelContext): OtelSpan | undefined;
    getActiveSpan(): OtelSpan | undefined;
    wrapSpanContext(spanContext: OtelSpanContext): OtelSpan;
  };
  metrics: { getMeterProvider(): MeterProviderLike };
  context: {
    active(): OtelContext;
    with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: OtelContext,
      fn: F,
      thisArg?: unknown,
      ...args: A
    ): ReturnType<F>;
  };
  ProxyTracerProvider: new () => { getDelegate(): unknown };
  createNoopMeter(): unknown;
  ROOT_CONTEXT: OtelContext;
  SpanKind: { INTERNAL: number; SERVER: number; CLIENT: number };
  SpanStatusCode: { UNSET: number; OK: number; ERROR: number };
  isSpanContextValid(spanContext: OtelSpanContext): boolean;
}

/**
 * `@opentelemetry/api`, or `undefined` when it is not installed (then nothing is traced).
 * A package that is installed but fails to load is reported as it is: that is a broken
 * install, not an absent one.
 */
export function loadOtelApi(): OtelApi | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded only when telemetry is asked for
    return require('@opentelemetry/api') as OtelApi;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes("'@opentelemetry/api'");
}
