import type { MeterProviderLike, TracerProviderLike } from './otel';

export type { MeterProviderLike, TracerProviderLike } from './otel';

/**
 * OpenTelemetry for a Toolkit, ResumeCoordinator, AgentRunner, `serveMcp` or
 * `McpToolSource` (docs/observability.md). With `@opentelemetry/api` installed and a global
 * tracer or meter provider registered, spans and metrics appear with no option at all;
 * this picks other providers, turns them off, or opts in to recording content.
 * `false` is `{ enabled: false }`.
 */
export interface TelemetryOptions {
  /** `false`: no spans and no metrics from this component. Default true. */
  enabled?: boolean;
  /** Where spans go instead of the global tracer provider. */
  tracerProvider?: TracerProviderLike;
  /** Where metrics go instead of the global meter provider. */
  meterProvider?: MeterProviderLike;
  /**
   * Records content: `gen_ai.input.messages`, `gen_ai.output.messages`, tool arguments and
   * results, with `@Sensitive` fields and every `secrets` string redacted. Default false:
   * no prompt, answer, argument or result text reaches a span.
   */
  captureContent?: boolean;
  /** Strings that never reach a span, redacted wherever content capture would show them (API keys, tokens). */
  secrets?: readonly string[];
  /** Records who answered a suspension (the principal's id) on its resolution span. Default false. */
  recordAnsweredBy?: boolean;
  /** The agent's name in `invoke_agent {name}` and `gen_ai.agent.name` (an AgentRunner's). Default: the runner's `name`, else `agent`. */
  agentName?: string;
}

/** What the components' `telemetry` option takes. */
export type TelemetryOption = TelemetryOptions | false;
