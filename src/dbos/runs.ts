import { InvalidArgumentError, InvalidResumeError } from '../errors';
import type { AgentRunner } from '../runner/agent-runner';
import type { RunState } from '../runner/core/state';
import type { RunCheckpoint, RunStore } from '../runner/core/store';
import type { RunResult } from '../runner/core/types';
import type { SuspensionObserver } from '../suspension/observer';
import type { SuspendedCall, SuspensionStore } from '../suspension/store';
import { dbosSdk, type DbosSdk } from './peer';

/** The DBOS topic an answer's notice is sent on. */
export const ANSWER_TOPIC = 'toolnexus.answer';
const DEFAULT_POLL_SECONDS = 60;

/** Where a run stands, as each DBOS step records it (JSON, so DBOS can keep it). */
export interface DbosRunSummary {
  runId: string;
  /** The run's status; `failed` or `running` only if a step gave up (it is then retried by recovery). */
  status: RunResult['status'];
  /** The final text, once `done`. */
  text?: string;
  /** The open suspensions' ids, while `halted`. */
  pendingIds?: string[];
}

/** Options of {@link DbosRuns}. */
export interface DbosRunsOptions {
  /** The workflow's name in DBOS, one per agent (every process registers the same). Default `toolnexus.run`. */
  name?: string;
  /**
   * How often a halted run's wait also reads the store, for answers given where nothing told
   * DBOS (the CLI, another service): at most this many seconds. Default 60.
   */
  pollSeconds?: number;
  /** The DBOS queue runs start on (registered with `DBOS.registerQueue`), to spread them over a fleet. */
  queue?: string;
}

/**
 * Runs an {@link AgentRunner}'s runs as DBOS workflows (docs/deploying.md, "Runs on DBOS"). The
 * runner records every step in its own checkpoint (give it `durability: 'step'`); each DBOS
 * step drives the run from that checkpoint (`run`, else `recover` or `continue`), so a step
 * DBOS repeats after a crash repeats no model call or tool result the checkpoint holds. A halt
 * is a durable DBOS wait (`DBOS.recv`) that ends when every question of the run is answered —
 * from the inbox, the chat, the CLI or `resolve`, anywhere — whose replay the coordinator's
 * claim and fence keep exactly once.
 *
 * Build it before `DBOS.launch()`, in every process, with the same name: DBOS recovers a
 * workflow by name in whichever process launches next.
 */
export class DbosRuns {
  private readonly dbos: DbosSdk;
  private readonly runs: RunStore;
  private readonly store: SuspensionStore;
  private readonly pollSeconds: number;
  private readonly queue: string | undefined;
  private readonly workflow: (runId: string, input: string) => Promise<DbosRunSummary>;

  constructor(
    private readonly runner: AgentRunner,
    options: DbosRunsOptions = {},
  ) {
    this.dbos = dbosSdk();
    this.store = runner.coordinator.store;
    const runs = this.store as Partial<RunStore>;
    if (typeof runs.loadRun !== 'function') throw new InvalidArgumentError("DbosRuns needs a runner whose coordinator's store keeps runs");
    this.runs = runs as RunStore;
    this.pollSeconds = options.pollSeconds ?? DEFAULT_POLL_SECONDS;
    if (!(this.pollSeconds > 0)) throw new InvalidArgumentError(`pollSeconds must be positive, got ${String(options.pollSeconds)}`);
    this.queue = options.queue;
    const { DBOS } = this.dbos;
    this.workflow = DBOS.registerWorkflow((runId: string, input: string) => this.body(runId, input), {
      name: options.name ?? 'toolnexus.run',
    });
  }

  /**
   * Starts a run as a workflow whose id is the run's id (a run id already started returns
   * that workflow, as DBOS does); `await handle.getResult()` gives its summary once it ends.
   */
  start(input: string, options: { runId: string }): Promise<import('@dbos-inc/dbos-sdk').WorkflowHandle<DbosRunSummary>> {
    const { DBOS } = this.dbos;
    return DBOS.startWorkflow(this.workflow, { workflowID: options.runId, queueName: this.queue })(options.runId, input);
  }

