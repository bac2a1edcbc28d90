import { showsToolResult } from '../core/guardrails/stages';
import { Limiter } from '../../timing/limiter';
import {
  AlreadyResolvedError,
  InvalidResumeError,
  RunCheckpointError,
  RunConflictError,
  SuspensionMismatchError,
  UnknownSuspensionError,
} from '../../errors';
import { pendingOf } from '../../results/helpers';
import type { Answer, ToolResult } from '../../results/wire';
import { refusalStatusOf, storedCallOf, type RefusalStatus } from '../../suspension/answers';
import { isSettled } from '../../suspension/status';
import type { SuspendedCall } from '../../suspension/store';
import { sleep } from '../../timing/sleep';
import { pendingResult, resultOf } from '../core/checkpoints';
import { cancelChildren, SUB_AGENT_EVENTS } from '../core/child-run';
import { drive, takeOver, type ContinueOptions } from './drive';
import { callContext, type AgentParts as ResumeParts, type Emit } from '../core/live-run';
import { resumeOutput, type OutputRun } from '../core/output';
import { isEnded, type HaltedCall, type RunState } from '../core/state';
import type { RunResult } from '../core/types';
import { openTrace, traced } from '../core/run-trace';

const MAX_MERGE_ATTEMPTS = 100;
const FIRST_WAIT_MS = 20;
const MAX_WAIT_MS = 500;

/**
 * The path of an answer through a run: check each answer against the halted turn, resolve
 * each through the coordinator (exactly once), merge the outcomes into the checkpoint, and
 * continue the loop when the last open call is settled. An answer given again identically
 * gets the run's result again.
 */
export async function continueRun(
  parts: ResumeParts,
  answersIn: Answer | readonly Answer[],
  options: ContinueOptions,
  emit: Emit | undefined,
): Promise<RunResult> {
  // Each stored call is read once (or was, by answerAs) and carried by its answer to `resolve`.
  const answers = await Promise.all(checkAnswers(parts, answersIn).map((answer) => parts.coordinator.read(answer)));
  const calls = answers.map(storedCallOf);
  const runId = runOf(answers, calls);
  const { state } = await parts.checkpoints.load(runId);
  // The agent holding the conversation answers for it (its tools replay the calls).
  const held = heldBy(parts, runId, state);
  // One span per resume, linked to the run's span that halted (maybe in another process).
  const trace = openTrace(held, runId, state.traceparent, state.session);
  const traceOptions = trace ? { ...options, trace } : options;
  return traced(trace, () => continueLoaded(held, answers, calls, runId, state, traceOptions, emit));
}

async function continueLoaded(
  parts: ResumeParts,
  answers: Answer[],
  calls: Array<SuspendedCall | undefined>,
  runId: string,
  loaded: RunState,
  options: ContinueOptions,
  emit: Emit | undefined,
): Promise<RunResult> {
  let state = loaded;
  // Checked before any answer is applied: a resume that could not continue changes nothing.
  resumeOutput(runId, state.output, options.output, parts.model, parts.tools());
  const unknownTo = (checked: RunState) =>
    answers.some((answer, i) => !openIn(checked, answer.id) && !isSettled((calls[i] as SuspendedCall).status));
  if (unknownTo(state)) {
    // A link the checkpoint does not list yet: an earlier link of its chain was answered
    // without this runner (a CLI with the coordinator alone). Catch the checkpoint up first.
    const caught = await catchUp(parts, runId, state);
    if (caught.continues) return drive(parts, runId, caught.state, caught.version, options, emit);
    state = caught.state;
  }
  const open = new Map<string, HaltedCall>();
  const repeated: Answer[] = [];
  for (const [i, answer] of answers.entries()) {
    const call = calls[i] as SuspendedCall;
    const halted = openIn(state, answer.id);
    if (halted) {
      open.set(answer.id, halted);
    } else if (!isSettled(call.status)) {
      throw new RunCheckpointError(runId, `suspension ${answer.id} is ${call.status} in the store but not open in the checkpoint`);
    } else {
      repeated.push(answer);
    }
  }
  // An answer already applied: the coordinator returns its stored outcome if it is the same
  // answer, or says it conflicts. Nothing replays.
  for (const answer of repeated) await resolveAgain(parts, runId, answer, options);
  if (open.size === 0) return currentResult(parts, runId, options, emit);

  const openAnswers = answers.filter((answer) => open.has(answer.id));
  // Each replay is exactly-once in the coordinator, which also refuses a stored call that is
  // not the transcript's; settle them all before merging, so one failed answer never loses
  // the outcome of another.
  const settled = await allSettledLimited(openAnswers, parts.maxParallelTools, (answer) => {
    const { call } = open.get(answer.id) as HaltedCall;
    const ctx = callContext(options.context, options.signal, call.id, runId);
    if (emit) Object.assign(ctx, { [SUB_AGENT_EVENTS]: emit });
    return parts.coordinator.resolve(answer, ctx, options.audit, {
      tool: call.name,
      args: call.arguments,
      callId: call.id,
      runId,
    });
  });
  const outcomes = new Map<string, ToolResult>();
  let firstError: unknown;
  settled.forEach((entry, i) => {
    if (entry.status === 'fulfilled') outcomes.set((openAnswers[i] as Answer).id, entry.value);
    else firstError ??= withRun(entry.reason, runId);
  });
  if (outcomes.size === 0) throw firstError;
  // A refused sub-agent request never reaches the child: its own request is cancelled, down the tree.
  await Promise.all(
    openAnswers
      .filter((answer) => !answer.ok && outcomes.has(answer.id))
      .map((answer) => cancelChildren(parts.coordinator, pendingOf((open.get(answer.id) as HaltedCall).result), answer.reason)),
  );

  const merged = await merge(parts, runId, outcomes);
  if (emit) {
    for (const [id, result] of outcomes) {
      if (merged.rejected.includes(id)) continue;
      const { call } = open.get(id) as HaltedCall;
      const next = pendingOf(result);
      if (next) emit({ type: 'pending', callId: call.id, request: next });
      else if (showsToolResult(parts)) emit({ type: 'tool_result', callId: call.id, name: call.name, result });
    }
  }
  if (!merged.continues) {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the first failure as it was thrown (a tool or store may throw anything)
    if (firstError !== undefined) throw firstError;
    if (merged.applied === 0) return currentResult(parts, runId, options, emit);
    const result = pendingResult(runId, merged.state);
    emit?.({ type: 'done', result });
    return result;
  }
  return drive(parts, runId, merged.state, merged.version, options, emit);
}

