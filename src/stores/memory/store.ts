import { MemoryRunStore } from '../../runner/durability/memory';
import { MemoryDeliveries } from '../../deliveries/memory';
import type { DeliveryStore } from '../../deliveries/store';
import { MemorySessionStore } from '../../sessions/memory';
import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../../sessions/store';
import type { StreamLogStore, StreamSlice } from '../../sessions/stream-log';
import type { MemorySuspensionStoreOptions } from '../../suspension/memory';
import type { PrunableStore, PruneOptions, PruneReport } from '../../runner/durability/retention';
import { cutoffMsOf, cutoffOf, pruneInBatches, type PruneTable } from '../retention';
import type { A2ATaskPage, A2ATaskRecord, A2ATaskStore } from '../a2a-tasks';
import { MemoryA2ATasks } from './a2a-tasks';
import type { LoadedMcpTask, McpTaskRecord, McpTaskStore } from '../mcp-tasks';
import { MemoryMcpTasks } from './mcp-tasks';

/** Options of {@link MemoryStore}. */
export type MemoryStoreOptions = MemorySuspensionStoreOptions;

/**
 * Keeps suspended calls, run checkpoints and sessions in this process's memory: one store
 * for a coordinator and a runner, for hosts that resolve in the same process and tests.
 * Nothing survives a restart; use {@link SqliteStore} (or a Postgres store) for that.
 *
 * It joins the in-memory part of each job, each beside its interface: the suspension store
 * (a `ResumeCoordinator`'s default), the run store it extends and the session store it
 * holds. Values are stored as JSON copies, so it behaves exactly like a durable store: what
 * comes back is what JSON can carry, and callers cannot mutate what is stored. Leases, and
 * the claim's instant that expiry is judged by, are read from `options.clock` (the system
 * clock by default), the only clock its callers share; tests pass a fake one. After
 * `close`, every method rejects with `StoreError`, sessions' included.
 */
export class MemoryStore extends MemoryRunStore implements SessionStore, StreamLogStore, PrunableStore, A2ATaskStore, McpTaskStore {
  private readonly sessions = new MemorySessionStore(() => new Date(this.clock.now()).toISOString());
  private readonly a2aTasks = new MemoryA2ATasks((runId) => this.runVersion(runId));

  async loadA2ATask(taskId: string): Promise<A2ATaskRecord | undefined> {
    this.assertOpen();
    return this.a2aTasks.loadA2ATask(taskId);
  }

  async saveA2ATask(record: A2ATaskRecord): Promise<boolean> {
    this.assertOpen();
    return this.a2aTasks.saveA2ATask(record);
  }

  async listA2ATasks(page: A2ATaskPage): Promise<A2ATaskRecord[]> {
    this.assertOpen();
    return this.a2aTasks.listA2ATasks(page);
  }

  async listA2ADue(dueBefore: number, limit: number): Promise<A2ATaskRecord[]> {
    this.assertOpen();
    return this.a2aTasks.listA2ADue(dueBefore, limit);
  }
  // MCP tasks (docs/mcp.md, "Tasks"): leases by this store's clock, as its claims are.
  private readonly mcpTasks = new MemoryMcpTasks(() => this.clock.now());

  async loadMcpTask(taskId: string): Promise<LoadedMcpTask | undefined> {
    this.assertOpen();
    return this.mcpTasks.loadMcpTask(taskId);
  }

  async saveMcpTask(record: McpTaskRecord, leaseMs?: number): Promise<boolean> {
    this.assertOpen();
    return this.mcpTasks.saveMcpTask(record, leaseMs);
  }

  async renewMcpTask(taskId: string, version: number, leaseMs: number): Promise<boolean> {
    this.assertOpen();
    return this.mcpTasks.renewMcpTask(taskId, version, leaseMs);
  }

  async pruneMcpTasks(updatedBefore: string, limit: number): Promise<number> {
    this.assertOpen();
    return this.mcpTasks.pruneMcpTasks(updatedBefore, limit);
  }

  async listA2AMoved(limit: number, after?: string): Promise<A2ATaskRecord[]> {
    this.assertOpen();
    return this.a2aTasks.listA2AMoved(limit, after);
  }
  private readonly cards = new MemoryDeliveries();
  /** The cards channels posted for pending calls (docs/channels.md). */
  readonly deliveries: DeliveryStore = this.cards;

