import { recordHumanApproval, type ApprovalLabel } from '../telemetry/evaluation';
import type { Tracing } from '../telemetry/telemetry';
import type { Toolkit } from '../toolkit/toolkit';
import { Redactor } from './redact';
import { answeredAtOnce } from './standing';
import type { SettledStatus, SuspendedCall } from './store';

/**
 * What a settled approval's answer said: `approved`, `edited` (approved with other arguments)
 * or `declined`; undefined for any other request or settlement (expired, cancelled, answered).
 */
export function approvalLabelOf(call: SuspendedCall, status: SettledStatus): ApprovalLabel | undefined {
  if (call.request.kind !== 'approval') return undefined;
  if (status === 'declined') return 'declined';
  if (status !== 'resolved') return undefined;
  return call.answer?.args !== undefined ? 'edited' : 'approved';
}

/**
 * Tells telemetry of a person's answer to an approval (a `gen_ai.evaluation.result` event,
 * docs/observability.md): not of an automatic answer acting on its rule nor of a standing
 * grant, which no person gave to this call.
 * The explanation is the comment, redacted by the one path (`redactCall`'s) so no sensitive value leaves.
 */
export function evaluateApproval(tracing: Tracing, toolkit: Toolkit, call: SuspendedCall, status: SettledStatus): void {
  const label = approvalLabelOf(call, status);
  if (label === undefined || answeredAtOnce(call)) return;
  const comment = call.comment === undefined ? undefined : new Redactor(toolkit).forCall(call).redact(call.comment);
  recordHumanApproval(
    tracing,
    {
      tool: call.tool,
      requestId: call.request.id,
      ...(call.callId === undefined ? {} : { callId: call.callId }),
      ...(call.traceparent === undefined ? {} : { traceparent: call.traceparent }),
    },
    label,
    comment,
  );
}
