import { AlreadyResolvedError, RunNotFoundError, UnknownSuspensionError } from '../errors';
import type { Answer, ToolResult } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import type { Audit, Principal } from './audit';
import type { ResumeCoordinator } from './coordinator';
import type { IfClaimed } from './stages/types';
import type { SuspendedCall } from './store';

/** Who answers through `answerAs`, and what the replay (and the run it continues) is given. */
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
  /**
   * The stored call the answer is for, as the front door just read it from this coordinator
   * (to show it, or to refuse early what can no longer be answered): the path of an answer then
   * reads it no more before its claim (docs/design.md). Left out, `answerAs` reads it once.
   * @throws {@link InvalidArgumentError} (from `answerAs`) it is not the call the answer names.
   */
  call?: SuspendedCall;
}

/**
 * What continues the run a call belongs to, as the suspension layer sees it (the
 * `AgentRunner`, from below): its coordinator, and a resume of one answer as a principal.
 */
export interface RunContinuation<TResult> {
  readonly coordinator: ResumeCoordinator;
  resume(answer: Answer, options: { audit: Audit; context?: object; signal?: AbortSignal }): Promise<TResult>;
}

/** Where the run a call belongs to stands after `answerAs` (`TResult`: the run's result). */
export interface AnsweredRunOf<TResult> {
  runId: string;
  /**
   * True when this process continued the run (through the runner it was given): `result` is
   * where the run is now (`done`, or `halted` on its next question). False when only the
   * call was settled (no runner here): the run stays halted until a process with its runner
   * continues it, with `runner.recover(runId)` or by answering its next question through it.
   */
  continued: boolean;
  result?: TResult;
}

/** What `answerAs` did (`TResult`: the run's result, when a run was continued). */
export interface AnsweredOf<TResult> {
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
  run?: AnsweredRunOf<TResult>;
}

/**
 * Answers a suspension as a principal (`answerAs` of `toolnexus-ts/agents`, which names the
 * runner's types; docs/design.md, "The path of an answer", step 0). The stored call is read
 * once before the claim, or not at all when the door passes it (`options.call`), and carried
 * by the answer down the path: to `host.resume` given a run's continuation, else to
 * `coordinator.resolve`.
 */
export async function answerAsPrincipal<TResult>(
  host: RunContinuation<TResult> | ResumeCoordinator,
  answer: Answer,
  options: AnswerAsOptions,
): Promise<AnsweredOf<TResult>> {
  // Told apart by shape, so a front end with a coordinator alone (MCP) never loads the runner.
  const runner = typeof (host as Partial<RunContinuation<TResult>>).resume === 'function' ? (host as RunContinuation<TResult>) : undefined;
  const coordinator = runner?.coordinator ?? (host as ResumeCoordinator);
  const audit: Audit = { by: options.by, ...(options.comment === undefined ? {} : { comment: options.comment }) };
  const id = typeof answer?.id === 'string' ? answer.id : undefined;
  const before = options.call ?? (id === undefined ? undefined : await coordinator.get(id));
  // A malformed answer is the coordinator's to refuse, in its words.
  if (!before && id !== undefined) throw new UnknownSuspensionError(id);
  // The one read before the claim: the answer carries the call down the path (the runner, `resolve`).
  const given = before ? await coordinator.read(answer, before) : answer;
  let run: AnsweredRunOf<TResult> | undefined;
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
  const answered: AnsweredOf<TResult> = { won: true, call: after };
  if (after.outcome !== undefined) answered.outcome = after.outcome;
  if (run) answered.run = run;
  return answered;
}

/** The run continued through `runner`; `undefined` when there is no runner, or no checkpoint of the run here (nothing was applied). */
async function continued<TResult>(
  runner: RunContinuation<TResult> | undefined,
  runId: string,
  answer: Answer,
  audit: Audit,
  options: AnswerAsOptions,
): Promise<AnsweredRunOf<TResult> | undefined> {
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

function lost<TResult>(call: SuspendedCall): AnsweredOf<TResult> {
  const answered: AnsweredOf<TResult> = { won: false, call };
  if (call.answeredBy) answered.winner = { ...call.answeredBy };
  if (call.outcome !== undefined) answered.outcome = call.outcome;
  return answered;
}
