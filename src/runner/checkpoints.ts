import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, RunConflictError, RunNotFoundError } from '../errors';
import { messageOf } from '../errors/message';
import { pendingOf } from '../results/helpers';
import type { PendingRequest } from '../results/wire';
import type { RunListing, RunStore } from './store';
import { systemClock, type Clock, type ClockTimer } from '../timing/clock';
import { callStatus } from './call-status';
import type { LiveRun } from './loop';
import { outputState } from './output';
import { readRunState, RUN_STATE_FORMAT, type RunDriver, type RunState } from './state';
import type { HaltedRunResult, RunResult } from './types';

/** A checkpoint as read: its state, checked, and the version to write after. */
export interface LoadedRun {
  state: RunState;
  version: number;
}

/**
 * Reads and writes run checkpoints in a {@link RunStore}, each write a compare-and-set on
 * the version, and keeps a `running` run's driver lease renewed while this process drives it.
 */
export class Checkpoints {
  constructor(
    private readonly runs: RunStore,
    /** How long a driver's lease holds without renewal. */
    readonly runLeaseMs: number,
    /** Where lease renewals, lapses and checkpoint timestamps take their time (the runner's `clock`). */
    private readonly clock: Clock = systemClock,
  ) {}

  private nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** @throws {@link RunNotFoundError} no checkpoint for `runId`. */
  async load(runId: string): Promise<LoadedRun> {
    const checkpoint = await this.runs.loadRun(runId);
    if (!checkpoint) throw new RunNotFoundError(runId);
    return { state: readRunState(runId, checkpoint.state), version: checkpoint.version };
  }

  /** Writes `state` as `version`; false when another writer got there first. */
  write(runId: string, version: number, state: RunState): Promise<boolean> {
    return this.runs.saveRun({ runId, version, state: state as unknown as Record<string, unknown>, updatedAt: this.nowIso() });
  }

  /** Saves the live run's next version. @throws {@link RunConflictError} when another process wrote it meanwhile. */
  async save(live: LiveRun, state: RunState): Promise<void> {
    const version = live.version + 1;
    if (!(await this.write(live.runId, version, state))) {
      throw new RunConflictError(
        live.runId,
        version === 1
          ? 'a checkpoint with this runId already exists; give each run its own runId'
          : `checkpoint version ${live.version} was changed by another process`,
      );
    }
    live.version = version;
  }

  /**
   * A checkpointed run whose model call failed is saved as `failed` with its (balanced)
   * transcript, so `recover` (or the same answer again) can continue it.
   */
  async saveFailure(live: LiveRun, error: unknown): Promise<void> {
    const state = snapshot(live, 'failed', undefined);
    state.error = messageOf(error);
    try {
      await this.save(live, state);
    } catch {
      // The model error is what the caller must see; the driver lease lapses and the run can be taken over.
    }
  }

  /**
   * Runs whose driver lease has lapsed by this process's clock (`running`, not written for a
   * whole lease), oldest first. @throws {@link InvalidArgumentError} the store cannot list runs.
   */
  async orphans(limit: number): Promise<RunListing[]> {
    if (typeof this.runs.listStaleRuns !== 'function')
      throw new InvalidArgumentError('this run store cannot list runs (it has no listStaleRuns): recover runs by id instead');
    return this.runs.listStaleRuns({ updatedBefore: new Date(this.clock.now() - this.runLeaseMs).toISOString(), limit });
  }

  /** A new driver lease for this process. */
  driver(): RunDriver {
    return { id: randomUUID(), renewedAt: this.nowIso() };
  }

  /** True when a `running` run's driver has not renewed its lease for a whole lease (it died, or hangs). */
  lapsed(state: RunState): boolean {
    if (state.phase !== 'running') return false;
    if (!state.driver) return true; // written before drivers had leases: nobody can be renewing it
    return this.clock.now() - Date.parse(state.driver.renewedAt) > this.runLeaseMs;
  }

