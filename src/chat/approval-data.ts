import type { RunEvent } from '../runner/core/types';
import type { Principal } from '../suspension/audit';
import type { ResumeCoordinator } from '../suspension/coordinator';
import { approvalsOf, quorumOf } from '../suspension/quorum';
import { isSettled } from '../suspension/status';
import type { SuspendedCall } from '../suspension/store';
import type { ChatApprovalData, UIStreamPart } from './parts';
import { approvalPart, requestParts } from './ui-stream';

/**
 * What `principal` may do with the approval `call` asks, as the coordinator's answer policy
 * decides it now (its dry run, `decide`: policy, separation of duties, a quorum's signers, the
 * sub-agent path), for the page to show as buttons. A settled call allows nothing.
 */
export async function approvalDataOf(
  coordinator: ResumeCoordinator,
  principal: Principal,
  call: SuspendedCall,
  toolCallId: string,
): Promise<ChatApprovalData> {
  const id = call.request.id;
  const data: ChatApprovalData = { id, toolCallId, actions: [] };
  const quorum = quorumOf(call.request);
  const signatures = call.signatures ?? [];
  const byYou = signatures.some((signature) => signature.by.id === principal.id);
  if (quorum) data.quorum = { of: quorum.of, signed: approvalsOf(signatures).length, byYou };
  if (isSettled(call.status)) data.settled = call.status;
  if (call.status !== 'pending') return data;
  const approve = (await coordinator.decide(principal, call, { id, ok: true })) === 'allow';
  const decline = (await coordinator.decide(principal, call, { id, ok: false, reason: 'declined' })) === 'allow';
  // A second signature by the same principal counts once: the button would do nothing.
  if (approve && !(quorum && byYou)) data.actions.push(quorum ? 'sign' : 'approve');
  // The coordinator refuses an edited quorum approval, so it is not offered.
  if (approve && !quorum && call.request.data?.editable === true) data.actions.push('edit');
  if (decline) data.actions.push('decline');
  return data;
}

/** The approval data of the stored request `requestId`, or undefined when no approval is stored under it. */
export async function storedApprovalData(
  coordinator: ResumeCoordinator,
  principal: Principal,
  requestId: string,
  toolCallId: string,
): Promise<ChatApprovalData | undefined> {
  const call = await coordinator.get(requestId);
  if (!call || call.request.kind !== 'approval') return undefined;
  return approvalDataOf(coordinator, principal, call, toolCallId);
}

/**
 * The run's events, each approval request's data learnt into `into` before its event is handed
 * on, so the (synchronous) part writer finds it. A store that cannot be read leaves the part
 * out: the page shows no buttons, and every answer is judged when it is given anyway.
 */
export async function* withApprovalData(
  events: AsyncIterable<RunEvent>,
  coordinator: ResumeCoordinator,
  principal: Principal,
  into: Map<string, ChatApprovalData>,
): AsyncGenerator<RunEvent> {
  for await (const event of events) {
    if (event.type === 'pending' && event.request.kind === 'approval' && !(event.path !== undefined && event.path.length > 0)) {
      try {
        const data = await storedApprovalData(coordinator, principal, event.request.id, event.callId);
        if (data) into.set(data.id, data);
      } catch {
        // See above: the part is advisory.
      }
    }
    yield event;
  }
}

/**
 * The parts that ask an approval again, as it still waits: its `tool-approval-request` (the
 * page's tool part goes back to `approval-requested`) and its data part, saying what the
 * principal may do now and, given `refusal`, why their answer was refused.
 */
export async function askedAgain(
  coordinator: ResumeCoordinator,
  principal: Principal,
  toolCallId: string,
  call: SuspendedCall,
  refusal?: string,
): Promise<UIStreamPart[]> {
  const data = await approvalDataOf(coordinator, principal, call, toolCallId);
  if (refusal !== undefined) data.refusal = { code: 'TOOLNEXUS_ANSWER_REFUSED', reason: refusal };
  return [...requestParts(toolCallId, call.request), approvalPart(data)];
}
