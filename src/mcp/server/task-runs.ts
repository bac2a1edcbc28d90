import { randomUUID } from 'node:crypto';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { HeldLease } from '../../suspension/lease';
import { systemClock, type Clock } from '../../timing/clock';
import { mcpTaskStoreOf, type LoadedMcpTask, type McpTaskRecord, type McpTaskStatus, type McpTaskStore } from '../../stores/mcp-tasks';
import { MemoryMcpTasks } from '../../stores/memory/mcp-tasks';
import { McpInputResponseError, McpTaskNotFoundError } from './errors';
import type { ModernCall, ModernCallResult } from './mrtr';
import { cancelTask, taskOf, updateTask, type McpTask, type TaskView } from './tasks';
import {
  errorOf,
  INTERNAL_ERROR,
  iso,
  LAPSED_MESSAGE,
  MISSING_CAPABILITY,
  missingCapabilities,
  shownTask,
  stateOf,
  type TaskState,
} from './task-records';

/** How long a call may run before it becomes a task, and how many such tasks a server keeps, for how long. */
export interface TaskRunSettings {
  /** A call of a task-taking client still running after this many ms becomes a task (`working`). */
  afterMs: number;
  /** How long a task that ran here is kept after its last change (its `ttlMs`). */
  keepMs: number;
  /** At most this many tasks running in this process at once: past it, a call answers when it ends, as without tasks. */
  maxTasks: number;
  /** How long a `working` task is held without a renewal before a reader takes its process for dead. */
  leaseMs: number;
  /** Time; its timers (when it has them) pace the lease's renewals, else the system's do. */
  clock: { now(): number } | Clock;
}

/** Runs a call (again, with answers): the same path a `tools/call` takes. */
type Serve = (call: ModernCall) => Promise<ModernCallResult>;

/** A call this process runs as a task now: its signal, its lease, the version it last saved. */
interface LiveRun {
  record: McpTaskRecord;
  controller: AbortController;
  lease: HeldLease;
}

/** What a call that became a task answers: the task, flat (SEP-2663 `CreateTaskResult`). */
export type CreatedTask = { resultType: 'task'; content: [] } & Omit<McpTask, 'result' | 'error' | 'inputRequests'>;

const CAS_TRIES = 5;
/** The prefix of every task id {@link TaskRuns} gives. */
const TASK_PREFIX = 'tsk-';
const PRUNE_BATCH = 1000;

/**
 * The tasks of calls that were still running when they had to answer (docs/mcp.md, "Tasks"):
 * the SEP's server-directed task creation. A call of a client that takes tasks runs; one that
 * ends (or asks an input round, or suspends) within `afterMs` answers as it would without
 * tasks, one still running then is recorded as a `working` task, answered, and goes on in the
 * background with its own signal. When it ends the task is `completed` with its result,
 * `failed` with the JSON-RPC error it raised, `input_required` with the input round it asked
 * (answered key by key through `tasks/update`, then run again with every answer), or it
 * follows the suspension it raised.
 *
 * Each task is a record in the coordinator's store when the store keeps them
 * ({@link McpTaskStore}; the built-in ones do), so every server process on the store answers
 * for it; else in this process's memory. While it runs, this process holds a lease on it,
 * renewed every third of `leaseMs`: a reader that finds the lease lapsed (the process died)
 * records it `failed`, once; a `tasks/cancel` served elsewhere is seen at the next renewal
 * and aborts the call's signal.
 */
