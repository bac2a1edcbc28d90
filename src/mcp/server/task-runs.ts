import { randomUUID } from 'node:crypto';
import { ProtocolError } from '@modelcontextprotocol/server';
import { messageOf } from '../../errors/message';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { McpInputResponseError, McpRequestStateError, McpTaskNotFoundError } from './errors';
import type { McpInputRequest } from './input-round';
import type { ModernCall, ModernCallResult } from './mrtr';
import type { McpCallResult } from './results';
import { cancelTask, taskOf, updateTask, type McpTask, type McpTaskError, type TaskView } from './tasks';

/** The JSON-RPC code of a request the client did not declare it can answer (SEP-2575). */
export const MISSING_CAPABILITY = -32021;
const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;
const POLL_INTERVAL_MS = 1000;

/** How long a call may run before it becomes a task, and how many such tasks a server keeps, for how long. */
export interface TaskRunSettings {
  /** A call of a task-taking client still running after this many ms becomes a task (`working`). */
  afterMs: number;
  /** How long a task that ran here is kept after its last change (its `ttlMs`). */
  keepMs: number;
  /** At most this many such tasks at once: past it, a call answers when it ends, as without tasks. */
  maxTasks: number;
  clock: { now(): number };
}

type RunState =
  | { status: 'working' }
  /** The call suspended: the task follows the suspension, kept by the coordinator's store. */
  | { status: 'suspended'; suspension: string }
  /** The tool asked an input round: the answers so far, and the state to run it again with. */
  | { status: 'input_required'; inputRequests: Record<string, McpInputRequest>; answers: Record<string, unknown>; requestState?: string }
  | { status: 'completed'; result: McpCallResult }
  | { status: 'failed'; error: McpTaskError }
  | { status: 'cancelled' };

interface TaskRun {
  id: string;
  call: ModernCall;
  createdAt: number;
  updatedAt: number;
  controller: AbortController;
  state: RunState;
  /** Runs the call (again, with answers): the same path a `tools/call` takes. */
  serve: (call: ModernCall) => Promise<ModernCallResult>;
}

/** What a `tools/call` that became a task answers: the task, flat (SEP-2663 `CreateTaskResult`). */
export type CreatedTask = { resultType: 'task'; content: [] } & Omit<McpTask, 'result' | 'error' | 'inputRequests'>;

/**
 * The tasks of calls that were still running when they had to answer (docs/mcp.md, "Tasks"):
 * the SEP's server-directed task creation. A call of a client that takes tasks runs; one that
 * ends (or asks an input round, or suspends) within `afterMs` answers as it would without
 * tasks, one still running then answers a `working` task and goes on in the background, with
 * its own signal (cancelled by `tasks/cancel`). When it ends the task is `completed` with its
 * result, `failed` with the JSON-RPC error it raised, `input_required` with the input round it
 * asked (answered key by key through `tasks/update`, then run again with every answer), or it
 * follows the suspension it raised, which the coordinator's store keeps. Such a task lives in
 * this server's memory until it suspends: one per serveMcp, never shared between processes.
 */
export class TaskRuns {
  private readonly runs = new Map<string, TaskRun>();

  constructor(
    private readonly coordinator: ResumeCoordinator,
    private readonly settings: TaskRunSettings,
  ) {}

