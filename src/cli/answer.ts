import { approvalsOf, declinesOf, quorumOf } from '../suspension/quorum';
import {
  AlreadyResolvedError,
  InvalidAnswerError,
  InvalidArgumentError,
  SuspensionMismatchError,
  UnknownSuspensionError,
  UnregisteredToolError,
  AnswerRefusedError,
} from '../errors';
import { messageOf } from '../errors/message';
import { pendingOf } from '../results/helpers';
import type { Answer } from '../results/wire';
import { answerAs, type Answered, type AnsweredRun } from '../runner/answer-as';
import { MAX_COMMENT_LENGTH } from '../suspension/audit';
import { redactCall } from '../suspension/redact';
import { isSettled } from '../suspension/status';
import type { SuspendedCall } from '../suspension/store';
import type { RunStore } from '../runner/core/store';
import type { CommandInput } from './command';
import { EXIT, type ExitCode } from './exit-codes';
import { callDetail } from './format';
import type { CliTarget } from './target';

/** What the operator does to a suspension. */
export type Verdict = 'approve' | 'decline' | 'cancel';

const BINDING_HINT = ' (if your coordinator has a bindingKey, set TOOLNEXUS_BINDING_KEY to the same key)';

const DONE: Record<Verdict, string> = { approve: 'approved', decline: 'declined', cancel: 'cancelled' };