export class TaskRuns {
  private readonly store: McpTaskStore;
  private readonly timers: Clock;
  /** The calls this process runs as tasks now. */
  private readonly live = new Map<string, LiveRun>();
  /** The calls of input rounds asked here, for a tool whose arguments no store keeps (`@Sensitive` ones). */
  private readonly rounds = new Map<string, { call: ModernCall; requestState?: string; at: number; answers?: Record<string, unknown> }>();
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly coordinator: ResumeCoordinator,
    private readonly settings: TaskRunSettings,
    /** How a call of `tool` is served, for a round answered in another process than the one that asked it. */
    private readonly serveOf: (tool: string) => Serve | undefined,
  ) {
    const clock = settings.clock;
    this.store = mcpTaskStoreOf(coordinator.store) ?? new MemoryMcpTasks(() => clock.now());
    this.timers = 'setTimeout' in clock && 'clearTimeout' in clock ? clock : systemClock;
  }

  /**
   * Serves `call` through `serve`, as a task when it is still running after `afterMs`. The call
   * runs with a signal of its own, aborted with the request's until it becomes a task.
   */
  async serve(call: ModernCall, serve: Serve): Promise<ModernCallResult | CreatedTask> {
    this.prune();
    const controller = new AbortController();
    const request = call.ctx.signal;
    const abort = (): void => controller.abort(request?.reason);
    request?.addEventListener('abort', abort, { once: true });
    const own: ModernCall = { ...call, ctx: { ...call.ctx, signal: controller.signal } };
    const running = serve(own);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.settings.afterMs)));
    let created: McpTaskRecord | undefined;
    try {
      const first = await Promise.race([running, late]);
      if (first !== 'late') return first;
      if (this.live.size >= this.settings.maxTasks) return await running;
      // Recorded before it is answered: a client polls only a task some process can read.
      created = await this.create(call);
      if (!created) return await running;
    } finally {
      clearTimeout(timer);
      request?.removeEventListener('abort', abort);
    }
    this.hold(created, controller, running, own);
    const { status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = shownTask(created, this.settings.keepMs);
    const task = { taskId: created.taskId, status, createdAt, lastUpdatedAt, ttlMs, ...(pollIntervalMs ? { pollIntervalMs } : {}) };
    return { resultType: 'task', content: [], ...task, ...(statusMessage ? { statusMessage } : {}) };
  }

  /**
   * Whether `taskId` names a task of a call that did not suspend (else it may be a suspension's):
   * by its prefix, which {@link TaskRuns.create} gives each (a suspension's is `pnd-`), so a poll
   * reads the store once, in the method that serves it; one with no record is "not found" there.
   */
  has(taskId: unknown): taskId is string {
    return typeof taskId === 'string' && taskId.startsWith(TASK_PREFIX);
  }

  /** `tasks/get` of a run: its state, or the suspension it follows as the store has it. */
  async get(taskId: string, view: TaskView): Promise<McpTask> {
    const record = await this.own(taskId, view);
    const state = stateOf(record);
    if (record.status !== 'suspended' || state.suspension === undefined) return shownTask(record, this.settings.keepMs);
    const followed = await taskOf(this.coordinator, state.suspension, view);
    return { ...followed, taskId: record.taskId, createdAt: record.createdAt, ttlMs: followed.ttlMs ?? this.settings.keepMs };
  }

  /**
   * `tasks/update` of a run: answers to its input round are kept key by key (a key not asked,
   * or answered already, is ignored); with the last one the call runs again with them all, here.
   */
  async update(taskId: string, inputResponses: unknown, view: TaskView): Promise<void> {
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const record = await this.own(taskId, view);
      const state = stateOf(record);
      if (record.status === 'suspended' && state.suspension !== undefined)
        return updateTask(this.coordinator, state.suspension, inputResponses, view);
      if (record.status !== 'input_required') return;
      if (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))
        throw new McpInputResponseError('inputResponses must be an object keyed as inputRequests are');
      const asked = state.inputRequests ?? {};
      // A round of a call with @Sensitive arguments (none stored) is held in the memory of the
      // process that asked it, and so are its answers so far: the row says only which keys are in.
      const held = state.args === undefined;
      const round = this.rounds.get(taskId);
      const answers = { ...state.answers, ...round?.answers };
      const answered = new Set([...(state.answered ?? []), ...Object.keys(answers)]);
      for (const [key, value] of Object.entries(inputResponses as Record<string, unknown>))
        if (key in asked && !answered.has(key) && value !== undefined) {
          answers[key] = value;
          answered.add(key);
        }
      // Not the last answer, unless the round is held in another process's memory (which fails below, as a last one would).
      if (Object.keys(asked).some((key) => !answered.has(key)) && (!held || round)) {
        if (!round) {
          if (await this.save(record, 'input_required', { ...state, answers })) return;
          continue;
        }
        if (await this.save(record, 'input_required', { ...state, answered: [...answered] })) {
          round.answers = answers;
          return;
        }
        continue;
      }
      // The last answer: the call runs again here, with them all, as a round's retry would.
      const again = this.callAgain(record, state, answers, view);
      if (!again) {
        const error = {
          code: INTERNAL_ERROR,
          message: `the arguments of this call of ${state.tool} hold @Sensitive values, which no store keeps: only the server process that asked the round could run it again, and it is not this one`,
        };
        if (await this.save(record, 'failed', { tool: state.tool, error })) return;
        continue;
      }
      const working = this.next(record, 'working', { tool: state.tool });
      if (!(await this.store.saveMcpTask(working, this.settings.leaseMs))) continue;
      this.rounds.delete(taskId);
      const controller = new AbortController();
      const call: ModernCall = { ...again.call, ctx: { ...again.call.ctx, signal: controller.signal } };
      this.hold(working, controller, again.serve(call), call);
      return;
    }
  }

  /**
   * `tasks/cancel` of a run: the task is `cancelled` in the store, and the call's signal is
   * aborted (here at once, in the process running it at its next renewal); a settled one is left as it is.
   */
  async cancel(taskId: string, view: TaskView): Promise<void> {
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const record = await this.own(taskId, view);
      const state = stateOf(record);
      if (record.status === 'suspended' && state.suspension !== undefined) return cancelTask(this.coordinator, state.suspension, view);
      if (record.status !== 'working' && record.status !== 'input_required') return;
      if (!(await this.save(record, 'cancelled', { tool: state.tool }))) continue;
      this.rounds.delete(taskId);
      const live = this.live.get(taskId);
      if (live) this.release(live, new Error('the task was cancelled'));
      return;
    }
  }

  private async create(call: ModernCall): Promise<McpTaskRecord | undefined> {
    const now = iso(this.settings.clock.now());
    const record: McpTaskRecord = {
      taskId: `${TASK_PREFIX}${randomUUID()}`,
      owner: call.by.id,
      status: 'working',
      version: 1,
      createdAt: now,
      updatedAt: now,
      state: { tool: call.name },
    };
    try {
      return (await this.store.saveMcpTask(record, this.settings.leaseMs)) ? record : undefined;
    } catch {
      // The store cannot record it: the call answers when it ends, as without tasks.
      return undefined;
    }
  }

  /** Holds the lease of `record` while `running` runs, then records how it ended. */
  private hold(record: McpTaskRecord, controller: AbortController, running: Promise<ModernCallResult>, call: ModernCall): void {
    const lease = new HeldLease(
      () => this.store.renewMcpTask(record.taskId, record.version, this.settings.leaseMs),
      () => new Error('the task was cancelled, or its lease lapsed: what the call does now is not told'),
      this.settings.leaseMs,
      undefined,
      this.timers,
    );
    const live: LiveRun = { record, controller, lease };
    this.live.set(record.taskId, live);
    // The store changed under the lease (a cancel served elsewhere, a reader that took this process for dead).
    lease.cancellation.onAbort((reason) => void this.lost(live, reason));
    running.then(
      (result) => void this.settle(live, result, call).catch(() => undefined),
      (error: unknown) => void this.end(live, 'failed', { tool: call.name, error: errorOf(error) }).catch(() => undefined),
    );
  }

  private async lost(live: LiveRun, reason: unknown): Promise<void> {
    const now = await this.store.loadMcpTask(live.record.taskId).catch(() => undefined);
    this.release(live, now?.status === 'cancelled' ? new Error('the task was cancelled') : reason);
  }

  private release(live: LiveRun, reason: unknown): void {
    live.lease.stop();
    if (this.live.get(live.record.taskId) === live) this.live.delete(live.record.taskId);
    live.controller.abort(reason);
  }

  private async settle(live: LiveRun, result: ModernCallResult, call: ModernCall): Promise<void> {
    const tool = call.name;
    if (!('resultType' in result)) return this.end(live, 'completed', { tool, result });
    if (result.suspension !== undefined) return this.end(live, 'suspended', { tool, suspension: result.suspension });
    const inputRequests = result.inputRequests ?? {};
    const missing = missingCapabilities(inputRequests, call.ctx.mcp.clientCapabilities);
    if (missing) {
      const message = `the tool asks what the client did not declare it can answer: ${Object.keys(missing).join(', ')}`;
      return this.end(live, 'failed', { tool, error: { code: MISSING_CAPABILITY, message, data: { requiredCapabilities: missing } } });
    }
    const state: TaskState = { tool, inputRequests, answers: {} };
    const requestState = typeof result.requestState === 'string' ? { requestState: result.requestState } : {};
    // The arguments (and the round's state, which digests them) go to the store only when nothing
    // in them is @Sensitive: then any process may run the call again; else only this one can.
    if (JSON.stringify(this.coordinator.toolkit.redact(tool, call.args)) === JSON.stringify(call.args))
      Object.assign(state, { args: call.args, ...requestState });
    else this.rounds.set(live.record.taskId, { call, ...requestState, at: this.settings.clock.now() });
    return this.end(live, 'input_required', state);
  }

  /** Records how a run ended, unless the store moved on (a cancelled task stays cancelled; a lapsed one stays failed). */
  private async end(live: LiveRun, status: McpTaskStatus, state: TaskState): Promise<void> {
    live.lease.stop();
    if (this.live.get(live.record.taskId) === live) this.live.delete(live.record.taskId);
    if (live.lease.lost) return;
    await this.save(live.record, status, state);
  }

  /** The call to run again with every answer: the one asked here, else one made of the stored arguments. */
  private callAgain(
    record: McpTaskRecord,
    state: TaskState,
    answers: Record<string, unknown>,
    view: TaskView,
  ): { call: ModernCall; serve: Serve } | undefined {
    const serve = this.serveOf(state.tool);
    const round = this.rounds.get(record.taskId);
    const asked = round?.call;
    if (!serve || (!asked && state.args === undefined)) return undefined;
    const requestState = round ? round.requestState : state.requestState;
    const base: ModernCall = asked ?? { name: state.tool, args: state.args ?? {}, by: view.by, support: view.support, ctx: view.ctx };
    // The tool reads the answers off its context, as on a retry of the round; the state is opened again.
    const mcp = { ...base.ctx.mcp, inputResponses: answers };
    delete mcp.requestState;
    const again: ModernCall = { ...base, inputResponses: answers, ctx: { ...base.ctx, mcp } };
    if (requestState === undefined) delete again.requestState;
    else again.requestState = requestState;
    return { call: again, serve };
  }

  /** The caller's own task, a lapsed `working` one recorded `failed` first: another principal's is "not found". */
  private async own(taskId: string, view: TaskView): Promise<LoadedMcpTask> {
    for (let tries = 0; tries < CAS_TRIES; tries++) {
      const record = await this.store.loadMcpTask(taskId);
      if (!record || record.owner !== view.by.id) throw new McpTaskNotFoundError();
      if (!record.lapsed) return record;
      const error = { code: INTERNAL_ERROR, message: LAPSED_MESSAGE };
      // Once: of the readers that find it lapsed, one writes it; the others read what was written.
      await this.save(record, 'failed', { tool: stateOf(record).tool, error });
    }
    throw new McpTaskNotFoundError();
  }

  private next(record: McpTaskRecord, status: McpTaskStatus, state: TaskState): McpTaskRecord {
    const { taskId, owner, createdAt, version } = record;
    return {
      taskId,
      owner,
      createdAt,
      status,
      version: version + 1,
      updatedAt: iso(this.settings.clock.now()),
      state: state as unknown as Record<string, unknown>,
    };
  }

  private save(record: McpTaskRecord, status: McpTaskStatus, state: TaskState): Promise<boolean> {
    return this.store.saveMcpTask(this.next(record, status, state));
  }

  /** Drops tasks nobody holds unchanged for more than `keepMs`, in the store, at most once a tenth of it. */
  private prune(): void {
    const now = this.settings.clock.now();
    if (now - this.prunedAt < Math.min(this.settings.keepMs / 10, 60_000)) return;
    this.prunedAt = now;
    for (const [id, round] of this.rounds) if (now - round.at > this.settings.keepMs) this.rounds.delete(id);
    void this.store.pruneMcpTasks(iso(now - this.settings.keepMs), PRUNE_BATCH).catch(() => undefined);
  }
}
