import type { PendingRequestInit } from '../results/helpers';
import type { Answer } from '../results/wire';
import type { Receipt } from '../toolkit/context';
import type { Toolkit } from '../toolkit/toolkit';
import { receiptLine } from './receipts';
import type { Audit } from './audit';
import type { SuspendedCall } from './store';

/**
 * The takeover rule (docs/suspension.md, "After a crash: the takeover rule"), the one place
 * every door, the runner's durable steps and the recovery loop take it from. A call whose run
 * began and recorded no result (a lapsed claim; a durable step marked started) may have taken
 * effect: it runs again only when its tool is declared idempotent, with the same
 * `ctx.idempotencyKey`; any other call becomes a `recovery` request for a person, answered
 * through the answer policy like every answer.
 */
export function replaysOnTakeover(toolkit: Toolkit, tool: string): boolean {
  return toolkit.get(tool)?.idempotent === true;
}

/** Where the call that may have run sits: its tool, and its call and run when it belongs to one. */
export interface RecoveryPlace {
  tool: string;
  callId?: string;
  runId?: string;
  /** The run's turn, for a durable step. */
  turn?: number;
  /** What downstream systems answered the attempts that may have taken effect (`ctx.receipt`). */
  receipts?: readonly Receipt[];
}

/**
 * The `recovery` request the rule raises, worded once: approving it runs the call again, a
 * refusal tells the model it did not run again. Its data names the call and carries the
 * receipts its attempts recorded, which its prompt reads out ("it ran: stripe says ch_… succeeded").
 */
export function recoveryRequest(place: RecoveryPlace): PendingRequestInit {
  const data: Record<string, unknown> = { tool: place.tool };
  if (place.runId !== undefined) data.runId = place.runId;
  if (place.callId !== undefined) data.callId = place.callId;
  if (place.turn !== undefined) data.turn = place.turn;
  const receipts = place.receipts ?? [];
  if (receipts.length > 0) data.receipts = receipts.map((receipt) => ({ ...receipt }));
  const stopped = `The process running ${place.tool} (call ${place.callId ?? '-'} of run ${place.runId ?? '-'}) stopped before its result was recorded`;
  return {
    kind: 'recovery',
    prompt:
      receipts.length > 0
        ? `${stopped}, but it ran: ${receipts.map(receiptLine).join('; ')}. Check what happened, then approve to run it again ` +
          '(its receipts and idempotency key go with it) or decline to leave it as it is.'
        : `${stopped}: it may have taken effect. Check what happened, then approve to run it again or decline to leave it as it is.`,
    data,
  };
}

/**
 * The answer a takeover continues: the one the dead holder's claim recorded (the decision that
 * may have taken effect), whichever door or loop reaches the call after it. `undefined` when
 * the call holds no live claim's answer (it is not `resolving`).
 */
export function claimedAnswer(call: SuspendedCall): Answer | undefined {
  return call.status === 'resolving' ? call.answer : undefined;
}

/** The audit of the claimed answer, kept by the takeover's claim: whose decision it continues. */
export function claimedAudit(call: SuspendedCall): Audit {
  const audit: Audit = {};
  if (call.answeredBy !== undefined) audit.by = { ...call.answeredBy };
  if (call.comment !== undefined) audit.comment = call.comment;
  return audit;
}

/**
 * The call a takeover gives back when its judgement refuses the recorded answer
 * (`refusedTakeover`, stages/claim.ts): `pending` again, without that answer, its audit or a lease.
 * Its fencing number stays the takeover's, so whoever answers next claims it as a takeover and
 * the rule above applies: the dead holder may have judged the answer allowed and run the tool.
 */
export function pendingAgain(claimed: SuspendedCall): SuspendedCall {
  const call: SuspendedCall = { ...claimed, status: 'pending' };
  delete call.answer;
  delete call.answeredAt;
  delete call.answeredBy;
  delete call.comment;
  delete call.leaseUntil;
  return call;
}
