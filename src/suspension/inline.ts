import { keptAnswer } from './consumed';
import { messageOf } from '../errors/message';
import { failure, pendingOf } from '../results/helpers';
import { systemClock, type Clock } from '../timing/clock';
import type { Answer, AnsweredRequest, PendingRequest, ToolResult } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import { checkAnswer, chainStop, isExpired, requestProblem, refusalOf, refused, type FormatRefusal, type WaitFor } from './answers';

/** What the in-process posture needs besides the first request. */
export interface InlineChain {
  /** Runs the call again with a replay context. */
  replay(ctx: ToolContext): Promise<ToolResult>;
  waitFor: WaitFor;
  /** Told of every request before `waitFor` is asked (a stream announces it). */
  onPending?: (request: PendingRequest) => void;
  maxChain: number;
  /** Judges the request's expiry when the answer arrives. Default: the system clock. */
  clock?: Clock;
  formatRefusal: FormatRefusal;
}

/**
 * The in-process posture: ask `waitFor`, replay with the answer, and follow the chain
 * while each replay asks something new; nothing is stored.
 */
export async function answerInline(first: PendingRequest, ctx: ToolContext | undefined, chain: InlineChain): Promise<ToolResult> {
  const answered: AnsweredRequest[] = [];
  let request = first;
  for (;;) {
    chain.onPending?.(request);
    let given: Answer;
    try {
      given = await chain.waitFor(request);
    } catch (error) {
      return failure(`no answer to ${request.id}: ${messageOf(error)}`);
    }
    // The replay gets the checked copy (plain JSON, a null data read as absent), never the host's object.
    const checked = checkAnswer(given);
    if (!checked.ok) return failure(`invalid answer to ${request.id}: ${checked.problem}`);
    const answer = checked.answer;
    if (answer.id !== request.id) return failure(`answer id ${answer.id} does not match pending request ${request.id}`);
    const now = new Date((chain.clock ?? systemClock).now());
    if (!answer.ok || isExpired(request, now)) return refused(refusalOf(request, answer, now), chain.formatRefusal);
    const result = await chain.replay({ ...ctx, answer, replay: { request, chain: answered.slice() } });
    const next = pendingOf(result);
    if (!next) return result;
    const bad = requestProblem(next);
    if (bad) return failure(bad);
    const stop = chainStop(request, next, answered.length + 1, chain.maxChain);
    if (stop) return stop;
    // The chain's link keeps what every store keeps: no consumed field (consumed.ts).
    answered.push({ request, answer: keptAnswer(request, answer) });
    request = next;
  }
}
