import { AlreadyResolvedError, RunNotFoundError, UnknownSuspensionError } from '../errors';
import type { Answer, ToolResult } from '../results/wire';
import type { Principal, Audit } from '../suspension/audit';
import type { IfClaimed, ResumeCoordinator } from '../suspension/coordinator';
import type { SuspendedCall } from '../suspension/store';
import type { ToolContext } from '../toolkit/context';
import type { AgentRunner } from './agent-runner';
import type { RunResult } from './types';

/** Who answers through {@link answerAs}, and what the replay (and the run it continues) is given. */
export interface AnswerAsOptions {
  /** Who answers: recorded as the call's `answeredBy`; the tool sees it as `ctx.answer.answeredBy` (and `ctx.approval.answeredBy`). */
  by: Principal;
  /** Their own words, at most 500 characters; a decline's comment is also told to the model. */
  comment?: string;
  /** The host's context for the replay and for the run it continues (never stored). */
  context?: object;
  /** Cancels the wait: before the claim nothing changes. */
  signal?: AbortSignal;
  /**
   * With a coordinator alone: `refuse` throws {@link ClaimHeldError} when another answer holds
   * the call's claim or settled it first, instead of waiting for its outcome, so exactly one of
   * two racing answers goes on (the chat's approvals). Default `wait`.
   */
  ifClaimed?: IfClaimed;
}

/** Where the run a call belongs to stands after {@link answerAs}. */
export interface AnsweredRun {
  runId: string;
  /**
   * True when this process continued the run (through the runner it was given): `result` is
   * where the run is now (`done`, or `halted` on its next question). False when only the
   * call was settled (no runner here): the run stays halted until a process with its runner
   * continues it, with `runner.recover(runId)` or by answering its next question through it.
   */
  continued: boolean;
  result?: RunResult;
}

/** What {@link answerAs} did. */
export interface Answered {
  /**
   * True when this principal's answer is the one the call was settled with (a retry of the
   * same answer by the same principal included); false when someone else answered first.
   */
  won: boolean;
  /** The call as stored afterwards (the chain's first link answered here, not its next one). */
  call: SuspendedCall;
  /** The call's outcome: the tool's result, the refusal told to the model, or the next link's pending result. */
  outcome?: ToolResult;
  /** Who answered first, when it was not this principal (`undefined` when they recorded no principal). */
  winner?: Principal;
  /** Present for a call of an agent run. */
  run?: AnsweredRun;
}

/**
 * Answers a suspension as a principal: the one operation every front end that answers
 * (the inbox, the CLI, MCP, a plain API call) goes through (docs/design.md, "the path of an
 * answer"). It settles the call exactly once with the audit data (who, and why) and, given an
 * {@link AgentRunner}, continues the run that halted on it, once, in this process, chains
 * included and whichever process answered the chain's earlier links. Given only a
 * {@link ResumeCoordinator}, it settles the call and says the run is left for a process with its runner.
 *
 * Whoever answered first wins, found the same way for every front end: the call's recorded
 * `answeredBy`. A later answer from someone else is `won: false` with the `winner`, never an error.
 *
 * @example
 * ```ts
 * const answered = await answerAs(runner, { id, ok: true }, { by: { id: 'alice' }, comment: 'PO 2291' })
 * if (!answered.won) console.log(`already answered by ${answered.winner?.id}`)
 * ```
 *
 * @throws {@link UnknownSuspensionError} no store holds the id.
 * @throws {@link AlreadyResolvedError} this principal's earlier answer to the call was another one.
 * @throws what {@link ResumeCoordinator.resolve} and {@link AgentRunner.resume} throw otherwise (an invalid answer, a changed call, a tool not registered here).
 */
export async function answerAs(host: AgentRunner | ResumeCoordinator, answer: Answer, options: AnswerAsOptions): Promise<Answered> {
  // Told apart by shape, so a front end with a coordinator alone (MCP) never loads the runner.
  const runner = typeof (host as Partial<AgentRunner>).resume === 'function' ? (host as AgentRunner) : undefined;
  const coordinator = runner?.coordinator ?? (host as ResumeCoordinator);
  const audit: Audit = { by: options.by, ...(options.comment === undefined ? {} : { comment: options.comment }) };
  const id = typeof answer?.id === 'string' ? answer.id : undefined;
  const before = id === undefined ? undefined : await coordinator.get(id);
  // A malformed answer is the coordinator's to refuse, in its words.
  if (!before && id !== undefined) throw new UnknownSuspensionError(id);
  // The one read before the claim: the answer carries the call down the path (the runner, `resolve`).
  const given = before ? await coordinator.read(answer, before) : answer;
  let run: AnsweredRun | undefined;
  try {
    run = before?.runId === undefined ? undefined : await continued(runner, before.runId, given, audit, options);
    if (!run) {
      const ctx = { ...options.context, ...(options.signal ? { signal: options.signal } : {}) } as ToolContext;
      await coordinator.resolve(given, ctx, audit, undefined, options.ifClaimed ? { ifClaimed: options.ifClaimed } : {});
      if (before?.runId !== undefined) run = { runId: before.runId, continued: false };
    }
  } catch (error) {
    if (error instanceof AlreadyResolvedError && id !== undefined) {
      const now = await coordinator.get(id);
      if (now && now.answeredBy?.id !== options.by.id) return lost(now);
    }
    throw error;
  }
  const after = (await coordinator.get(answer.id)) as SuspendedCall;
  // A quorum approval before the last one needed: recorded as a signature, the call still waits.
  const signed = after.status === 'pending' && after.signatures?.some((s) => s.by.id === options.by.id) === true;
  if (!signed && after.answeredBy?.id !== options.by.id) return lost(after);
  const answered: Answered = { won: true, call: after };
  if (after.outcome !== undefined) answered.outcome = after.outcome;
  if (run) answered.run = run;
  return answered;
}

/** The run continued through `runner`; `undefined` when there is no runner, or no checkpoint of the run here (nothing was applied). */
async function continued(
  runner: AgentRunner | undefined,
  runId: string,
  answer: Answer,
  audit: Audit,
  options: AnswerAsOptions,
): Promise<AnsweredRun | undefined> {
  if (!runner) return undefined;
  try {
    const result = await runner.resume(answer, {
      audit,
      ...(options.context ? { context: options.context } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { runId, continued: true, result };
  } catch (error) {
    // The call names a run this store has no checkpoint of (a call recorded with a runId by hand): just resolve it.
    if (error instanceof RunNotFoundError) return undefined;
    throw error;
  }
}

function lost(call: SuspendedCall): Answered {
  const answered: Answered = { won: false, call };
  if (call.answeredBy) answered.winner = { ...call.answeredBy };
  if (call.outcome !== undefined) answered.outcome = call.outcome;
  return answered;
}
