import { toolMessage } from './media';
import { AnswerRefusedError, RunConflictError } from '../../errors';
import { failure, pendingOf } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import type { Audit, Principal } from '../../suspension/audit';
import { isSystemAudit, systemAudit } from '../../suspension/authority';
import type { ChatMessage } from '../../models/types';
import { callStatus } from './call-status';
import { cancelChildren } from './child-run';
import { subAgentOriginOf } from '../../suspension/origin';
import { Checkpoints, resultOf } from './checkpoints';
import { DEFAULT_LEASE_MS, type ResumeCoordinator } from '../../suspension/coordinator';
import { systemClock } from '../../timing/clock';
import type { RunStore } from './store';
import type { AgentParts, LiveRun } from './live-run';
import { isEnded, type HaltedCall, type RunState } from './state';
import type { RunResult, RunStop, ToolCallRecord } from './types';

/** What cancelling a stored run needs: the run's checkpoints and the coordinator of its suspensions. */
export type CancelTarget = Pick<AgentParts, 'checkpoints' | 'coordinator'>;

/**
 * Cancels a halted run (or one another process drives) with the stores alone, as the CLI's
 * `runs cancel` and the inbox do: see {@link cancelStored}.
 */
export function cancelRun(coordinator: ResumeCoordinator, runs: RunStore, runId: string, options: CancelOptions = {}): Promise<RunResult> {
  return cancelStored({ coordinator, checkpoints: new Checkpoints(runs, DEFAULT_LEASE_MS, systemClock) }, runId, options);
}

/** How many times a cancel reads the checkpoint again when a writer beat it. */
const MAX_ATTEMPTS = 20;

export { cancelStopOf } from './cancel-stop';

/** Who cancels, and why. */
export interface CancelOptions {
  /** Why: kept in the run's stop and on each cancelled suspension. */
  reason?: string;
  /** Who cancels: recorded on each suspension cancelled, and judged by the answer policy as any refusal. */
  audit?: Audit;
}

/**
 * Cancels a run no process here drives, from its checkpoint: the open suspensions of a halted
 * run are settled `cancelled` first (through the coordinator, so an answer racing the cancel
 * either ran before it or is refused), then the checkpoint becomes `cancelled` by
 * compare-and-set. A run another process drives loses its next write, and stops. A run already
 * over is returned as it ended.
 *
 * @throws {@link RunNotFoundError} no checkpoint for `runId`.
 */
export async function cancelStored(parts: CancelTarget, runId: string, options: CancelOptions): Promise<RunResult> {
  const stop: RunStop = options.reason === undefined ? { status: 'cancelled' } : { status: 'cancelled', reason: options.reason };
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const { state, version } = await parts.checkpoints.load(runId);
    if (isEnded(state.phase)) return (await resultOf(runId, state, (plain) => Promise.resolve(plain))) as RunResult;
    // Judged before anything changes: a refused cancel leaves the run and its requests as they are.
    await judgeCancel(
      parts,
      runId,
      { principal: state.principal, open: state.phase === 'halted' ? (state.halted?.calls ?? []) : [] },
      options,
    );
    const outcomes = await settleOpen(parts, state, options);
    const cancelled = cancelledState(state, outcomes, stop);
    if (await parts.checkpoints.write(runId, version + 1, cancelled))
      return (await resultOf(runId, cancelled, (plain) => Promise.resolve(plain))) as RunResult;
  }
  throw new RunConflictError(runId, 'its checkpoint kept changing while it was being cancelled');
}

/** The halted turn's open suspensions, cancelled: each call's result now (settled ones keep theirs). */
async function settleOpen(parts: CancelTarget, state: RunState, options: CancelOptions): Promise<ToolResult[]> {
  const calls = state.phase === 'halted' ? (state.halted?.calls ?? []) : [];
  const reason = options.reason ?? 'the run was cancelled';
  return Promise.all(
    calls.map(async (entry) => {
      if (!entry.pendingId || !pendingOf(entry.result)) return entry.result;
      // An answer being applied now (its replay holds the claim) is not waited for: the
      // coordinator's cancel would wait as long as the tool runs. Its resume then finds the run over.
      const now = await parts.coordinator.get(entry.pendingId).catch(() => undefined);
      if (now && now.status !== 'pending')
        return now.outcome ?? failure(`cancelled while its answer was being applied (it may have run): ${reason}`);
      try {
        const cancelled = await parts.coordinator.cancel(entry.pendingId, reason, options.audit ?? systemAudit());
        await cancelChild(parts, entry.result, options);
        return cancelled;
      } catch (error) {
        // The policy changed its mind since the cancel was judged: nothing was changed for this one.
        if (error instanceof AnswerRefusedError) throw error;
        // Answered meanwhile (its tool ran): its stored outcome is the call's result.
        const stored = await parts.coordinator.get(entry.pendingId).catch(() => undefined);
        return stored?.outcome ?? failure(`cancelled: ${reason}`);
      }
    }),
  );
}

