import { InvalidArgumentError } from '../errors';
import { ATTR, DURATION_BUCKETS, INSTRUMENTATION_SCOPE, METRIC, SEMCONV_VERSION, TOKEN_BUCKETS } from './conventions';
import {
  loadOtelApi,
  type MeterProviderLike,
  type OtelApi,
  type OtelAttributes,
  type OtelContext,
  type OtelCounter,
  type OtelHistogram,
  type OtelLink,
  type OtelMeter,
  type OtelSpan,
  type OtelTracer,
  type TracerProviderLike,
} from './otel';
import type { TelemetryOption, TelemetryOptions } from './options';
import { formatTraceparent, parseTraceparent } from './traceparent';

/** Longest captured content attribute, in characters; the rest is cut (an outsider controls it). */
export const MAX_CAPTURED_CHARS = 16_384;
const REDACTED = '[redacted]';

/** The instruments of one meter. */
export interface Instruments {
  duration: OtelHistogram;
  tokens: OtelHistogram;
  toolCalls: OtelCounter;
  suspensions: OtelCounter;
}

export type SpanKindName = 'internal' | 'client' | 'server';

/**
 * What records right now: the api, the tracer (when a tracer provider is registered or
 * given) and the instruments (when a meter provider is). Made by {@link Telemetry.active}.
 */
export class Tracing {
  constructor(
    readonly api: OtelApi,
    readonly tracer: OtelTracer | undefined,
    readonly metrics: Instruments | undefined,
    readonly options: TelemetryOptions,
    private readonly secrets: readonly string[],
  ) {}

  get captureContent(): boolean {
    return this.options.captureContent === true;
  }

  /** Starts a span under `parent` (default: the active context), or returns `undefined` when no tracer records. */
  start(name: string, kind: SpanKindName, attributes: OtelAttributes, parent?: OtelContext, links?: OtelLink[]): OtelSpan | undefined {
    if (!this.tracer) return undefined;
    const spanKind =
      kind === 'client' ? this.api.SpanKind.CLIENT : kind === 'server' ? this.api.SpanKind.SERVER : this.api.SpanKind.INTERNAL;
    const options = links && links.length > 0 ? { kind: spanKind, attributes, links } : { kind: spanKind, attributes };
    return this.tracer.startSpan(name, options, parent ?? this.api.context.active());
  }

  /** `parent` (default: the active context) with `span` as its current span. */
  contextOf(span: OtelSpan | undefined, parent?: OtelContext): OtelContext {
    const base = parent ?? this.api.context.active();
    return span ? this.api.trace.setSpan(base, span) : base;
  }

  /** Runs `fn` with `context` active, so spans started inside (MCP, nested tools) are its children. */
  within<T>(context: OtelContext, fn: () => T): T {
    return this.api.context.with(context, fn);
  }

  /** Ends a span as an error of type `type` (a stable code, never a message that could hold a secret). */
  fail(span: OtelSpan | undefined, type: string): void {
    if (!span) return;
    span.setAttribute(ATTR.errorType, type);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR });
    span.end();
  }

  /** A link to the span a stored `traceparent` names, when it names one. */
  linkTo(traceparent: string | undefined): OtelLink[] | undefined {
    const context = parseTraceparent(traceparent);
    return context ? [{ context }] : undefined;
  }

  /** The span's `traceparent`, to store with what outlives this process. */
  traceparentOf(span: OtelSpan | undefined): string | undefined {
    if (!span) return undefined;
    const context = span.spanContext();
    return this.api.isSpanContextValid(context) ? formatTraceparent(context) : undefined;
  }

  /** Content as a span may show it: every configured secret redacted, cut to {@link MAX_CAPTURED_CHARS}. */
  redact(text: string): string {
    let shown = text;
    for (const secret of this.secrets) if (shown.includes(secret)) shown = shown.split(secret).join(REDACTED);
    return shown.length > MAX_CAPTURED_CHARS ? `${shown.slice(0, MAX_CAPTURED_CHARS)}…` : shown;
  }
}

/**
 * One component's telemetry: resolves its providers (the ones given, else the global ones)
 * each time a run, call or request begins, and says `undefined` when nothing would record,
 * so the hot path then costs two property reads. `@opentelemetry/api` is required on the first
 * {@link active} call, never at import.
 */
export class Telemetry {
  private readonly options: TelemetryOptions;
  private readonly secrets: readonly string[];
  /** `null`: looked for and absent. */
  private api: OtelApi | null | undefined;
  private noopTracerDelegate: unknown;
  private noopMeterProto: unknown;
  private tracerSource: unknown;
  private tracer: OtelTracer | undefined;
  private meterSource: unknown;
  private instruments: Instruments | undefined;
  private current: Tracing | undefined;