  /**
   * Renews the live run's driver lease every third of a lease, re-saving `running` (as it is
   * now: a copy, so what the loop appends meanwhile is never written half-done). When a
   * renewal finds the checkpoint changed by someone else (a takeover), `onLost` is told:
   * this process must stop driving. The returned stop waits for a renewal in flight, so the
   * loop's own next save never races one.
   */
  renew(live: LiveRun, running: RunState, onLost: (error: RunConflictError) => void): () => Promise<void> {
    const saved: RunState = JSON.parse(JSON.stringify(running)) as RunState;
    const driverId = running.driver?.id ?? randomUUID();
    let stopped = false;
    let timer: ClockTimer | undefined;
    let saving: Promise<void> = Promise.resolve();
    const beat = async (): Promise<void> => {
      if (stopped) return;
      try {
        await this.save(live, { ...saved, driver: { id: driverId, renewedAt: this.nowIso() } });
      } catch (error) {
        if (error instanceof RunConflictError) {
          stopped = true;
          onLost(error);
          return;
        }
        // The store is unreachable: try again next beat; the lease may still hold.
      }
      schedule();
    };
    const schedule = (): void => {
      if (stopped) return;
      timer = this.clock.setTimeout(
        () => {
          saving = beat();
        },
        Math.max(1, Math.floor(this.runLeaseMs / 3)),
      );
      timer.unref?.();
    };
    schedule();
    return async () => {
      stopped = true;
      if (timer) this.clock.clearTimeout(timer);
      await saving;
    };
  }
}

/** The checkpoint state of a live run. */
export function snapshot(live: LiveRun, phase: RunState['phase'], halted: RunState['halted']): RunState {
  const state: RunState = {
    format: RUN_STATE_FORMAT,
    phase,
    messages: live.messages,
    toolCalls: live.toolCalls,
    turns: live.turns,
    usage: live.usage,
    turnUsage: live.turnUsage,
    text: live.text,
  };
  if (live.output) state.output = outputState(live.output);
  if (live.agent !== undefined) state.agent = live.agent;
  if (halted) state.halted = halted;
  const traceparent = live.trace?.tracing.traceparentOf(live.trace.span);
  if (traceparent !== undefined) state.traceparent = traceparent;
  return state;
}

/** The result of a halted run. */
export function pendingResult(runId: string, state: RunState): HaltedRunResult {
  const halted = state.halted?.calls ?? [];
  const pendings: PendingRequest[] = [];
  for (const entry of halted) {
    const request = entry.pendingId === undefined ? undefined : pendingOf(entry.result);
    if (request) pendings.push(request);
  }
  return {
    status: 'halted',
    text: state.text,
    messages: state.messages,
    toolCalls: [
      ...state.toolCalls,
      ...halted.map((entry) => ({
        id: entry.call.id,
        name: entry.call.name,
        arguments: entry.call.arguments,
        result: entry.result,
        status: callStatus(entry.result, entry.refusal),
        turn: state.halted?.turn ?? state.turns,
      })),
    ],
    turns: state.turns,
    usage: state.usage,
    turnUsage: state.turnUsage ?? [],
    runId,
    pending: pendings[0] as PendingRequest,
    pendings,
  };
}

/**
 * The result a finished (`done` / `incomplete`) or halted checkpoint stands for. A typed
 * answer is rebuilt from the checkpoint's JSON by `instance` (the DTO class is the caller's).
 */
export async function resultOf(
  runId: string,
  state: RunState,
  instance: (plain: unknown) => Promise<unknown>,
): Promise<RunResult | undefined> {
  if (state.phase === 'halted') return pendingResult(runId, state);
  const base = {
    text: state.text,
    messages: state.messages,
    toolCalls: state.toolCalls,
    turns: state.turns,
    usage: state.usage,
    turnUsage: state.turnUsage ?? [],
    runId,
  };
  if (state.phase === 'done')
    return { ...base, status: 'done', output: state.output?.value === undefined ? undefined : await instance(state.output.value) };
  if (state.phase === 'incomplete') return { ...base, status: 'incomplete', limit: 'maxTurns' };
  return undefined;
}
