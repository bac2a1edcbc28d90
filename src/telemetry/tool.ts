import { pendingOf } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { ATTR, OPERATION, SPAN } from './conventions';
import type { Tracing } from './telemetry';

/** How a span shows a call's arguments: `@Sensitive` fields redacted by the toolkit that knows the DTO. */
export type ShowArguments = (name: string, args: unknown) => unknown;

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
  show: ShowArguments,
  run: () => Promise<ToolResult>,
): Promise<{ result: ToolResult; traceparent: string | undefined }> {
  const attributes: Record<string, string> = {
    [ATTR.operationName]: OPERATION.executeTool,
    [ATTR.toolName]: name,
    [ATTR.toolType]: 'function',
  };
  if (typeof callId === 'string') attributes[ATTR.toolCallId] = callId;
  const span = tracing.start(SPAN.executeTool(name), 'internal', attributes);
  if (span && tracing.captureContent) span.setAttribute(ATTR.toolArguments, tracing.redact(JSON.stringify(show(name, parsed(args))) ?? ''));
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
  if (tracing.captureContent) span.setAttribute(ATTR.toolResult, tracing.redact(result.output));
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
