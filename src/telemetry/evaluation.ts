import { ATTR, EVALUATION, SPAN } from './conventions';
import type { Tracing } from './telemetry';
import { parseTraceparent } from './traceparent';

/** What a person's answer to an approval said, as the `human_approval` evaluation's label. */
export type ApprovalLabel = 'approved' | 'declined' | 'edited';

/** The call an evaluation is of: its tool, ids, and the `execute_tool` span that asked (its stored `traceparent`). */
export interface EvaluatedCall {
  tool: string;
  requestId: string;
  callId?: string;
  traceparent?: string;
}

/**
 * Records a person's answer to an approval as a `gen_ai.evaluation.result` event (the GenAI
 * conventions' evaluation event, name `human_approval`), parented to the tool's `execute_tool`
 * span: that span ended when the call suspended, maybe in another process, so the event is
 * carried by a zero-length `evaluation human_approval` span whose parent is the one the stored
 * `traceparent` names (the active context when none was stored). `explanation` is the
 * answerer's comment, already redacted by the caller; every configured secret is redacted from
 * it again here. docs/observability.md, "Approvals as evaluations".
 */
export function recordHumanApproval(tracing: Tracing, call: EvaluatedCall, label: ApprovalLabel, explanation: string | undefined): void {
  if (!tracing.tracer) return;
  const remote = parseTraceparent(call.traceparent);
  const parent = remote ? tracing.api.trace.setSpanContext(tracing.api.context.active(), remote) : undefined;
  const attributes: Record<string, string> = { [ATTR.toolName]: call.tool, [ATTR.requestId]: call.requestId };
  if (call.callId !== undefined) attributes[ATTR.toolCallId] = call.callId;
  const span = tracing.start(SPAN.evaluation(EVALUATION.humanApproval), 'internal', attributes, parent);
  if (!span) return;
  const event: Record<string, string> = { [ATTR.evaluationName]: EVALUATION.humanApproval, [ATTR.evaluationLabel]: label };
  if (explanation !== undefined && explanation !== '') event[ATTR.evaluationExplanation] = tracing.redact(explanation);
  span.addEvent(EVALUATION.event, event);
  span.end();
}