/**
 * Continues a run whose loop stopped after a resume: its model call failed (`failed`), or
 * its driver stopped renewing its lease (a lapsed `running`), or, with `force`, at once.
 */
export async function recoverRun(
  parts: ResumeParts,
  runId: string,
  options: ContinueOptions & { force?: boolean },
  emit: Emit | undefined,
): Promise<RunResult> {
  const loaded = await parts.checkpoints.load(runId);
  const held = heldBy(parts, runId, loaded.state);
  const trace = openTrace(held, runId, loaded.state.traceparent, loaded.state.session);
  const traceOptions = trace ? { ...options, trace } : options;
  return traced(trace, () => recoverLoaded(held, runId, loaded, traceOptions, emit));
}

async function recoverLoaded(
  parts: ResumeParts,
  runId: string,
  { state, version }: { state: RunState; version: number },
  options: ContinueOptions & { force?: boolean },
  emit: Emit | undefined,
): Promise<RunResult> {
  resumeOutput(runId, state.output, options.output, parts.model, parts.tools());
  if (state.phase === 'halted') return answeredElsewhere(parts, runId, state, options, emit);
  if (isEnded(state.phase)) throw new InvalidResumeError(`run ${runId} is already ${state.phase}`);
  if (state.phase === 'running' && !options.force && !parts.checkpoints.lapsed(state)) {
    throw new RunConflictError(
      runId,
      'another process is continuing it and renewing its lease; pass { force: true } only if that process is gone',
    );
  }
  return takeOver(parts, runId, state, version, options, emit);
}

/**
 * Continues a halted run whose open calls were all answered without this runner (through
 * the coordinator alone: `answerAs` given no runner, the CLI, a chat back end that streams the
 * continuation itself): the checkpoint takes the stored outcomes and the loop goes on. A run
 * that is not halted any more (another process continued it) gets its result once nobody
 * drives it, as an answer given again does.
 *
 * @throws {@link InvalidResumeError} some of its calls still wait for answers.
 */
export async function continueAnswered(
  parts: ResumeParts,
  runId: string,
  options: ContinueOptions,
  emit: Emit | undefined,
): Promise<RunResult> {
  const { state } = await parts.checkpoints.load(runId);
  const held = heldBy(parts, runId, state);
  const trace = openTrace(held, runId, state.traceparent, state.session);
  const traceOptions = trace ? { ...options, trace } : options;
  return traced(trace, async () => {
    resumeOutput(runId, state.output, options.output, held.model, held.tools());
    if (state.phase === 'halted') return answeredElsewhere(held, runId, state, traceOptions, emit);
    return currentResult(held, runId, traceOptions, emit);
  });
}

