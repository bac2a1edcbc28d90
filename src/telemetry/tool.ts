import { pendingOf } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { ATTR, OPERATION, SPAN } from './conventions';
import type { Tracing } from './telemetry';

/**
 * How a span shows calls (the toolkit's `showCalls`, which knows the DTOs): their arguments
 * with `@Sensitive` fields redacted, and a function redacting those values wherever else they
 * appear, since a tool may copy an argument into its result and a transcript holds both.
 */
export type ShowCalls = (calls: readonly { tool: string; args: unknown }[]) => { args: unknown[]; redact: <T>(value: T) => T };

/** The metric value of a tool name: registered names only, so a model inventing names cannot grow the series. */
export function toolMetricName(name: string, registered: boolean): string {
  return registered ? name : '_OTHER';
}

/**
 * Runs one call inside an `execute_tool {tool}` span. A suspension is not an error: the span
 * ends with its status unset and the request's kind and id; its `traceparent` is returned,
 * for the store to keep with the suspension.
 */
export async function traceTool(
  tracing: Tracing,
  name: string,
  registered: boolean,
  callId: unknown,
  args: unknown,
  show: ShowCalls,
  run: () => Promise<ToolResult>,
): Promise<{ result: ToolResult; traceparent: string | undefined }> {
  const attributes: Record<string, string> = {
    [ATTR.operationName]: OPERATION.executeTool,
    [ATTR.toolName]: name,
    [ATTR.toolType]: 'function',
  };
  if (typeof callId === 'string') attributes[ATTR.toolCallId] = callId;
  const span = tracing.start(SPAN.executeTool(name), 'internal', attributes);
  const shown = span && tracing.captureContent ? show([{ tool: name, args: parsed(args) }]) : undefined;
  // Another field may quote a sensitive one: the arguments are redacted by value as well as by field.
  if (span && shown) span.setAttribute(ATTR.toolArguments, tracing.redact(JSON.stringify(shown.redact(shown.args[0])) ?? ''));
  let result: ToolResult;
  try {
    result = await tracing.within(tracing.contextOf(span), run);
  } catch (error) {
    // The Toolkit never rejects; a hook that does is still ended, and passed on.
    tracing.fail(span, 'exception');
    throw error;
  }
  const request = pendingOf(result);
  const outcome = request ? 'pending' : result.isError ? 'error' : 'ok';
  tracing.metrics?.toolCalls.add(1, { [ATTR.toolName]: toolMetricName(name, registered), [ATTR.toolOutcome]: outcome });
  if (!span) return { result, traceparent: undefined };
  span.setAttribute(ATTR.toolOutcome, outcome);
  if (shown) span.setAttribute(ATTR.toolResult, tracing.redact(shown.redact(result.output)));
  if (request) {
    span.setAttributes({ [ATTR.requestKind]: request.kind, [ATTR.requestId]: request.id });
    const traceparent = tracing.traceparentOf(span);
    span.end();
    return { result, traceparent };
  }
  if (result.isError) tracing.fail(span, registered ? 'tool_error' : 'unknown_tool');
  else span.end();
  return { result, traceparent: undefined };
}

/** Raw model text becomes the object it encodes, so the toolkit can redact its fields; anything else is shown redacted whole. */
function parsed(args: unknown): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return '[unparsable arguments]';
  }
}
