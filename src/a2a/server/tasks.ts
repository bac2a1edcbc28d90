import { TaskState, type ListTasksRequest, type ListTasksResponse, type Task } from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { TaskStore } from '@a2a-js/sdk/server';
import { InvalidArgumentError } from '../../errors';
import type { AgentRunner } from '../../runner/agent-runner';
import { readRunState, type RunState } from '../../runner/core/state';
import type { RunStore } from '../../runner/core/store';
import type { Principal } from '../../suspension/audit';
import { redactCall } from '../../suspension/redact';
import { answerArtifact, endOf, inputRequired, statusOf } from './parts';
import { wireError } from './errors';

const SESSION_PREFIX = 'a2a:';

/**
 * The session an A2A context is kept in: the principal's own (so nobody reaches another's
 * conversation), and read back from a run's checkpoint to name the task's context after a restart.
 */
export function sessionOfContext(principal: Principal, contextId: string): string {
  const id = `${SESSION_PREFIX}${encodeURIComponent(principal.id)}:${encodeURIComponent(contextId)}`;
  if (id.length > 200) throw new InvalidArgumentError('the principal id and context id are too long for a session id');
  return id;
}

/** The context id a session of {@link sessionOfContext} stands for. */
export function contextOfSession(session: string | undefined): string | undefined {
  if (session === undefined || !session.startsWith(SESSION_PREFIX)) return undefined;
  const last = session.slice(session.lastIndexOf(':') + 1);
  try {
    return decodeURIComponent(last);
  } catch {
    return undefined;
  }
}

/** The most tasks whose latest snapshot is held in memory (those not checkpointed yet). */
const MAX_LIVE = 1000;

/**
 * The SDK's `TaskStore` over the runner's durable stores (docs/a2a.md, "Durable tasks"): a
 * task is the run of the same id. Its state is read from the run's checkpoint and its open
 * suspensions, so any process over the same store (a restarted one included) tells it the
 * same: halted with open requests is `input-required` (the requests in its status message),
 * `running` is `working`, `done` is `completed` with the run's text as its artifact (or
 * `canceled` when one of its calls was cancelled), `failed` and `incomplete` are `failed`.
 * Until a run is checkpointed (with `durability: 'halt'`, until it first waits), the SDK's
 * latest snapshot of it is kept here, in memory, at most {@link MAX_LIVE}.
 */
export class RunTaskStore implements TaskStore {
  private readonly live = new Map<string, Task>();

  constructor(
    private readonly runner: AgentRunner,
    private readonly runs: RunStore,
  ) {}

  async load(taskId: string): Promise<Task | undefined> {
    try {
      const checkpoint = await this.runs.loadRun(taskId);
      if (!checkpoint) {
        const snapshot = this.live.get(taskId);
        return snapshot === undefined ? undefined : structuredClone(snapshot);
      }
      return await this.taskOf(taskId, readRunState(taskId, checkpoint.state), checkpoint.updatedAt);
    } catch (error) {
      throw wireError(error);
    }
  }

  /** The task as its run's checkpoint tells it, with the checkpoint's version; `undefined` before the run is checkpointed. */
  async durable(taskId: string): Promise<{ version: number; task: Task } | undefined> {
    const checkpoint = await this.runs.loadRun(taskId);
    if (!checkpoint) return undefined;
    return { version: checkpoint.version, task: await this.taskOf(taskId, readRunState(taskId, checkpoint.state), checkpoint.updatedAt) };
  }

  save(task: Task): Promise<void> {
    this.live.delete(task.id);
    this.live.set(task.id, structuredClone(task));
    if (this.live.size > MAX_LIVE) this.live.delete(this.live.keys().next().value as string);
    return Promise.resolve();
  }

  list(_params: ListTasksRequest): Promise<ListTasksResponse> {
    return Promise.reject(new UnsupportedOperationError('this agent does not list tasks: get one by its id'));
  }

  /**
   * Who answered the requests a run waited on, when every one is answered and its continuation
   * has not begun (a server died between the two, or the answers came through another front
   * end): only they may continue it by replying again. `undefined` for a run in any other state.
   */
  async answerersOf(taskId: string): Promise<string[] | undefined> {
    const checkpoint = await this.runs.loadRun(taskId);
    if (!checkpoint) return undefined;
    const state = readRunState(taskId, checkpoint.state);
    if (state.phase !== 'halted') return undefined;
    const calls = await Promise.all(
      (state.halted?.calls ?? []).flatMap((entry) => (entry.pendingId ? [this.runner.coordinator.get(entry.pendingId)] : [])),
    );
    if (calls.some((call) => call?.status === 'pending')) return undefined;
    return calls.flatMap((call) => (call?.answeredBy ? [call.answeredBy.id] : []));
  }

  /** The run's state as a task (see the class). */
  async taskOf(taskId: string, state: RunState, updatedAt: string): Promise<Task> {
    const contextId = contextOfSession(state.session) ?? taskId;
    const task: Task = { id: taskId, contextId, status: undefined, artifacts: [], history: [], metadata: undefined };
    if (state.phase === 'halted') {
      const open = await this.runner.coordinator.store.list({ runId: taskId, status: 'pending' });
      const shown = open.map((call) => redactCall(this.runner.toolkit, call));
      // Every question answered, the continuation not begun yet: it is the next message's to begin.
      task.status =
        shown.length > 0
          ? inputRequired(taskId, contextId, shown, updatedAt)
          : statusOf(TaskState.TASK_STATE_WORKING, taskId, contextId, updatedAt);
    } else if (state.phase === 'running') task.status = statusOf(TaskState.TASK_STATE_WORKING, taskId, contextId, updatedAt);
    else if (state.phase === 'done') {
      const cancelled = state.toolCalls.some((record) => record.status === 'cancelled');
      task.status = statusOf(cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED, taskId, contextId, updatedAt);
      task.artifacts = [answerArtifact(taskId, state.text, this.runner.toolkit, state.messages)];
    } else {
      const [taskState, why] = endOf(state.phase, state.stop);
      task.status = statusOf(taskState, taskId, contextId, updatedAt, why);
    }
    return task;
  }
}
