import { InvalidArgumentError, InvalidResumeError, RunConflictError, RunNotFoundError, ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import type { LapsedTakeover } from '../suspension/sweep';
import type { ClockTimer } from '../timing/clock';
import type { AgentRunner } from './agent-runner';
import type { AgentParts } from './core/live-run';
import type { OrphanRecovery, ResumeOptions } from './core/options';

/** Default time between two ticks of {@link startRecovery}. */
export const DEFAULT_RECOVERY_INTERVAL_MS = 5_000;
/** Default most takeovers, continued runs and orphans of one tick, each. */
export const DEFAULT_RECOVERY_LIMIT = 10;

/** Options of `AgentRunner.startRecovery` (docs/agents.md, "Restart recovers"). */
export interface RecoveryOptions {
  /** Time between the end of one tick and the start of the next, on the runner's clock. Default 5,000 ms. */
  intervalMs?: number;
  /** At most this many takeovers, continued runs and orphans per tick, each (1 to 1000). Default 10. */
  limit?: number;
  /** The host's context the replays and continued runs get (never stored). */
  context?: object;
  /**
   * Told of what a tick could not do (a store down, a run whose model failed again), with the
   * error's code and the run or call it concerns: nothing sensitive. Default: one line on stderr.
   * A throwing `onError` changes nothing.
   */
  onError?: (problem: RecoveryProblem) => void;
}

/** What a tick could not do: the error's stable code and where; the tick goes on with the rest. */
export interface RecoveryProblem {
  /** `lapsed claim`, `halted run`, `orphan` or `tick`. */
  step: string;
  /** The suspension or run it concerns. */
  id?: string;
  /** The error's `code` (a `ToolnexusError`), else its name. */
  code: string;
  error: Error;
}

/** What one tick did. */
export interface RecoveryTick {
  /** Calls whose claim lapsed, taken over under the takeover rule. */
  takenOver: LapsedTakeover[];
  /** Halted runs whose open calls were all settled (here or elsewhere) and which went on. */
  continued: string[];
  /** Runs whose driver died, taken over (`AgentRunner.recoverOrphans`). */
  orphans: OrphanRecovery[];
}

/** A running recovery loop: `stop()` ends it (and waits for a tick under way); `tick()` runs one now. */
export interface Recovery {
  tick(): Promise<RecoveryTick>;
  stop(): Promise<void>;
}

/**
 * The recovery loop (`AgentRunner.startRecovery`): every `intervalMs`, on the runner's clock,
 * one bounded tick that (1) applies the takeover rule to calls whose claim lapsed, (2)
 * continues the halted runs those settled, and those whose latest settled calls closed their
 * last open question, (3) takes over orphaned runs. Safe with many processes on one store: a
 * claim, and each checkpoint's compare-and-set, give every piece of work to one of them.
 */
export function startRecovery(runner: AgentRunner, parts: AgentParts, options: RecoveryOptions = {}): Recovery {
  const { intervalMs = DEFAULT_RECOVERY_INTERVAL_MS, limit = DEFAULT_RECOVERY_LIMIT, context } = options;
  if (!Number.isFinite(intervalMs) || intervalMs <= 0)
    throw new InvalidArgumentError(`startRecovery: intervalMs must be a positive number, got ${String(intervalMs)}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new InvalidArgumentError(`startRecovery: limit must be an integer from 1 to 1000, got ${String(limit)}`);
  const tell = problemReporter(options.onError);
  const resume: ResumeOptions = context ? { context } : {};
  const clock = parts.checkpoints.clock;
  let running: Promise<RecoveryTick> | undefined;
  let timer: ClockTimer | undefined;
  let stopped = false;

  const once = async (): Promise<RecoveryTick> => {
    const tick: RecoveryTick = { takenOver: [], continued: [], orphans: [] };
    tick.takenOver = await runner.coordinator.recoverLapsed({ limit, ...(context ? { context } : {}) }).catch((error: unknown) => {
      tell('tick', undefined, error);
      return [];
    });
    const runs = new Set<string>();
    for (const entry of tick.takenOver) {
      if (entry.status === 'failed') tell('lapsed claim', entry.id, entry.error);
      else if (entry.runId !== undefined) runs.add(entry.runId);
    }
    for (const runId of await answeredRuns(runner, parts, limit).catch((error: unknown) => (tell('tick', undefined, error), []))) {
      runs.add(runId);
    }
    for (const runId of runs) {
      try {
        await runner.continue(runId, resume);
        tick.continued.push(runId);
      } catch (error) {
        // Still waiting for a person (the takeover's `recovery` request, say), gone, or another process has it.
        if (!(error instanceof InvalidResumeError || error instanceof RunConflictError || error instanceof RunNotFoundError))
          tell('halted run', runId, error);
      }
    }
    tick.orphans = await runner.recoverOrphans({ ...resume, limit }).catch((error: unknown) => {
      tell('tick', undefined, error);
      return [];
    });
    for (const orphan of tick.orphans) if (orphan.status === 'failed') tell('orphan', orphan.runId, orphan.error);
    return tick;
  };
  const tick = (): Promise<RecoveryTick> => {
    // One tick at a time in this process: a timer's tick and a caller's share the one under way.
    running ??= once().finally(() => {
      running = undefined;
    });
    return running;
  };
  const schedule = (): void => {
    if (stopped) return;
    timer = clock.setTimeout(() => {
      void tick().finally(schedule);
    }, intervalMs);
    // The loop alone keeps no process alive: a server's sockets do.
    timer.unref?.();
  };
  schedule();
  return {
    tick,
    async stop() {
      stopped = true;
      if (timer) clock.clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}

/** `AgentRunner.recoverOrphans`: each orphan recovered here, or `taken` by another process, or `failed`. */
export async function recoverOrphans(
  runner: AgentRunner,
  parts: AgentParts,
  options: ResumeOptions & { limit?: number },
): Promise<OrphanRecovery[]> {
  const { limit = 10, ...resume } = options;
  const outcomes: OrphanRecovery[] = [];
  for (const orphan of await parts.checkpoints.orphans(limit)) {
    try {
      outcomes.push({ runId: orphan.runId, status: 'recovered', result: await runner.recover(orphan.runId, resume) });
    } catch (error) {
      if (error instanceof RunConflictError || error instanceof InvalidResumeError) outcomes.push({ runId: orphan.runId, status: 'taken' });
      else outcomes.push({ runId: orphan.runId, status: 'failed', error: error instanceof Error ? error : new Error(messageOf(error)) });
    }
  }
  return outcomes;
}

/**
 * Halted runs whose open questions were settled without them going on (a process died between
 * storing an outcome and writing it into the checkpoint, or a door answered with a coordinator
 * alone): the runs of the `limit` latest settled calls, each still halted on that very call.
 */
async function answeredRuns(runner: AgentRunner, parts: AgentParts, limit: number): Promise<string[]> {
  const runs: string[] = [];
  const seen = new Set<string>();
  for (const call of await runner.coordinator.history({ limit })) {
    const runId = call.runId;
    if (runId === undefined || seen.has(runId)) continue;
    seen.add(runId);
    const loaded = await parts.checkpoints.load(runId).catch(() => undefined);
    const open = loaded?.state.phase === 'halted' ? loaded.state.halted?.calls : undefined;
    if (open?.some((entry) => entry.pendingId === call.request.id)) runs.push(runId);
  }
  return runs;
}

function problemReporter(onError: RecoveryOptions['onError']): (step: string, id: string | undefined, error: unknown) => void {
  return (step, id, thrown) => {
    const error = thrown instanceof Error ? thrown : new Error(messageOf(thrown));
    const code = error instanceof ToolnexusError ? error.code : error.name;
    try {
      if (onError) onError({ step, ...(id === undefined ? {} : { id }), code, error });
      // The code and where only: an error's message may quote a tool's output.
      else process.stderr.write(`toolnexus recovery: ${step}${id === undefined ? '' : ` ${id}`} failed: ${code}\n`);
    } catch {
      // A failing reporter changes nothing here.
    }
  };
}
