import type { PendingRequest } from '../results/wire';
import { ATTR, SPAN } from './conventions';
import type { OtelContext, OtelSpan } from './otel';
import type { Tracing } from './telemetry';
import { toolMetricName } from './tool';

/** What the resolution span needs of a stored call. */
export interface ResolvedCall {
  request: PendingRequest;
  tool: string;
  callId?: string;
  runId?: string;
  /** The chat session the call's run belongs to: the span's conversation when present. */
  session?: string;
  traceparent?: string;
  answeredBy?: { id: string };
}

/**
 * Starts the span of an answer given to a suspension (the claim won): `resolve_suspension
 * {tool}`, linked to the `execute_tool` span that suspended (its stored `traceparent`), in
 * whatever trace the resolver is in. The replay runs inside it.
 */
export function startResolution(tracing: Tracing, call: ResolvedCall): { span: OtelSpan | undefined; context: OtelContext } {
  const attributes: Record<string, string> = {
    [ATTR.toolName]: call.tool,
    [ATTR.requestKind]: call.request.kind,
    [ATTR.requestId]: call.request.id,
  };
  if (call.callId !== undefined) attributes[ATTR.toolCallId] = call.callId;
  // The conversation is the chat session when the run has one, as on the run's own spans.
  const conversation = call.session ?? call.runId;
  if (conversation !== undefined) attributes[ATTR.conversationId] = conversation;
  if (tracing.options.recordAnsweredBy === true && call.answeredBy !== undefined) attributes[ATTR.answeredBy] = call.answeredBy.id;
  const span = tracing.start(SPAN.resolve(call.tool), 'internal', attributes, undefined, tracing.linkTo(call.traceparent));
  return { span, context: tracing.contextOf(span) };
}

/** Counts a suspension's change of status (`pending` when recorded, the settled status after). */
export function countSuspension(tracing: Tracing | undefined, status: string, tool: string, registered: boolean, kind: string): void {
  tracing?.metrics?.suspensions.add(1, {
    [ATTR.suspensionStatus]: status,
    [ATTR.toolName]: toolMetricName(tool, registered),
    // Kinds are the tools' own words: a short list per app, cut so a hostile one stays small.
    [ATTR.requestKind]: kind.slice(0, 32),
  });
}