  async loadSession(id: string): Promise<StoredSession | undefined> {
    this.assertOpen();
    return this.sessions.loadSession(id);
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    this.assertOpen();
    return this.sessions.saveSession(session);
  }

  async listSessions(filter?: SessionFilter): Promise<SessionSummary[]> {
    this.assertOpen();
    return this.sessions.listSessions(filter);
  }

  async deleteSession(id: string): Promise<boolean> {
    this.assertOpen();
    return this.sessions.deleteSession(id);
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    this.assertOpen();
    return this.sessions.sessionOfRun(runId);
  }

  async openStream(runId: string, sessionId: string): Promise<number> {
    this.assertOpen();
    return this.sessions.openStream(runId, sessionId);
  }

  async appendStream(runId: string, at: number, parts: readonly string[], next: number, end: boolean): Promise<void> {
    this.assertOpen();
    return this.sessions.appendStream(runId, at, parts, next, end);
  }

  async readStream(runId: string, from: number, limit: number): Promise<StreamSlice | undefined> {
    this.assertOpen();
    return this.sessions.readStream(runId, from, limit);
  }

  /** Deletes what is older than the cut-offs given (docs/deploying.md, "Retention"), as the durable stores do. */
  async prune(options: PruneOptions): Promise<PruneReport> {
    this.assertOpen();
    return pruneInBatches(options, (checked) => this.pruneSteps(checked));
  }

  private pruneSteps(options: PruneOptions): PruneTable[] {
    const steps: PruneTable[] = [];
    const table = <C extends string | number>(
      name: PruneTable['table'],
      key: string,
      cutoff: C | undefined,
      rows: (cutoff: C) => object[],
      remove: (key: string, cutoff: C) => boolean,
    ): void => {
      if (cutoff === undefined) return;
      steps.push({
        table: name,
        key,
        select: (limit) => Promise.resolve(rows(cutoff).slice(0, limit) as Array<Record<string, unknown>>),
        remove: (keys) => Promise.resolve(keys.filter((k) => remove(k, cutoff)).length),
      });
    };
    const finished = cutoffOf(options.finishedBefore, 'finishedBefore');
    const finishedMs = cutoffMsOf(options.finishedBefore, 'finishedBefore');
    table(
      'suspensions',
      'id',
      cutoffOf(options.settledBefore, 'settledBefore'),
      (at) => this.prunableCalls(at).map((call) => ({ id: call.request.id, ...call })),
      (id, at) => this.deletePrunableCall(id, at),
    );
    // A2A tasks before runs, so a task goes while its run's end still shows (a task without a run qualifies too).
    const over = (at: string) => (taskId: string) => this.runOverBefore(taskId, at);
    table(
      'a2aTasks',
      'taskId',
      finished,
      (at) => this.a2aTasks.prunableTasks(at, over(at)),
      (id, at) => this.a2aTasks.deletePrunableTask(id, at, over(at)),
    );
    table(
      'runs',
      'runId',
      finished,
      (at) => this.prunableRuns(at),
      (id, at) => this.deletePrunableRun(id, at),
    );
    table(
      'sessions',
      'id',
      cutoffOf(options.idleBefore, 'idleBefore'),
      (at) => this.sessions.prunableSessions(at),
      (id, at) => this.sessions.deletePrunableSession(id, at),
    );
    // Stream logs go with the run's retention: closed ones last written before the same cut-off.
    table(
      'streams',
      'runId',
      finished,
      (at) => this.sessions.streams.prunableStreams(at),
      (id, at) => this.sessions.streams.deletePrunableStream(id, at),
    );
    // Served calls' keys and delivered cards too, by this store's clock (epoch ms).
    table(
      'keyedCalls',
      'key',
      finishedMs,
      (at) => this.prunableKeyed(at),
      (key, at) => this.deletePrunableKeyed(key, at),
    );
    table(
      'deliveries',
      'id',
      finishedMs,
      (at) => this.cards.prunableDeliveries(at),
      (id, at) => this.cards.deletePrunableDelivery(id, at),
    );
    return steps;
  }
}
