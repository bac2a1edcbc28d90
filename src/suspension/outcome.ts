import { AlreadyResolvedError, StoreError } from '../errors';
import type { Answer, ToolResult } from '../results/wire';
import type { Clock } from '../timing/clock';
import { sameJson } from './binding';
import { keptAnswer } from './consumed';
import type { SuspendedCall } from './store';

/* What a resolution gives back and keeps of an outcome, and its local hint of a lapsed lease (./resolution.ts). */

/** The outcome a settled call gives `answer`, or an AlreadyResolvedError when the answer would have produced another. */
export function storedOutcome(call: SuspendedCall, answer: Answer): ToolResult {
  const outcome = call.outcome;
  if (!outcome) throw new StoreError(`suspension ${call.request.id} is ${call.status} but has no stored outcome`);
  if (call.status === 'expired') return outcome; // any answer meets the same expiry
  const ranTool = call.status === 'resolved';
  // Compared as kept: a consumed field is not stored, so it cannot tell two answers apart.
  if (answer.ok !== ranTool || (ranTool && !sameDecision(keptAnswer(call.request, answer), call.answer))) {
    throw new AlreadyResolvedError(call.request.id, call.status, call.runId);
  }
  return outcome;
}

/** Whether two answers, both as the store keeps them, decide the same: same `ok`, and for an approval the same data and edits. */
export function sameDecision(given: Answer, stored: Answer | undefined): boolean {
  if (given.ok !== (stored?.ok ?? false)) return false;
  return !given.ok || (sameJson(given.data, stored?.data) && sameJson(given.args, stored?.args));
}

/** The local clock's hint that a claim's lease lapsed; the store's claim decides. */
export function leaseLooksLapsed(call: SuspendedCall, clock: Clock): boolean {
  return call.status === 'resolving' && (call.leaseUntil === undefined || Date.parse(call.leaseUntil) < clock.now());
}