  /**
   * Serves `call` through `serve`, as a task when it is still running after `afterMs`. The call
   * runs with a signal of its own, aborted with the request's until it becomes a task.
   */
  async serve(call: ModernCall, serve: (call: ModernCall) => Promise<ModernCallResult>): Promise<ModernCallResult | CreatedTask> {
    this.evict();
    const controller = new AbortController();
    const request = call.ctx.signal;
    const abort = (): void => controller.abort(request?.reason);
    request?.addEventListener('abort', abort, { once: true });
    const own: ModernCall = { ...call, ctx: { ...call.ctx, signal: controller.signal } };
    const running = serve(own);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), this.settings.afterMs)));
    try {
      const first = await Promise.race([running, late]);
      if (first !== 'late' || this.runs.size >= this.settings.maxTasks) return first === 'late' ? await running : first;
    } finally {
      clearTimeout(timer);
      request?.removeEventListener('abort', abort);
    }
    const now = this.settings.clock.now();
    const run: TaskRun = {
      id: `tsk-${randomUUID()}`,
      call: own,
      createdAt: now,
      updatedAt: now,
      controller,
      state: { status: 'working' },
      serve,
    };
    this.runs.set(run.id, run);
    this.follow(run, running);
    const { status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = this.shown(run);
    const task = { taskId: run.id, status, createdAt, lastUpdatedAt, ttlMs, ...(pollIntervalMs ? { pollIntervalMs } : {}) };
    return { resultType: 'task', content: [], ...task, ...(statusMessage ? { statusMessage } : {}) };
  }

  /** Whether `taskId` is a task of this server's runs (else it may be a suspension's). */
  has(taskId: unknown): boolean {
    return typeof taskId === 'string' && this.runs.has(taskId);
  }

  /** `tasks/get` of a run: its state, or the suspension it follows as the store has it. */
  async get(taskId: string, view: TaskView): Promise<McpTask> {
    const run = this.own(taskId, view);
    if (run.state.status !== 'suspended') return this.shown(run);
    const followed = await taskOf(this.coordinator, run.state.suspension, view);
    return { ...followed, taskId: run.id, createdAt: iso(run.createdAt), ttlMs: followed.ttlMs ?? this.settings.keepMs };
  }

  /**
   * `tasks/update` of a run: answers to its input round are kept key by key (a key not asked,
   * or answered already, is ignored); with the last one the call runs again with them all.
   */
  async update(taskId: string, inputResponses: unknown, view: TaskView): Promise<void> {
    const run = this.own(taskId, view);
    const { state } = run;
    if (state.status === 'suspended') return updateTask(this.coordinator, state.suspension, inputResponses, view);
    if (state.status !== 'input_required') return;
    if (typeof inputResponses !== 'object' || inputResponses === null || Array.isArray(inputResponses))
      throw new McpInputResponseError('inputResponses must be an object keyed as inputRequests are');
    for (const [key, value] of Object.entries(inputResponses as Record<string, unknown>))
      if (key in state.inputRequests && !(key in state.answers) && value !== undefined) state.answers[key] = value;
    run.updatedAt = this.settings.clock.now();
    if (Object.keys(state.inputRequests).some((key) => !(key in state.answers))) return;
    // The tool reads the answers off its context, as on a retry of the round; the state is opened again.
    const given = { ...state.answers };
    const mcp = { ...run.call.ctx.mcp, inputResponses: given };
    delete mcp.requestState;
    const again: ModernCall = { ...run.call, inputResponses: given, ctx: { ...run.call.ctx, mcp } };
    if (state.requestState === undefined) delete again.requestState;
    else again.requestState = state.requestState;
    run.state = { status: 'working' };
    this.follow(run, run.serve(again));
  }

  /** `tasks/cancel` of a run: a running call's signal is aborted and the task is `cancelled`; a settled one is left as it is. */
  async cancel(taskId: string, view: TaskView): Promise<void> {
    const run = this.own(taskId, view);
    if (run.state.status === 'suspended') return cancelTask(this.coordinator, run.state.suspension, view);
    if (run.state.status !== 'working' && run.state.status !== 'input_required') return;
    run.state = { status: 'cancelled' };
    run.updatedAt = this.settings.clock.now();
    run.controller.abort(new Error('the task was cancelled'));
  }

  private follow(run: TaskRun, running: Promise<ModernCallResult>): void {
    running.then(
      (result) => this.settle(run, result),
      (error: unknown) => this.settleAs(run, { status: 'failed', error: errorOf(error) }),
    );
  }

  private settle(run: TaskRun, result: ModernCallResult): void {
    if (!('resultType' in result)) return this.settleAs(run, { status: 'completed', result });
    if (result.suspension !== undefined) return this.settleAs(run, { status: 'suspended', suspension: result.suspension });
    const inputRequests = result.inputRequests ?? {};
    const missing = missingCapabilities(inputRequests, run.call.ctx.mcp.clientCapabilities);
    if (missing)
      return this.settleAs(run, {
        status: 'failed',
        error: {
          code: MISSING_CAPABILITY,
          message: `the tool asks what the client did not declare it can answer: ${Object.keys(missing).join(', ')}`,
          data: { requiredCapabilities: missing },
        },
      });
    this.settleAs(run, {
      status: 'input_required',
      inputRequests,
      answers: {},
      ...(result.requestState !== undefined ? { requestState: result.requestState } : {}),
    });
  }

  private settleAs(run: TaskRun, state: RunState): void {
    // A cancelled task stays cancelled: what its call did after the abort is not told.
    if (run.state.status === 'cancelled') return;
    run.state = state;
    run.updatedAt = this.settings.clock.now();
  }

  private shown(run: TaskRun): McpTask {
    const task: McpTask = {
      taskId: run.id,
      status: 'working',
      createdAt: iso(run.createdAt),
      lastUpdatedAt: iso(run.updatedAt),
      ttlMs: this.settings.keepMs,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    const { state } = run;
    if (state.status === 'completed') return { ...task, status: 'completed', result: state.result };
    if (state.status === 'failed') return { ...task, status: 'failed', statusMessage: state.error.message, error: state.error };
    if (state.status === 'cancelled') return { ...task, status: 'cancelled', statusMessage: 'cancelled' };
    if (state.status === 'input_required') {
      const open = Object.entries(state.inputRequests).filter(([key]) => !(key in state.answers));
      return { ...task, status: 'input_required', statusMessage: 'input', inputRequests: Object.fromEntries(open) };
    }
    return task;
  }

  /** The caller's own run: another principal's is "not found", as one that does not exist. */
  private own(taskId: string, view: TaskView): TaskRun {
    const run = this.runs.get(taskId);
    if (!run || run.call.by.id !== view.by.id) throw new McpTaskNotFoundError();
    return run;
  }

  /** Drops tasks unchanged for more than `keepMs` (a running one is kept: its call still runs). */
  private evict(): void {
    const now = this.settings.clock.now();
    for (const [id, run] of this.runs) {
      if (run.state.status !== 'working' && now - run.updatedAt > this.settings.keepMs) this.runs.delete(id);
    }
  }
}

/** What a client must have declared to be asked each kind of input request (SEP-2322). */
const NEEDS: Record<string, string> = { 'elicitation/create': 'elicitation', 'sampling/createMessage': 'sampling', 'roots/list': 'roots' };

/** The capabilities `requests` need that `declared` lacks, as `requiredCapabilities`; `undefined` when none. */
export function missingCapabilities(
  requests: Record<string, McpInputRequest>,
  declared: Record<string, unknown> | undefined,
): Record<string, object> | undefined {
  const missing: Record<string, object> = {};
  for (const request of Object.values(requests)) {
    const needed = NEEDS[request.method];
    if (needed !== undefined && declared?.[needed] === undefined) missing[needed] = {};
  }
  return Object.keys(missing).length > 0 ? missing : undefined;
}

/** A run's rejection as the JSON-RPC error a `tools/call` would have answered. */
function errorOf(error: unknown): McpTaskError {
  if (error instanceof McpRequestStateError || error instanceof McpInputResponseError)
    return { code: INVALID_PARAMS, message: error.message, data: { reason: error.code } };
  if (error instanceof ProtocolError)
    return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
  return { code: INTERNAL_ERROR, message: messageOf(error) };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