/** What judging a cancel needs of the run: on whose behalf it was made, and the requests it has open. */
export interface CancelledRun {
  principal?: Principal | undefined;
  open: readonly HaltedCall[];
}

/**
 * Judges a cancel before anything changes (docs/agents.md, "Cancel"): a cancel that names a
 * principal (`audit.by`) must be one the answer policy allows for each open request of the
 * run, as a cancellation of that request; a run with none open (one being driven) may be
 * cancelled only by the principal it was made for, since there is nothing the policy could
 * judge. No policy, or the host's own cancel (no `audit`), is not judged.
 * @throws {@link AnswerRefusedError} the cancel is refused (nothing changed; observers told of a refused request).
 */
export async function judgeCancel(
  parts: CancelTarget,
  runId: string,
  run: CancelledRun,
  options: CancelOptions,
  /** What is judged: a cancel, or a steer (judged the same way: docs/agents.md, "Steering"). */
  verb: 'cancel' | 'steer' = 'cancel',
): Promise<void> {
  const audit = options.audit;
  if (audit === undefined || isSystemAudit(audit) || !parts.coordinator.hasPolicy) return;
  const by = audit.by;
  if (by === undefined) throw new AnswerRefusedError(runId, `an answer policy is set, and the ${verb} names no principal`);
  const reason = options.reason ?? 'the run was cancelled';
  const answerOf = (id: string) => ({ id, ok: false, reason: 'cancelled' as const, data: { reason } });
  let judged = 0;
  for (const entry of run.open) {
    if (!entry.pendingId || !pendingOf(entry.result)) continue;
    const call = await parts.coordinator.get(entry.pendingId);
    if (!call || call.status !== 'pending') continue;
    judged++;
    const decision = await parts.coordinator.decide(by, call, answerOf(entry.pendingId));
    // Refused through the coordinator's own path, which judges it again and tells the observers; it changes nothing.
    if (decision !== 'allow') await parts.coordinator.cancel(entry.pendingId, reason, audit);
  }
  if (judged === 0 && run.principal?.id !== by.id)
    throw new AnswerRefusedError(
      runId,
      `${by.id} may not ${verb} this run: it has no open request the answer policy could judge, and only the principal it was made for may ${verb === 'cancel' ? 'stop' : 'steer'} it`,
      by.id,
    );
}

/**
 * A request a sub-agent surfaced: its child run is cancelled too (its own open request, down
 * the tree), so nobody is left asked a question of a run that is over. A child kept where this
 * runner's store cannot read it has its requests cancelled through the coordinator alone.
 */
async function cancelChild(parts: CancelTarget, result: ToolResult, options: CancelOptions): Promise<void> {
  const request = pendingOf(result);
  const origin = subAgentOriginOf(request);
  if (!origin) return;
  const reason = options.reason ?? 'the calling run was cancelled';
  await cancelStored(parts, origin.runId, { ...options, reason }).catch(() => cancelChildren(parts.coordinator, request, 'cancelled'));
}

/**
 * The checkpoint of a cancelled run. A halted turn's calls get their results, so the
 * transcript stays one a provider (and a session's next run) accepts.
 */
function cancelledState(state: RunState, outcomes: readonly ToolResult[], stop: RunStop): RunState {
  const { driver: _driver, halted, step: _step, error: _error, ...rest } = state;
  const messages: ChatMessage[] = [...state.messages];
  const toolCalls: ToolCallRecord[] = [...state.toolCalls];
  (halted?.calls ?? []).forEach((entry, i) => {
    const result = outcomes[i] ?? entry.result;
    messages.push(toolMessage(entry.call, result));
    toolCalls.push({
      ...entry.call,
      result,
      status: callStatus(result, entry.pendingId ? 'cancelled' : entry.refusal),
      turn: halted?.turn ?? state.turns,
    });
  });
  return { ...rest, phase: 'cancelled', stop, messages, toolCalls };
}

/**
 * The result of a run this process drove that another process cancelled through its
 * checkpoint: a write of this driver conflicted (or its lease renewal did, aborting its
 * calls), and the checkpoint says `cancelled`. Undefined for any other failure, which stays
 * the caller's error.
 */
export async function cancelledElsewhere(parts: AgentParts, live: LiveRun, error: unknown): Promise<RunResult | undefined> {
  if (live.version === 0) return undefined;
  if (!(error instanceof RunConflictError) && !(live.latch.reason instanceof RunConflictError)) return undefined;
  const { state } = await parts.checkpoints.load(live.runId).catch(() => ({ state: undefined }));
  if (state?.phase !== 'cancelled') return undefined;
  const result = await resultOf(live.runId, state, () => Promise.resolve(undefined));
  if (result) live.emit?.({ type: 'done', result });
  return result;
}
