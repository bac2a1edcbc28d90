import { failure, pendingOf } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import type { Toolkit } from '../toolkit/toolkit';

/** How an in-process host answers a suspension: ask a human, wait, return the answer. */
export type WaitFor = (request: PendingRequest) => Answer | Promise<Answer>;

/** Why `answer` is not Answer-shaped, or `undefined` when it is. */
export function answerProblem(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return 'expected an object { id, ok, data?, reason? }';
  const { id, ok, data, reason } = answer as Record<string, unknown>;
  if (typeof id !== 'string' || id === '') return 'id must be a non-empty string';
  if (typeof ok !== 'boolean') return 'ok must be a boolean';
  if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data))) return 'data must be an object when present';
  if (reason !== undefined && reason !== 'declined' && reason !== 'cancelled' && reason !== 'expired') {
    return 'reason must be "declined", "cancelled" or "expired" when present';
  }
  return undefined;
}

/** True once the request's `expiresAt` has passed. */
export function isExpired(request: PendingRequest, now: Date): boolean {
  return request.expiresAt !== undefined && Date.parse(request.expiresAt) <= now.getTime();
}

/** The result of a declined, cancelled or expired suspension. */
export function declined(request: PendingRequest): ToolResult {
  return failure(`declined/expired: ${request.prompt}`);
}

/** Replays once with the answer; a second suspension is reported, never looped on. */
export async function replayOnce<TState extends object>(
  toolkit: Toolkit,
  name: string,
  args: unknown,
  ctx: ToolContext<TState> | undefined,
  answer: Answer,
): Promise<ToolResult> {
  const result = await toolkit.execute(name, args, { ...ctx, answer });
  const again = pendingOf(result);
  return again ? failure(`unresolved: ${again.prompt}`) : result;
}

/**
 * CONTRACT §5 with `waitFor`: ask, check the answer, and replay the same call once with it.
 * Shared by the coordinator and the agent runner, which announces the request first.
 */
export async function answerInline<TState extends object>(
  toolkit: Toolkit,
  waitFor: WaitFor,
  name: string,
  args: unknown,
  ctx: ToolContext<TState> | undefined,
  request: PendingRequest,
): Promise<ToolResult> {
  let answer: Answer;
  try {
    answer = await waitFor(request);
  } catch (error) {
    return failure(`no answer to ${request.id}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const problem = answerProblem(answer);
  if (problem) return failure(`invalid answer to ${request.id}: ${problem}`);
  if (answer.id !== request.id) return failure(`answer id ${answer.id} does not match pending request ${request.id}`);
  if (!answer.ok || isExpired(request, new Date())) return declined(request);
  return replayOnce(toolkit, name, args, ctx, answer);
}
