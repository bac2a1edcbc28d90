import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, RunConflictError, RunNotFoundError } from '../../errors';
import { pendingOf } from '../../results/helpers';
import { jsonCopy } from '../../suspension/json';
import type { PendingRequest } from '../../results/wire';
import { systemClock, type Clock } from '../../timing/clock';
import { callStatus } from './call-status';
import { readRunState, type RunDriver, type RunState } from './state';
import type { RunListing, RunStore, SteeringQueue } from './store';
import type { HaltedRunResult, RunResult, RunResultBase } from './types';

/** A checkpoint as read: its state, checked, and the version to write after. */
export interface LoadedRun {
  state: RunState;
  version: number;
}

/** A run this process writes: its id, and the checkpoint version it last read or wrote (0: none yet). */
export interface Checkpointed {
  readonly runId: string;
  version: number;
}

/**
 * Reads and writes run checkpoints in a {@link RunStore}, each write a compare-and-set on
 * the version, and judges driver leases by the runner's clock.
 */
export class Checkpoints {
  constructor(
    private readonly runs: RunStore,
    /** How long a driver's lease holds without renewal. */
    readonly runLeaseMs: number,
    /** Where lease renewals, lapses and checkpoint timestamps take their time (the runner's `clock`). */
    readonly clock: Clock = systemClock,
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

  /**
   * Writes `state` as `version`; false when another writer got there first. The store gets a
   * JSON copy taken now, before `saveRun` is called: `state` shares the live run's transcript
   * and step, which keep changing while a store that copies after its first `await` (a pooled
   * connection, a logging wrapper) still holds them, and a step saved with results already
   * fed to the transcript would feed them to the model twice on `recover`. Every save path
   * (a durable step, a lease renewal, a halt, a resume) comes through here.
   */
  async write(runId: string, version: number, state: RunState): Promise<boolean> {
    const copy = jsonCopy(state as unknown as Record<string, unknown>, `the checkpoint of run ${runId}`);
    return this.runs.saveRun({ runId, version, state: copy, updatedAt: this.nowIso() });
  }

  /** Saves the run's next version. @throws {@link RunConflictError} when another process wrote it meanwhile. */
  async save(run: Checkpointed, state: RunState): Promise<void> {
    const version = run.version + 1;
    if (!(await this.write(run.runId, version, state))) {
      throw new RunConflictError(
        run.runId,
        version === 1
          ? 'a checkpoint with this runId already exists; give each run its own runId'
          : `checkpoint version ${run.version} was changed by another process`,
      );
    }
    run.version = version;
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

  /** Where a process queues a message for a run another process drives; undefined when the store keeps no such queue. */
  steeringQueue(): SteeringQueue | undefined {
    const runs = this.runs;
    return typeof runs.queueSteer === 'function' && typeof runs.queuedSteers === 'function' && typeof runs.dropSteers === 'function'
      ? (runs as SteeringQueue)
      : undefined;
  }

  /** The driver lease `id` (a new driver's when absent), renewed now. */
  driver(id: string = randomUUID()): RunDriver {
    return { id, renewedAt: this.nowIso() };
  }

  /** True when a `running` run's driver has not renewed its lease for a whole lease (it died, or hangs). */
  lapsed(state: RunState): boolean {
    if (state.phase !== 'running') return false;
    if (!state.driver) return true; // written before drivers had leases: nobody can be renewing it
    return this.clock.now() - Date.parse(state.driver.renewedAt) > this.runLeaseMs;
  }
}

/** The result of a halted run. */
export function pendingResult(runId: string, state: RunState): HaltedRunResult {
  const halted = state.halted?.calls ?? [];
  const pendings: PendingRequest[] = [];
  for (const entry of halted) {
    const request = entry.pendingId === undefined ? undefined : pendingOf(entry.result);
    if (request) pendings.push(request);
  }
  const result: HaltedRunResult = {
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
  if (state.guardrails) result.guardrails = state.guardrails.records;
  if (state.spend) result.spend = state.spend;
  return result;
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
  const base: RunResultBase = {
    text: state.text,
    messages: state.messages,
    toolCalls: state.toolCalls,
    turns: state.turns,
    usage: state.usage,
    turnUsage: state.turnUsage ?? [],
    runId,
  };
  if (state.guardrails) base.guardrails = state.guardrails.records;
  if (state.spend) base.spend = state.spend;
  if (state.phase === 'done')
    return { ...base, status: 'done', output: state.output?.value === undefined ? undefined : await instance(state.output.value) };
  if (state.phase === 'incomplete') return { ...base, status: 'incomplete', limit: 'maxTurns' };
  if (state.stop !== undefined) return { ...base, status: state.stop.status, stop: state.stop };
  return undefined;
}
