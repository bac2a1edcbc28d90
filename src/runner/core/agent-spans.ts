import type { ChatMessage, ModelResponse, Usage } from '../../models/types';
import type { RunStop } from './types';
import { ATTR, OPERATION, SPAN } from '../../telemetry/conventions';
import type { OtelAttributes, OtelContext, OtelSpan } from '../../telemetry/otel';
import { errorTypeOf, type Tracing } from '../../telemetry/telemetry';
import type { ShowCalls } from '../../telemetry/tool';

/** The trace of one run (or one resume of it) while this process drives it. */
export interface RunTrace {
  tracing: Tracing;
  span: OtelSpan | undefined;
  /** The context with the run's span: model calls and tool calls are its children. */
  context: OtelContext;
  provider: string;
  model: string | undefined;
  show: ShowCalls;
}

/** What identifies the run to its span. */
export interface RunIdentity {
  agent: string;
  /** `gen_ai.conversation.id`: the session the run belongs to, else the run's id. */
  conversationId: string;
  provider: string;
  model: string | undefined;
  show: ShowCalls;
  /** The `traceparent` of the run's span that halted, when this continues it: linked. */
  halted?: string;
}

/** Starts `invoke_agent {agent}` for a run or a resume. */
export function startRun(tracing: Tracing, run: RunIdentity): RunTrace {
  const attributes: OtelAttributes = {
    [ATTR.operationName]: OPERATION.invokeAgent,
    [ATTR.agentName]: run.agent,
    [ATTR.conversationId]: run.conversationId,
    [ATTR.providerName]: run.provider,
    [ATTR.requestModel]: run.model,
  };
  const span = tracing.start(SPAN.invokeAgent(run.agent), 'internal', attributes, undefined, tracing.linkTo(run.halted));
  return { tracing, span, context: tracing.contextOf(span), provider: run.provider, model: run.model, show: run.show };
}

/** Ends the run's span: how the run ended and its token totals, or the error that stopped it. */
export function endRun(trace: RunTrace, outcome: { status: string; usage: Usage; stop?: RunStop } | { error: unknown }): void {
  const { span } = trace;
  if (!span) return;
  if ('error' in outcome) {
    trace.tracing.fail(span, errorTypeOf(outcome.error));
    return;
  }
  // A halted run is not an error: its status stays unset, and `pending` says why it stopped.
  span.setAttributes({ [ATTR.runStatus]: outcome.status, ...usageAttributes(outcome.usage), ...stopAttributes(outcome.stop) });
  span.end();
}

/** Why a run stopped on purpose, as span attributes: the budget's limit, or the guardrail that blocked it. */
function stopAttributes(stop: RunStop | undefined): Record<string, string | number> {
  if (stop?.status === 'budget_exceeded')
    return {
      [ATTR.budgetLimit]: stop.limit,
      [ATTR.budgetValue]: stop.budget,
      [ATTR.budgetSpent]: stop.spent,
      [ATTR.budgetScope]: stop.scope ?? 'run',
    };
  if (stop?.status === 'blocked') return { [ATTR.guardrailName]: stop.guardrail, [ATTR.guardrailStage]: stop.stage };
  return {};
}

/** Runs one model call inside `chat {model}` (CLIENT), recording the two gen_ai client histograms. */
export async function traceChat(
  trace: RunTrace,
  system: string | undefined,
  messages: readonly ChatMessage[],
  call: () => Promise<ModelResponse>,
): Promise<ModelResponse> {
  const { tracing } = trace;
  const model = trace.model ?? trace.provider;
  const base: OtelAttributes = {
    [ATTR.operationName]: OPERATION.chat,
    [ATTR.providerName]: trace.provider,
    [ATTR.requestModel]: trace.model,
  };
  const span = tracing.start(SPAN.chat(model), 'client', base, trace.context);
  if (span && tracing.captureContent) {
    if (system !== undefined)
      span.setAttribute(ATTR.systemInstructions, tracing.redact(JSON.stringify([{ type: 'text', content: system }])));
    span.setAttribute(ATTR.inputMessages, tracing.redact(JSON.stringify(shownMessages(messages, trace.show))));
  }
  const started = performance.now();
  let response: ModelResponse;
  try {
    response = await tracing.within(tracing.contextOf(span, trace.context), call);
  } catch (error) {
    const type = errorTypeOf(error);
    const status = (error as { status?: unknown } | null)?.status;
    if (span && typeof status === 'number') span.setAttribute(ATTR.httpStatus, status);
    tracing.metrics?.duration.record((performance.now() - started) / 1000, { ...base, [ATTR.errorType]: type });
    tracing.fail(span, type);
    throw error;
  }
  const metrics = tracing.metrics;
  if (metrics) {
    metrics.duration.record((performance.now() - started) / 1000, base);
    metrics.tokens.record(response.usage.inputTokens, { ...base, [ATTR.tokenType]: 'input' });
    metrics.tokens.record(response.usage.outputTokens, { ...base, [ATTR.tokenType]: 'output' });
  }
  if (span) {
    span.setAttributes(usageAttributes(response.usage));
    if (response.stopReason !== undefined) span.setAttribute(ATTR.finishReasons, [response.stopReason]);
    if (response.model !== undefined) span.setAttribute(ATTR.responseModel, response.model);
    if (tracing.captureContent) {
      // The transcript's calls are shown too, so that an answer quoting an earlier call's sensitive value is redacted.
      const shown = shownMessages([...messages, { role: 'assistant', content: response.text, toolCalls: response.toolCalls }], trace.show);
      const output = shown[shown.length - 1];
      span.setAttribute(ATTR.outputMessages, tracing.redact(JSON.stringify([{ ...output, finish_reason: response.stopReason ?? 'stop' }])));
    }
    span.end();
  }
  return response;
}

function usageAttributes(usage: Usage): OtelAttributes {
  return {
    [ATTR.inputTokens]: usage.inputTokens,
    [ATTR.outputTokens]: usage.outputTokens,
    [ATTR.cacheReadInputTokens]: usage.cachedInputTokens,
    [ATTR.cacheCreationInputTokens]: usage.cacheWriteInputTokens,
  };
}

/**
 * Transcript entries in the GenAI conventions' message shape: tool arguments redacted by the
 * toolkit, and every value so redacted redacted wherever else the transcript holds it (a tool
 * result or the model's text quoting it).
 */
function shownMessages(messages: readonly ChatMessage[], show: ShowCalls): Record<string, unknown>[] {
  const calls = messages.flatMap((message) => (message.role === 'assistant' ? (message.toolCalls ?? []) : []));
  const shown = show(calls.map((call) => ({ tool: call.name, args: parsedArguments(call.arguments) })));
  const argsOf = new Map(calls.map((call, index) => [call, shown.args[index]]));
  const out = messages.map((message): Record<string, unknown> => {
    if (message.role === 'tool') {
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.callId, response: message.content }] };
    }
    const parts: Record<string, unknown>[] = message.content === '' ? [] : [{ type: 'text', content: message.content }];
    if (message.role === 'assistant') {
      for (const call of message.toolCalls ?? [])
        parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: argsOf.get(call) });
    }
    return { role: message.role, parts };
  });
  return shown.redact(out);
}

/** A call's argument text as the object it encodes, so its fields can be redacted; unparsable text is not shown. */
function parsedArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return '[unparsable arguments]';
  }
}