/** A halted checkpoint whose calls may all have been answered without this runner: then it continues here. */
async function answeredElsewhere(
  parts: ResumeParts,
  runId: string,
  state: RunState,
  options: ContinueOptions,
  emit: Emit | undefined,
): Promise<RunResult> {
  const caught = await catchUp(parts, runId, state);
  if (caught.continues) return drive(parts, runId, caught.state, caught.version, options, emit);
  const open = (caught.state.halted?.calls ?? []).filter((entry) => entry.pendingId).map((entry) => entry.pendingId);
  if (caught.state.phase === 'halted')
    throw new InvalidResumeError(`run ${runId} is waiting for answers to ${open.join(', ')}: resume it with them`);
  return currentResult(parts, runId, options, emit);
}

/** The run's result as the checkpoint has it, once nobody is driving it: waits for a live driver, takes over a dead one. */
async function currentResult(parts: ResumeParts, runId: string, options: ContinueOptions, emit: Emit | undefined): Promise<RunResult> {
  for (let pause = FIRST_WAIT_MS; ; pause = Math.min(pause * 2, MAX_WAIT_MS)) {
    const { state, version } = await parts.checkpoints.load(runId);
    const output = resumeOutput(runId, state.output, options.output, parts.model, parts.tools());
    const result = await resultOf(runId, state, (plain) => outputInstance(output, plain));
    if (result) {
      emit?.({ type: 'done', result });
      return result;
    }
    if (state.phase === 'failed' || parts.checkpoints.lapsed(state)) {
      try {
        return await takeOver(parts, runId, state, version, options, emit);
      } catch (error) {
        if (!(error instanceof RunConflictError)) throw error; // someone else took it first: wait for them
      }
    }
    await sleep(pause, options.signal);
  }
}

/**
 * Writes outcomes into the checkpoint with compare-and-set: on a version conflict (another
 * process resumed a sibling meanwhile) reload and merge again, so nobody's result is lost.
 * An outcome that is the chain's next link keeps its call open under the new id. The
 * writer whose merge closes the last open call takes the run (`continues`).
 */
async function merge(
  parts: ResumeParts,
  runId: string,
  outcomes: Map<string, ToolResult>,
): Promise<{ state: RunState; version: number; applied: number; rejected: string[]; continues: boolean }> {
  const refusals = await refusalsOf(parts, outcomes);
  for (let attempt = 0; attempt < MAX_MERGE_ATTEMPTS; attempt++) {
    const { state, version } = await parts.checkpoints.load(runId);
    let applied = 0;
    const rejected: string[] = [];
    for (const [id, outcome] of outcomes) {
      const entry = state.phase === 'halted' ? state.halted?.calls.find((call) => call.pendingId === id) : undefined;
      if (!entry) {
        rejected.push(id);
        continue;
      }
      entry.result = outcome;
      const refusal = refusals.get(id);
      if (refusal) entry.refusal = refusal;
      else delete entry.refusal;
      const next = pendingOf(outcome);
      if (next) entry.pendingId = next.id;
      else delete entry.pendingId;
      applied++;
    }
    if (applied === 0) return { state, version, applied, rejected, continues: false };
    const continues = (state.halted as NonNullable<RunState['halted']>).calls.every((call) => call.pendingId === undefined);
    const written: RunState = continues ? { ...state, phase: 'running', driver: parts.checkpoints.driver() } : state;
    if (await parts.checkpoints.write(runId, version + 1, written))
      return { state: written, version: version + 1, applied, rejected, continues };
  }
  throw new RunConflictError(runId, `could not save the checkpoint after ${MAX_MERGE_ATTEMPTS} conflicting writes`);
}

/**
 * Which outcomes are refusals, and how: from the mark of a refusal made here, else (an error
 * result settled elsewhere) from the stored call's status; read once, outside the merge's retries.
 */
async function refusalsOf(parts: ResumeParts, outcomes: ReadonlyMap<string, ToolResult>): Promise<Map<string, RefusalStatus>> {
  const refusals = new Map<string, RefusalStatus>();
  for (const [id, outcome] of outcomes) {
    if (!outcome.isError || pendingOf(outcome)) continue;
    const marked = refusalStatusOf(outcome);
    const status = marked ?? (await parts.coordinator.get(id))?.status;
    if (status === 'declined' || status === 'expired' || status === 'cancelled') refusals.set(id, status);
  }
  return refusals;
}

/** The parts of the agent that holds the run's conversation (a handoff moved it), else `parts`. */
function heldBy(parts: ResumeParts, runId: string, state: RunState): ResumeParts {
  if (state.agent === undefined || state.agent === parts.agent) return parts;
  const held = parts.agentParts?.(state.agent);
  if (!held)
    throw new RunCheckpointError(runId, `the conversation is held by agent ${JSON.stringify(state.agent)}, which this runner cannot reach`);
  return held;
}

