import { AlreadyResolvedError, StoreError } from '../errors';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import type { Clock } from '../timing/clock';
import { sameJson } from './binding';
import { keptAnswer } from './consumed';
import type { RanCall } from '../toolkit/prepared';
import type { Toolkit } from '../toolkit/toolkit';
import { pending, pendingOf } from '../results/helpers';
import { chainStop, requestProblem } from './answers';
import type { Binding } from './binding';
import type { Settlement, SuspendedCall } from './store';
import { recoveryRequest } from './takeover';

/** What the settlement of a replay needs of the resolution's settings. */
export interface SettlementParts {
  toolkit: Toolkit;
  binding: Binding;
  clock: Clock;
  maxChain: number;
}

/* What a resolution gives back and keeps of an outcome (a settled call's, a replay's settlement, the takeover rule's recovery link), and its local hint of a lapsed lease (the claim, replay and settle stages in ./stages). */

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

/**
 * The taken-over link settled with the rule's `recovery` request as its chain's next link:
 * approving it replays the tool (the chain still holds the approval), a refusal tells the
 * model it did not run again.
 */
export function recoveryOf(parts: SettlementParts, call: SuspendedCall, answer: Answer): Settlement {
  const outcome = pending(recoveryRequest(call));
  return { status: 'resolved', outcome, next: nextLink(parts, call, answer, pendingOf(outcome) as PendingRequest, undefined) };
}

/** A replay's outcome as the store keeps it: a final result, or the next link of the chain. */
export function settlementOf(parts: SettlementParts, call: SuspendedCall, answer: Answer, { result, traceparent }: RanCall): Settlement {
  const edits = call.answer?.args;
  const request = pendingOf(result);
  // The model is told which arguments ran when they are not the ones it gave (sensitive values redacted).
  const outcome =
    edits === undefined || request
      ? result
      : {
          ...result,
          output: `The approver edited the arguments; the call ran with ${JSON.stringify(parts.toolkit.redact(call.tool, edits))}.\n${result.output}`,
        };
  if (!request) return { status: 'resolved', outcome };
  const chain = call.chain ?? [];
  // Before anything walks it: a request with a cycle is a failure, not a stack overflow.
  const bad = requestProblem(request);
  if (bad) return { status: 'resolved', outcome: { output: bad, isError: true } };
  const stop = chainStop(call.request, request, chain.length + 1, parts.maxChain);
  if (stop) return { status: 'resolved', outcome: stop };
  return { status: 'resolved', outcome, next: nextLink(parts, call, answer, request, traceparent) };
}

/** The chain's next link after `call`, answered by `answer`: a new pending call asking `request`. */
function nextLink(
  parts: SettlementParts,
  call: SuspendedCall,
  answer: Answer,
  request: PendingRequest,
  traceparent: string | undefined,
): SuspendedCall {
  const chain = call.chain ?? [];
  const next: SuspendedCall = {
    request,
    tool: call.tool,
    args: call.answer?.args ?? call.args,
    status: 'pending',
    createdAt: new Date(parts.clock.now()).toISOString(),
    chain: [...chain, { request: call.request, answer: keptAnswer(call.request, answer) }],
  };
  if (call.callId !== undefined) next.callId = call.callId;
  if (call.runId !== undefined) next.runId = call.runId;
  if (call.requestedBy !== undefined) next.requestedBy = { ...call.requestedBy };
  if (call.session !== undefined) next.session = call.session;
  // The next link's resolution links to the replay that asked it.
  if (traceparent !== undefined) next.traceparent = traceparent;
  return parts.binding.seal(next);
}
