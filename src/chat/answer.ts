import { AnswerRefusedError, ClaimHeldError } from '../errors';
import { pendingOf } from '../results/helpers';
import { answerAs } from '../runner/answer-as';
import type { AgentRunner } from '../runner/agent-runner';
import type { Principal } from '../suspension/audit';
import type { SuspendedCall } from '../suspension/store';
import { approvalDataOf, askedAgain, storedApprovalData } from './approval-data';
import type { CheckedApproval } from './approvals';
import { ChatRequestError } from './errors';
import type { UIStreamPart } from './parts';
import { approvalPart, fileParts, outputPart, requestParts } from './ui-stream';

/** What answering the approvals of one message did: the parts the response opens with. */
export interface AnsweredApprovals {
  before: UIStreamPart[];
  /** At least one answer was applied: the run may go on. */
  applied: boolean;
  /** Why the response explains instead of applying: the policy refused an answer, or every call was settled already. */
  refused?: 'answer_refused' | 'not_pending';
}

/**
 * Applies the checked approvals of one message, each through `answerAs` as `principal`, once:
 * the store's claim decides between two requests answering the same call. A policy refusal
 * applies nothing and asks every approval again, the refused ones saying why (docs/chat.md,
 * "A refused approval"). A call settled already (a retry after a dropped connection, another
 * tab, the inbox, a recovery) is not answered again: the page is shown how it ended. Every
 * approval part the page holds is sent again (same id) as it now stands, so a settled one offers
 * no buttons.
 */
export async function answerApprovals(
  runner: AgentRunner,
  checked: readonly CheckedApproval[],
  principal: Principal,
  context: object | undefined,
): Promise<AnsweredApprovals> {
  const coordinator = runner.coordinator;
  const before: UIStreamPart[] = [];
  if (checked.some((approval) => approval.refused !== undefined)) {
    for (const { part, call, refused } of checked)
      before.push(...(await askedAgain(coordinator, principal, part.toolCallId, call, refused)));
    return { before, applied: false, refused: 'answer_refused' };
  }
  let applied = false;
  let refused = false;
  for (const { part, call, answer, settled } of checked) {
    if (settled) {
      before.push(
        call.status === 'declined' ? { type: 'tool-output-denied', toolCallId: part.toolCallId } : outputPart(part.toolCallId, settled),
        await settledPart(runner, principal, call, part.toolCallId),
      );
      continue;
    }
    const approval = part.approval as { id: string; approved: boolean; reason?: string };
    let answered;
    try {
      answered = await answerAs(coordinator, answer, {
        by: principal,
        ...(approval.reason ? { comment: approval.reason.slice(0, 500) } : {}),
        ...(context ? { context } : {}),
        // A call whose server died mid-replay is taken over under the tool's idempotent / recovery rule.
        ifClaimed: 'refuse',
        takeover: 'recover',
      });
    } catch (error) {
      if (error instanceof ClaimHeldError)
        throw new ChatRequestError(409, 'not_pending', `request ${call.request.id} is being answered or was answered by another request`);
      if (!(error instanceof AnswerRefusedError)) throw error;
      // Refused at the claim (the policy changed since the check): explained, and the others still apply.
      const now = (await coordinator.get(call.request.id)) ?? call;
      before.push(...(await askedAgain(coordinator, principal, part.toolCallId, now, error.reason)));
      refused = true;
      continue;
    }
    applied = true;
    const outcome = answered.outcome;
    // A quorum's approval before the last one needed is a signature: the same request still waits.
    const next = answered.call.status === 'pending' ? answered.call.request : pendingOf(outcome);
    if (answered.call.status !== 'pending') before.push(await settledPart(runner, principal, answered.call, part.toolCallId));
    if (!approval.approved) before.push({ type: 'tool-output-denied', toolCallId: part.toolCallId });
    else if (next) {
      // A chain's next link (a recovery request included) is a new request, shown in this stream.
      before.push(...requestParts(part.toolCallId, next));
      // A quorum short of signatures is asked again, with its progress.
      const data = next.kind === 'approval' ? await storedApprovalData(coordinator, principal, next.id, part.toolCallId) : undefined;
      if (data) before.push(approvalPart(data));
    } else if (outcome) before.push(outputPart(part.toolCallId, outcome), ...fileParts(outcome));
  }
  if (refused) return { before, applied, refused: 'answer_refused' };
  return applied ? { before, applied } : { before, applied, refused: 'not_pending' };
}

/** The approval's data part as it stands once settled: no actions, and how it ended. */
async function settledPart(runner: AgentRunner, principal: Principal, call: SuspendedCall, toolCallId: string): Promise<UIStreamPart> {
  return approvalPart(await approvalDataOf(runner.coordinator, principal, call, toolCallId));
}
