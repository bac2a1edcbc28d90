import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, RunConflictError } from '../errors';
import { pendingOf } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { snapshot, type Checkpoints } from './checkpoints';
import { callTool, feed, halt, type LiveRun, type LoopParts } from './loop';
import type { RunStep, StepCall } from './state';
import type { RunResult } from './types';
import type { ToolCall } from '../models/types';

/**
 * How often a run is checkpointed. `halt`: only when it halts (and after a resume), so a run
 * that never suspends costs no I/O, and a driver that dies mid-run loses it. `turn`: also at
 * its start, after every model response and around every tool call, so `recover` continues it
 * from its last step (docs/agents.md, "Durable steps").
 */
export type Durability = 'halt' | 'step';

/**
 * Writes the live run after each step while this process drives it, one write at a time
 * (each a compare-and-set on the version), and renews the driver lease between steps. A
 * write that finds the checkpoint changed by another process (a takeover) is a
 * {@link RunConflictError}: this process must stop driving.
 */
export class Journal {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly driverId = randomUUID();

  constructor(
    private readonly checkpoints: Checkpoints,
    private readonly live: LiveRun,
  ) {}

  /** Writes the run as it stands now; resolves once it is stored. */
  record(): Promise<void> {
    const next = this.chain.then(() => this.write());
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Renews the lease every third of it (a write of the run as it stands), telling `onLost` of a takeover. */
  renewEvery(ms: number, onLost: (error: RunConflictError) => void): void {
    const beat = (): void => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.record().then(beat, (error: unknown) => {
          if (error instanceof RunConflictError) onLost(error);
          else beat(); // the store is unreachable: try again next beat; the lease may still hold
        });
      }, ms);
      this.timer.unref();
    };
    beat();
  }

  /** Stops renewing and waits for the write in flight, so the loop's own next save never races one. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.chain;
  }

  private async write(): Promise<void> {
    const state = snapshot(this.live, 'running', undefined);
    state.driver = { id: this.driverId, renewedAt: new Date().toISOString() };
    if (this.live.step) state.step = this.live.step;
    await this.checkpoints.save(this.live, state);
  }
}

/**
 * Starts journaling the live run: the first write (a new run's version 1, so a runId taken
 * already is a {@link RunConflictError}), then lease renewals. A lost lease aborts the run's signal.
 */
export async function startJournal(parts: LoopParts, live: LiveRun): Promise<Journal> {
  await live.stopDriving?.();
  const journal = new Journal(parts.checkpoints, live);
  const lost = new AbortController();
  live.signal = live.signal ? AbortSignal.any([live.signal, lost.signal]) : lost.signal;
  live.journal = journal;
  live.stopDriving = () => journal.stop();
  await journal.record();
  journal.renewEvery(Math.max(1, Math.floor(parts.checkpoints.runLeaseMs / 3)), (error) => lost.abort(error));
  return journal;
}

/** True when the tool declares that running a call again has no further effect (or cannot run at all: unknown). */
function idempotent(parts: LoopParts, name: string): boolean {
  const tool = parts.coordinator.toolkit.get(name);
  return tool === undefined || tool.idempotent === true;
}

/**
 * Runs the turn's calls in parallel as the loop does, recording each result as it comes in,
 * and, before a call that is not idempotent starts, that it started.
 */
export function runStep(parts: LoopParts, live: LiveRun, journal: Journal, step: RunStep): Promise<ToolResult[]> {
  return Promise.all(step.calls.map((entry) => stepCall(parts, live, journal, entry)));
}

async function stepCall(parts: LoopParts, live: LiveRun, journal: Journal, entry: StepCall): Promise<ToolResult> {
  if (!idempotent(parts, entry.call.name)) {
    entry.started = true;
    await journal.record();
  }
  const result = await callTool(parts, live, entry.call);
  entry.result = result;
  await journal.record();
  return result;
}

/** The question an operator gets for a call that started and has no recorded result. */
function recoveryPrompt(runId: string, call: ToolCall): string {
  return `The process running ${call.name} (call ${call.id} of run ${runId}) stopped before its result was recorded: it may or may not have taken effect. Run it again?`;
}

/**
 * Finishes the step a dead driver left: a recorded result is kept, a call that never started
 * runs, a started call without a result runs again only if its tool is idempotent, and is
 * otherwise put to an operator as a `recovery` suspension (approve: it runs; decline: the
 * model is told it was refused). Returns the `pending` result when some call is now
 * suspended (the run halts on it), else feeds the results and returns undefined.
 */
export async function finishStep(parts: LoopParts, live: LiveRun, journal: Journal, left: RunStep): Promise<RunResult | undefined> {
  const step: RunStep = { turn: left.turn, calls: left.calls.map((entry) => ({ ...entry })) };
  live.step = step;
  const results = await Promise.all(
    step.calls.map(async (entry): Promise<ToolResult> => {
      if (entry.result) return entry.result;
      if (!entry.started || idempotent(parts, entry.call.name)) return stepCall(parts, live, journal, entry);
      let asked: ToolResult;
      try {
        asked = await parts.coordinator.suspend(
          entry.call.name,
          entry.call.arguments,
          {
            kind: 'recovery',
            prompt: recoveryPrompt(live.runId, entry.call),
            data: { runId: live.runId, callId: entry.call.id, tool: entry.call.name, turn: step.turn },
          },
          { callId: entry.call.id, runId: live.runId },
        );
      } catch (error) {
        // Arguments that do not parse never ran the tool: running the call again only repeats its error result.
        if (error instanceof InvalidArgumentError) return stepCall(parts, live, journal, entry);
        throw error;
      }
      entry.result = asked;
      const request = pendingOf(asked);
      if (request) live.emit?.({ type: 'pending', callId: entry.call.id, request });
      await journal.record();
      return asked;
    }),
  );
  const calls = step.calls.map((entry) => entry.call);
  if (results.some((result) => pendingOf(result) !== undefined)) {
    live.step = undefined;
    return halt(parts, live, calls, results);
  }
  feed(live, calls, results, step.turn);
  live.step = undefined;
  return undefined;
}