/** The halted call waiting for suspension `id`, when the checkpoint is halted on it. */
function openIn(state: RunState, id: string): HaltedCall | undefined {
  return state.phase === 'halted' ? state.halted?.calls.find((entry) => entry.pendingId === id) : undefined;
}

/** Longest chain {@link catchUp} follows: more links than any coordinator's `maxChain` allows. */
const MAX_CATCH_UP_LINKS = 64;

/**
 * Writes into a halted checkpoint what the store already settled for its open calls without
 * this runner (an answer given through the coordinator alone: a CLI without the runner, a
 * plain `resolve`), each followed along its chain to the link still open or to its final
 * outcome. `continues` when that closed the last open call: the caller drives the run.
 */
async function catchUp(
  parts: ResumeParts,
  runId: string,
  state: RunState,
): Promise<{ state: RunState; version: number; continues: boolean }> {
  const outcomes = new Map<string, ToolResult>();
  for (const entry of state.phase === 'halted' ? (state.halted?.calls ?? []) : []) {
    if (entry.pendingId === undefined) continue;
    let outcome: ToolResult | undefined;
    let id: string | undefined = entry.pendingId;
    for (let links = 0; id !== undefined && links < MAX_CATCH_UP_LINKS; links++) {
      const call = await parts.coordinator.get(id);
      if (!call || !isSettled(call.status) || call.outcome === undefined) break;
      if (call.runId !== runId || call.callId !== entry.call.id || call.tool !== entry.call.name)
        throw new SuspensionMismatchError(call.request.id, `it is not the call ${entry.call.id} of run ${runId}`);
      outcome = call.outcome;
      id = pendingOf(outcome)?.id;
    }
    if (outcome) outcomes.set(entry.pendingId, outcome);
  }
  if (outcomes.size === 0) return { ...(await parts.checkpoints.load(runId)), continues: false };
  const merged = await merge(parts, runId, outcomes);
  return { state: merged.state, version: merged.version, continues: merged.continues };
}

/** A checkpoint's validated answer as the caller's DTO instance. */
async function outputInstance(output: OutputRun | undefined, plain: unknown): Promise<unknown> {
  if (!output) return undefined;
  const parsed = await output.plan.parse(JSON.stringify(plain));
  return parsed.ok ? parsed.value : undefined;
}

async function resolveAgain(parts: ResumeParts, runId: string, answer: Answer, options: ContinueOptions): Promise<void> {
  try {
    // With the answerer's audit: the answer policy judges this retry as any answer.
    await parts.coordinator.resolve(answer, { signal: options.signal }, options.audit);
  } catch (error) {
    throw withRun(error, runId);
  }
}

/** An AlreadyResolvedError that names the run it happened in. */
function withRun(error: unknown, runId: string): unknown {
  if (error instanceof AlreadyResolvedError && error.runId === undefined) return new AlreadyResolvedError(error.id, error.status, runId);
  return error;
}

/** The answers as the coordinator checked them (each copy is not checked again when it is resolved). */
function checkAnswers(parts: ResumeParts, input: Answer | readonly Answer[]): Answer[] {
  const given = Array.isArray(input) ? (input as readonly Answer[]) : [input as Answer];
  if (given.length === 0) throw new InvalidResumeError('resume needs at least one answer');
  const seen = new Set<string>();
  const answers = given.map((answer) => parts.coordinator.checkAnswer(answer));
  for (const answer of answers) {
    if (seen.has(answer.id)) throw new InvalidResumeError(`answer ${answer.id} is given twice`);
    seen.add(answer.id);
  }
  return answers;
}

/** The one run every answer belongs to. */
function runOf(answers: readonly Answer[], calls: ReadonlyArray<SuspendedCall | undefined>): string {
  const runs = new Set<string>();
  for (const [i, answer] of answers.entries()) {
    const call = calls[i];
    if (!call) throw new UnknownSuspensionError(answer.id);
    if (call.runId === undefined)
      throw new InvalidResumeError(`suspension ${answer.id} belongs to no agent run: resolve it with ResumeCoordinator.resolve`);
    runs.add(call.runId);
  }
  if (runs.size > 1)
    throw new InvalidResumeError(`the answers belong to different runs (${[...runs].join(', ')}): resume one run at a time`);
  return [...runs][0] as string;
}

/** `Promise.allSettled` of `task` over `items`, at most `limit` running at once (the replays of a halted turn's answers). */
function allSettledLimited<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<Array<PromiseSettledResult<R>>> {
  const limiter = new Limiter(limit);
  return Promise.allSettled(items.map((item) => limiter.run(() => task(item))));
}