  constructor(option: TelemetryOption | undefined, owner: string) {
    this.options = checkOptions(option, owner);
    this.secrets = (this.options.secrets ?? []).filter((secret) => secret.length > 0);
  }

  /** Off for good: `enabled: false` (or `telemetry: false`). */
  get disabled(): boolean {
    return this.options.enabled === false;
  }

  /** The agent's name on its spans: `agentName` when set, else `name` (the runner's own), else `agent`. */
  agentNameOr(name: string | undefined): string {
    return this.options.agentName ?? name ?? 'agent';
  }

  /** What records now, or `undefined` when nothing does (off, no api, no provider registered). */
  active(): Tracing | undefined {
    if (this.options.enabled === false) return undefined;
    if (this.api === undefined) this.api = loadOtelApi() ?? null;
    const api = this.api;
    if (api === null) return undefined;
    const tracer = this.resolveTracer(api);
    const instruments = this.resolveMeter(api);
    if (!tracer && !instruments) return undefined;
    if (this.current === undefined || this.current.tracer !== tracer || this.current.metrics !== instruments) {
      this.current = new Tracing(api, tracer, instruments, this.options, this.secrets);
    }
    return this.current;
  }

  private resolveTracer(api: OtelApi): OtelTracer | undefined {
    let source: unknown = this.options.tracerProvider;
    if (source === undefined) {
      const global = api.trace.getTracerProvider();
      // The global provider is a proxy; its delegate is the api's no-op until an app registers one.
      const delegate = typeof global.getDelegate === 'function' ? global.getDelegate() : global;
      this.noopTracerDelegate ??= new api.ProxyTracerProvider().getDelegate();
      if (delegate === this.noopTracerDelegate) return undefined;
      source = delegate;
    }
    if (source !== this.tracerSource) {
      this.tracerSource = source;
      this.tracer = (source as TracerProviderLike).getTracer(INSTRUMENTATION_SCOPE, SEMCONV_VERSION) as OtelTracer;
    }
    return this.tracer;
  }

  private resolveMeter(api: OtelApi): Instruments | undefined {
    const source: MeterProviderLike = this.options.meterProvider ?? api.metrics.getMeterProvider();
    if (source === this.meterSource) return this.instruments;
    this.meterSource = source;
    const meter = source.getMeter(INSTRUMENTATION_SCOPE, SEMCONV_VERSION) as OtelMeter;
    this.noopMeterProto ??= Object.getPrototypeOf(api.createNoopMeter());
    this.instruments = Object.getPrototypeOf(meter) === this.noopMeterProto ? undefined : instrumentsOf(meter);
    return this.instruments;
  }
}

function instrumentsOf(meter: OtelMeter): Instruments {
  return {
    duration: meter.createHistogram(METRIC.operationDuration, {
      description: 'GenAI operation duration',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    tokens: meter.createHistogram(METRIC.tokenUsage, {
      description: 'Measures number of input and output tokens used',
      unit: '{token}',
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    }),
    toolCalls: meter.createCounter(METRIC.toolCalls, { description: 'Tool calls, by tool and outcome', unit: '{call}' }),
    suspensions: meter.createCounter(METRIC.suspensions, {
      description: 'Suspensions recorded (pending) and settled, by status',
      unit: '{suspension}',
    }),
  };
}

function checkOptions(option: TelemetryOption | undefined, owner: string): TelemetryOptions {
  if (option === undefined) return {};
  if (option === false) return { enabled: false };
  if (typeof option !== 'object' || option === null) throw new InvalidArgumentError(`${owner}: telemetry must be an object or false`);
  if (option.tracerProvider !== undefined && typeof option.tracerProvider.getTracer !== 'function')
    throw new InvalidArgumentError(`${owner}: telemetry.tracerProvider must be an OpenTelemetry TracerProvider (getTracer)`);
  if (option.meterProvider !== undefined && typeof option.meterProvider.getMeter !== 'function')
    throw new InvalidArgumentError(`${owner}: telemetry.meterProvider must be an OpenTelemetry MeterProvider (getMeter)`);
  if (option.secrets !== undefined && (!Array.isArray(option.secrets) || !option.secrets.every((s) => typeof s === 'string')))
    throw new InvalidArgumentError(`${owner}: telemetry.secrets must be an array of strings`);
  if (option.agentName !== undefined && (typeof option.agentName !== 'string' || option.agentName === ''))
    throw new InvalidArgumentError(`${owner}: telemetry.agentName must be a non-empty string`);
  return option;
}

/** A stable, secret-free type for an error: its library code, else its class name. */
export function errorTypeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code !== '') return code;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  }
  return '_OTHER';
}
