import { MemorySuspensionStore } from '../../suspension/memory';
import { jsonCopy } from '../../suspension/json';
import type { SuspensionStore } from '../../suspension/store';
import type { RunCheckpoint, RunListing, RunStore, SteerQueued, StaleRunFilter, StoredSteer } from '../core/store';
import { checkSteerRun, checkStoredSteer, RUNNING_PHASE, staleRunLimit, versionCanFollow } from './store-checks';

/**
 * Keeps run checkpoints in this process's memory, beside the suspended calls of the
 * in-memory suspension store it extends: the store of the coordinator an `AgentRunner`
 * makes for itself, so that coordinator's store holds the runs too, as a durable store
 * does. Checkpoints are kept as JSON copies, like everything a store keeps.
 */
export class MemoryRunStore extends MemorySuspensionStore implements RunStore {
  private readonly runs = new Map<string, RunCheckpoint>();
  /** Messages steered into runs driven elsewhere (`queueSteer`), per run in the order queued. */
  private readonly steers = new Map<string, StoredSteer[]>();

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    this.assertOpen();
    const copy = jsonCopy(checkpoint, `the checkpoint of run ${checkpoint.runId}`);
    if (!versionCanFollow(checkpoint.version)) return false;
    const stored = this.runs.get(checkpoint.runId);
    if (checkpoint.version !== (stored ? stored.version + 1 : 1)) return false;
    this.runs.set(checkpoint.runId, copy);
    return true;
  }

  async loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    this.assertOpen();
    const stored = this.runs.get(runId);
    return stored ? structuredClone(stored) : undefined;
  }

  /** The version of run `runId`'s checkpoint, `undefined` when there is none (what a watched A2A task is compared with). */
  protected runVersion(runId: string): number | undefined {
    return this.runs.get(runId)?.version;
  }

  /** Finished runs last written before `cutoff` (RFC 3339), oldest first, and the deletion of one: what `MemoryStore.prune` works through. */
  protected prunableRuns(cutoff: string): RunCheckpoint[] {
    return [...this.runs.values()]
      .filter((run) => finishedBefore(run, cutoff))
      .sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0))
      .map((run) => structuredClone(run));
  }

  protected deletePrunableRun(runId: string, cutoff: string): boolean {
    const run = this.runs.get(runId);
    if (run === undefined || !finishedBefore(run, cutoff)) return false;
    this.steers.delete(runId); // its queued messages go with it, as the SQL stores' do
    return this.runs.delete(runId);
  }

  /** True when no checkpoint of `runId` is kept, or its run finished before `cutoff` (what an A2A task's prune asks). */
  protected runOverBefore(runId: string, cutoff: string): boolean {
    const run = this.runs.get(runId);
    return run === undefined || finishedBefore(run, cutoff);
  }

  async queueSteer(runId: string, steer: StoredSteer, max: number): Promise<SteerQueued> {
    this.assertOpen();
    checkStoredSteer(runId, steer, max);
    if (!this.runs.has(runId)) return 'no-run';
    const queued = this.steers.get(runId) ?? [];
    if (queued.some((held) => held.id === steer.id)) return 'held';
    if (queued.length >= max) return 'full';
    queued.push({ id: steer.id, content: steer.content });
    this.steers.set(runId, queued);
    return 'queued';
  }

  async queuedSteers(runId: string, limit: number): Promise<StoredSteer[]> {
    this.assertOpen();
    checkSteerRun(runId, 'queuedSteers', limit);
    return (this.steers.get(runId) ?? []).slice(0, limit).map((steer) => ({ ...steer }));
  }

  async dropSteers(runId: string, ids: readonly string[]): Promise<number> {
    this.assertOpen();
    checkSteerRun(runId, 'dropSteers', ids);
    const queued = this.steers.get(runId);
    if (!queued) return 0;
    const kept = queued.filter((steer) => !ids.includes(steer.id));
    if (kept.length > 0) this.steers.set(runId, kept);
    else this.steers.delete(runId);
    return queued.length - kept.length;
  }

  async listStaleRuns(filter: StaleRunFilter): Promise<RunListing[]> {
    this.assertOpen();
    const limit = staleRunLimit(filter);
    return [...this.runs.values()]
      .filter((run) => run.state.phase === RUNNING_PHASE && run.updatedAt < filter.updatedBefore)
      .sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0))
      .slice(0, limit)
      .map((run) => ({ runId: run.runId, version: run.version, updatedAt: run.updatedAt }));
  }
}

function finishedBefore(run: RunCheckpoint, cutoff: string): boolean {
  return run.updatedAt < cutoff && run.state.phase !== RUNNING_PHASE && run.state.phase !== 'halted';
}

/**
 * Where a runner without `runs` keeps its checkpoints: the coordinator's store when it is a
 * run store too; a {@link MemoryRunStore} of its own when that store is an in-memory
 * suspension store that keeps none (a coordinator built with its default store); otherwise
 * the store as it is, for the runner to refuse.
 */
export function runStoreOf(store: SuspensionStore): Partial<RunStore> | undefined {
  const runs = store as Partial<RunStore> | undefined;
  const keepsRuns = typeof runs?.saveRun === 'function' && typeof runs.loadRun === 'function';
  return !keepsRuns && store instanceof MemorySuspensionStore ? new MemoryRunStore() : runs;
}