  /** Tells the run's waiting workflow that an answer came: it checks the store at once instead of at its next poll. */
  async notify(runId: string): Promise<void> {
    await this.dbos.DBOS.send(runId, { runId }, ANSWER_TOPIC);
  }

  /** An observer for the coordinator of a process where DBOS runs: every settled call of a run notifies that run's workflow. */
  observer(): SuspensionObserver {
    return {
      onSettled: (call) => {
        if (call.runId !== undefined) void this.notify(call.runId).catch(() => undefined); // the poll still finds it
      },
    };
  }

  private async body(runId: string, input: string): Promise<DbosRunSummary> {
    const { DBOS } = this.dbos;
    let summary = await DBOS.runStep(() => this.drive(runId, input), { name: 'toolnexus.drive' });
    while (summary.status === 'halted') {
      let answered = false;
      while (!answered) {
        await DBOS.recv(ANSWER_TOPIC, { timeoutSeconds: await DBOS.runStep(() => this.waitSeconds(summary), { name: 'toolnexus.wait' }) });
        answered = await DBOS.runStep(() => this.answered(summary.pendingIds ?? []), { name: 'toolnexus.answered' });
      }
      summary = await DBOS.runStep(() => this.drive(runId, input), { name: 'toolnexus.drive' });
    }
    return summary;
  }

  /** Moves the run on from its checkpoint: starts it, takes over a driver that died, or continues a halt whose questions were answered. */
  private async drive(runId: string, input: string): Promise<DbosRunSummary> {
    const checkpoint = await this.runs.loadRun(runId);
    if (checkpoint === undefined) return summaryOf(await this.runner.run(input, { runId }));
    const phase = (checkpoint.state as Partial<RunState>).phase;
    if (phase === 'running' || phase === 'failed') return summaryOf(await this.runner.recover(runId, { force: true }));
    if (phase === 'halted') {
      try {
        return summaryOf(await this.runner.continue(runId));
      } catch (error) {
        if (error instanceof InvalidResumeError) return summaryOfCheckpoint((await this.runs.loadRun(runId)) ?? checkpoint);
        throw error;
      }
    }
    return summaryOfCheckpoint(checkpoint);
  }

  /** True when none of the run's questions waits: each is settled, and so is each next link it asked. */
  private async answered(pendingIds: readonly string[]): Promise<boolean> {
    for (const id of pendingIds) {
      let call: SuspendedCall | undefined = await this.store.get(id);
      while (call?.status !== undefined && call.next !== undefined && isSettled(call)) call = await this.store.get(call.next);
      if (call !== undefined && !isSettled(call)) return false;
    }
    return true;
  }

  /** Until the next look at the store: the poll, or less when a request expires sooner (then the coordinator settles it expired). */
  private async waitSeconds(summary: DbosRunSummary): Promise<number> {
    let seconds = this.pollSeconds;
    const now = Date.now();
    for (const id of summary.pendingIds ?? []) {
      const expiresAt = (await this.store.get(id))?.request.expiresAt;
      if (expiresAt !== undefined) seconds = Math.min(seconds, Math.max(1, Math.ceil((Date.parse(expiresAt) - now) / 1000)));
    }
    return seconds;
  }
}

function isSettled(call: SuspendedCall): boolean {
  return call.status !== 'pending' && call.status !== 'resolving';
}

function summaryOf(result: RunResult): DbosRunSummary {
  if (result.status === 'halted') return { runId: result.runId, status: 'halted', pendingIds: result.pendings.map((p) => p.id) };
  return result.status === 'done'
    ? { runId: result.runId, status: 'done', text: result.text }
    : { runId: result.runId, status: result.status };
}

function summaryOfCheckpoint(checkpoint: RunCheckpoint): DbosRunSummary {
  const state = checkpoint.state as Partial<RunState>;
  if (state.phase === 'halted') {
    const pendingIds = (state.halted?.calls ?? []).flatMap((call) => (call.pendingId === undefined ? [] : [call.pendingId]));
    return { runId: checkpoint.runId, status: 'halted', pendingIds };
  }
  if (state.phase === 'done')
    return { runId: checkpoint.runId, status: 'done', text: typeof state.text === 'string' ? state.text : undefined };
  return { runId: checkpoint.runId, status: state.stop?.status ?? 'incomplete' };
}