/** `--data` for an approval: a JSON object, the answer's `data` (what an `input` request asked for). */
export function parseData(text: string | boolean | undefined, option = '--data'): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined;
  let data: unknown;
  try {
    data = JSON.parse(text) as unknown;
  } catch {
    throw new InvalidArgumentError(`${option} must be a JSON object`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new InvalidArgumentError(`${option} must be a JSON object`);
  return data as Record<string, unknown>;
}

/**
 * Answers one suspension for the operator through {@link answerAs}, as the inbox and MCP do,
 * and says what happened, with an exit code that tells a script apart: not found, already
 * settled (by someone else or before), refused. With a `--tools` module exporting
 * `createRunner(store)` the run that halted on the call continues here; without one the
 * message says the run is left for a process with its runner.
 */
export async function settleFromCli(
  input: CommandInput,
  verdict: Verdict,
  data?: Record<string, unknown>,
  args?: Record<string, unknown>,
): Promise<ExitCode> {
  const { io, values } = input;
  const id = input.positionals[0] as string;
  const reason = typeof values.reason === 'string' ? values.reason : undefined;
  const session = await input.open();
  const { coordinator, principal } = session;
  const say = (code: ExitCode, message: string, call?: SuspendedCall, run?: AnsweredRun): ExitCode => {
    if (values.json)
      io.out(
        JSON.stringify({
          ok: code === EXIT.ok,
          code,
          message,
          ...(call ? { call: redactCall(coordinator.toolkit, call) } : {}),
          ...(run ? { run: { runId: run.runId, continued: run.continued, ...(run.result ? { status: run.result.status } : {}) } } : {}),
        }),
      );
    else (code === EXIT.ok ? io.out : io.err)(message);
    return code;
  };
  const before = await coordinator.get(id);
  if (!before) return say(EXIT.notFound, `no suspension ${id} in ${session.storeShown}`);
  if (isSettled(before.status)) return say(EXIT.alreadySettled, `${id} is already ${before.status}${byWhom(before)}`, before);
  if (verdict === 'approve') {
    const refusal = approvalProblem(session, before);
    if (refusal) return say(EXIT.refused, refusal, before);
  }
  const answer: Answer =
    verdict === 'approve'
      ? { id, ok: true, ...(data ? { data } : {}), ...(args ? { args } : {}) }
      : { id, ok: false, reason: verdict === 'cancel' ? 'cancelled' : 'declined', ...(reason === undefined ? {} : { data: { reason } }) };
  let answered: Answered;
  try {
    answered = await answerAs(session.runner ?? coordinator, answer, {
      by: principal,
      // The call as just read: the answer's path reads it no more before its claim.
      call: before,
      // A cancellation's reason is cut to a comment's length, as `ResumeCoordinator.cancel` cuts it.
      ...(reason === undefined ? {} : { comment: verdict === 'cancel' ? reason.slice(0, MAX_COMMENT_LENGTH) : reason }),
    });
  } catch (error) {
    if (error instanceof UnknownSuspensionError) return say(EXIT.notFound, `no suspension ${id} in ${session.storeShown}`);
    if (error instanceof AnswerRefusedError) return say(EXIT.notAllowed, `not allowed: ${error.reason}`, before);
    if (error instanceof AlreadyResolvedError) {
      const now = await coordinator.get(id);
      return say(EXIT.alreadySettled, `${id} is already ${error.status}${now ? byWhom(now) : ''}`, now);
    }
    if (
      error instanceof UnregisteredToolError ||
      error instanceof SuspensionMismatchError ||
      error instanceof InvalidAnswerError ||
      error instanceof InvalidArgumentError
    )
      return say(EXIT.refused, `refused: ${messageOf(error)}${error instanceof SuspensionMismatchError ? BINDING_HINT : ''}`, before);
    throw error;
  }
  const { call: after, outcome } = answered;
  // A quorum approval before the last one needed: recorded as a signature; the call still waits.
  const mine = after.status === 'pending' ? after.signatures?.find((s) => s.by.id === principal.id) : undefined;
  const quorum = quorumOf(after.request);
  if (verdict === 'approve' && mine && quorum) {
    const signed = approvalsOf(after.signatures).length;
    return say(EXIT.ok, `signed ${id}: ${signed} of ${quorum.of} approvals; it waits for the rest`, after);
  }
  // A quorum decline before the last one needed (`quorum.declines`): recorded; the call still waits.
  if (verdict === 'decline' && mine?.declined === true && quorum) {
    const declined = declinesOf(after.signatures).length;
    return say(EXIT.ok, `declined ${id}: ${declined} of ${quorum.declines ?? 1} declines; it waits for the rest`, after);
  }
  // An answer that lost the race gets the winner's outcome; the audit says whose it was.
  if (!answered.won || (verdict === 'approve' && after.status === 'declined'))
    return say(EXIT.alreadySettled, `${id} was answered first${byWhom(after)}: it is ${after.status}`, after);
  if (verdict === 'approve' && after.status !== 'resolved')
    return say(EXIT.refused, `${id} could not be approved: it is ${after.status} (${outcome?.output ?? ''})`, after);
  const next = outcome === undefined ? undefined : pendingOf(outcome);
  const told = outcome === undefined ? '' : `: ${outcome.isError ? 'error: ' : ''}${outcome.output}`;
  const summary = `${DONE[verdict]} ${id}${next ? `; the call now asks: ${next.prompt} (${next.id})` : told}`;
  const run = answered.run && (answered.run.continued || (await hasCheckpoint(session, answered.run.runId))) ? answered.run : undefined;
  return say(EXIT.ok, run ? `${summary}\n${runLine(run)}` : summary, after, run);
}

/** What became of the run: continued here, or left for a process with its runner (said plainly, with how). */
function runLine(run: AnsweredRun): string {
  const result = run.result;
  if (run.continued && result?.status === 'halted')
    return `run ${run.runId} continued here and waits again: ${result.pendings.map((p) => `${p.prompt} (${p.id})`).join('; ')}`;
  if (run.continued && result) return `run ${run.runId} continued here: it is ${result.status}${result.text ? `: ${result.text}` : ''}`;
  return (
    `run ${run.runId} is not continued by this CLI (its --tools module exports no createRunner): the call is settled, and the run ` +
    `stays halted until a process with its AgentRunner continues it: runner.recover(${JSON.stringify(run.runId)}), ` +
    'or this command again with --tools exporting createRunner(store) (see docs/operating.md, "CLI")'
  );
}

/** True when the store keeps a checkpoint of `runId` (a call recorded with a runId by hand has none). */
async function hasCheckpoint(session: CliTarget, runId: string): Promise<boolean> {
  const runs = session.store as Partial<Pick<RunStore, 'loadRun'>>;
  return typeof runs.loadRun === 'function' && (await runs.loadRun(runId)) !== undefined;
}

/** Why approving `call` from here cannot work: approving replays it, which needs its tool. */
function approvalProblem(session: CliTarget, call: SuspendedCall): string | undefined {
  if (!session.hasTools)
    return `refused: approving ${call.request.id} runs ${call.tool} again, so the CLI needs the tools: pass --tools MODULE (see docs/operating.md, "CLI"). Declining and cancelling need no tools.`;
  if (!session.coordinator.toolkit.has(call.tool))
    return `refused: the --tools module does not register ${call.tool}, which ${call.request.id} would run`;
  return undefined;
}

function byWhom(call: SuspendedCall): string {
  if (!call.answeredBy) return '';
  return ` by ${call.answeredBy.id}${call.answeredAt ? ` at ${call.answeredAt}` : ''}`;
}

/** `pending show`'s body, shared with the JSON output. */
export function shown(session: CliTarget, call: SuspendedCall): { text: string; json: SuspendedCall } {
  const json = redactCall(session.coordinator.toolkit, call);
  return { text: callDetail(json), json };
}
