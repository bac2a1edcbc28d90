import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext, type ServerCallContext } from '@a2a-js/sdk/server';
import { ModelError, ToolnexusError } from '../../errors';
import type { AgentRunner } from '../../runner/agent-runner';
import type { RunEvent, RunResult } from '../../runner/core/types';
import type { Principal } from '../../suspension/audit';
import { redactCall } from '../../suspension/redact';
import { textOf } from './answer';
import type { A2ALogger } from './options';
import { answerArtifact, endOf, inputRequired, statusOf } from './parts';
import { sessionOfContext } from './tasks';

/** Where the transport puts the authenticated principal in the SDK's call context. */
export const PRINCIPAL_KEY = 'toolnexus.principal';

/** The principal the request was authenticated as (the HTTP layer refuses a request without one). */
export function principalOf(context: ServerCallContext): Principal {
  return context.state.get(PRINCIPAL_KEY) as Principal;
}

const now = () => new Date().toISOString();

const STDERR: A2ALogger = { error: (message) => process.stderr.write(`${message}\n`) };

/** One line for the operator: the task and the error's code (a model's provider and status), never its message. */
function logFailure(logger: A2ALogger, taskId: string, error: unknown): void {
  try {
    let line = `toolnexus a2a: task ${taskId} failed: ${error instanceof ToolnexusError ? error.code : 'an internal error'}`;
    if (error instanceof ModelError) {
      const status = (error as { status?: unknown }).status;
      line += ` (model provider ${error.provider}${typeof status === 'number' ? `, HTTP ${status}` : ''})`;
    }
    logger.error(line);
  } catch {
    // A failing logger changes nothing for the client.
  }
}

/**
 * The SDK's `AgentExecutor` over an `AgentRunner`: a task is a run of the same id. A new task
 * starts the run in the context's session on the principal's behalf; a message on a task whose
 * answers are in (the request handler settled them) continues it. The run's end is published
 * as the task's: its text as the artifact and `completed`, its open requests as
 * `input-required`, a failure as `failed` naming no error message.
 */
export class RunExecutor implements AgentExecutor {
  constructor(
    private readonly runner: AgentRunner,
    private readonly contextOf: ((principal: Principal) => object) | undefined,
    private readonly logger: A2ALogger = STDERR,
    /** Where a new task is recorded as its principal's (for `tasks/list`), when the store keeps A2A tasks. */
    private readonly records?: { own(taskId: string, owner: Principal, contextId: string): Promise<unknown> },
    /** Told as a new task starts, before its run: the idempotency key of its message now names it. */
    private readonly onNewTask?: (message: Message, principal: Principal, taskId: string) => Promise<void>,
  ) {}

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId } = request;
    const principal = principalOf(request.context);
    const context = this.contextOf?.(principal);
    if (!request.task) await this.records?.own(taskId, principal, contextId);
    const working = statusOf(TaskState.TASK_STATE_WORKING, taskId, contextId, now());
    const task: Task = request.task
      ? { ...request.task, status: working }
      : { id: taskId, contextId, status: working, artifacts: [], history: [request.userMessage], metadata: undefined };
    bus.publish(AgentEvent.task(task));
    try {
      let events: AsyncIterable<RunEvent>;
      if (!request.task) {
        await this.onNewTask?.(request.userMessage, principal, taskId);
        const session = sessionOfContext(principal, contextId);
        events = this.runner.stream(textOf(request.userMessage.parts), {
          runId: taskId,
          session,
          principal,
          ...(context ? { context } : {}),
        });
      } else if (await this.publishOpen(taskId, contextId, bus)) return;
      else events = this.runner.continueStream(taskId, context ? { context } : {});
      let result: RunResult | undefined;
      for await (const event of events) if (event.type === 'done' && event.path === undefined) result = event.result;
      await this.publishEnd(taskId, contextId, result, bus);
    } catch (error) {
      // The client learns the task failed; the error's message (which may quote the conversation) is told to no one.
      logFailure(this.logger, taskId, error);
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: statusOf(TaskState.TASK_STATE_FAILED, taskId, contextId, now(), 'the run stopped on an error'),
          metadata: undefined,
        }),
      );
    } finally {
      bus.finished();
    }
  }

  /** Cancelling is the request handler's (a task waiting for input); a running task is not cancelled here. */
  cancelTask(_taskId: string, bus: ExecutionEventBus): Promise<void> {
    bus.finished();
    return Promise.resolve();
  }

  /** Publishes `input-required` when some of the run's requests are still open; true when it did. */
  private async publishOpen(taskId: string, contextId: string, bus: ExecutionEventBus): Promise<boolean> {
    const open = await this.runner.coordinator.store.list({ runId: taskId, status: 'pending' });
    if (open.length === 0) return false;
    const shown = open.map((call) => redactCall(this.runner.toolkit, call));
    bus.publish(
      AgentEvent.statusUpdate({ taskId, contextId, status: inputRequired(taskId, contextId, shown, now()), metadata: undefined }),
    );
    return true;
  }

  private async publishEnd(taskId: string, contextId: string, result: RunResult | undefined, bus: ExecutionEventBus): Promise<void> {
    if (result?.status === 'halted') {
      if (await this.publishOpen(taskId, contextId, bus)) return;
    }
    if (result?.status !== 'done') {
      const [state, why] = endOf(result?.status, result?.stop);
      bus.publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: statusOf(state, taskId, contextId, now(), why),
          metadata: undefined,
        }),
      );
      return;
    }
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: answerArtifact(taskId, result.text, this.runner.toolkit, result.messages),
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    const cancelled = result.toolCalls.some((record) => record.status === 'cancelled');
    const state = cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_COMPLETED;
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: statusOf(state, taskId, contextId, now()), metadata: undefined }));
  }
}
