import { AlreadyResolvedError, StoreError } from '../errors';
import { messageOf } from '../errors/message';
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
  if (
    answer.ok !== ranTool ||
    (ranTool && (!sameJson(keptAnswer(call.request, answer).data, call.answer?.data) || !sameJson(answer.args, call.answer?.args)))
  ) {
    throw new AlreadyResolvedError(call.request.id, call.status, call.runId);
  }
  return outcome;
}

/**
 * The outcome as every store can keep it. Metadata JSON cannot carry (a BigInt, a cycle)
 * is dropped rather than fail the settle: a failed settle would leave the call claimed and
 * replay it again after its lease.
 */
export function storable(outcome: ToolResult): ToolResult {
  // The common result, `{ output, isError }` of a string and a boolean, is JSON as it is.
  if (outcome.metadata === undefined && typeof outcome.output === 'string' && typeof outcome.isError === 'boolean')
    return { output: outcome.output, isError: outcome.isError };
  try {
    return JSON.parse(JSON.stringify(outcome)) as ToolResult;
  } catch (error) {
    return {
      output: outcome.output,
      isError: outcome.isError,
      metadata: { metadataDropped: `the result metadata cannot be stored as JSON: ${messageOf(error)}` },
    };
  }
}

export function leaseLooksLapsed(call: SuspendedCall, clock: Clock): boolean {
  return call.status === 'resolving' && (call.leaseUntil === undefined || Date.parse(call.leaseUntil) < clock.now());
}
