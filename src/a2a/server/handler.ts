import {
  TaskState,
  type AgentCard,
  type CancelTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DefaultExecutionEventBusManager, DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import {
  AlreadyResolvedError,
  AnswerRefusedError,
  ClaimHeldError,
  InvalidAnswerError,
  InvalidArgumentError,
  UnknownSuspensionError,
} from '../../errors';
import { answerAs } from '../../runner/answer-as';
import type { AgentRunner } from '../../runner/agent-runner';
import type { Principal } from '../../suspension/audit';
import { readReply } from './answer';
import { A2ARequestError, wireError } from './errors';
import type { A2ALogger } from './options';
import { principalOf, RunExecutor } from './executor';
import { KeyedTasks } from './keyed-tasks';
import { sessionOfContext, type RunTaskStore } from './tasks';
import type { A2ATaskRecords } from './push';

/** The longest task or context id taken from a client (they name runs and sessions). */
const MAX_ID_LENGTH = 100;

/** What {@link RunRequestHandler} is built with. */
export interface RunRequestHandlerOptions {
  context?: (principal: Principal) => object;
  logger?: A2ALogger;
  maxParts: number;
  /** The task records (owners, push configs and outbox), when the store keeps A2A tasks. */
  records?: A2ATaskRecords;
  /** `A2AHandlerOptions.idempotencyRetentionMs`. */
  idempotencyRetentionMs?: number;
}

/** The most tasks one `tasks/list` page holds, and how many when the client names none. */
const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;

/**
 * The SDK's request handler with the toolnexus rules in front (docs/a2a.md): a message is
 * checked and bounded; a message on an `input-required` task is read as the answer to its
 * request and settled through `answerAs` as the authenticated principal, exactly once (the
 * store's claim decides between two replies at once: the other is refused `not_pending`),
 * before the SDK's flow continues the run; `tasks/cancel` cancels a waiting task's requests
 * through the answer policy. Everything else is the SDK's.
 */
export class RunRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    private readonly runner: AgentRunner,
    private readonly tasks: RunTaskStore,
    private readonly options: RunRequestHandlerOptions,
    // A new task's message keyed by an idempotency key starts one task per key (docs/a2a.md).
    private readonly keyed = new KeyedTasks(runner.coordinator.store, (id) => tasks.load(id), options.idempotencyRetentionMs),
  ) {
    super(
      card,
      tasks,
      new RunExecutor(runner, options.context, options.logger, options.records, (message, principal, taskId) =>
        keyed.started(message, principal, taskId),
      ),
      new DefaultExecutionEventBusManager(),
      options.records,
      options.records,
    );
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    const repeat = await this.before(params, context);
    if (repeat) return repeat;
    try {
      return await super.sendMessage(params, context);
    } finally {
      this.keyed.forget(params.message as Message, principalOf(context));
    }
  }

  override async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const repeat = await this.before(params, context);
    if (repeat) {
      yield { payload: { $case: 'task', value: repeat } };
      return;
    }
    try {
      yield* super.sendMessageStream(params, context);
    } finally {
      this.keyed.forget(params.message as Message, principalOf(context));
    }
  }

  override async cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    try {
      const task = await this.tasks.load(params.id);
      if (task?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) await this.cancelWaiting(params.id, principalOf(context));
      else if (task && task.status?.state !== TaskState.TASK_STATE_CANCELED)
        throw new A2ARequestError('not_cancelable', `task ${params.id} is not waiting for input: only a waiting task is cancelled here`);
    } catch (error) {
      throw wireError(error);
    }
    return super.cancelTask(params, context);
  }

  /**
   * The caller's own tasks, oldest first, a page at a time (`pageSize` at most 100, `pageToken`
   * the last page's `nextPageToken`); `contextId` and `status` filter a page as it is read.
   */
  override async listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const records = this.options.records;
    if (!records) throw new UnsupportedOperationError('this agent does not list tasks: its store keeps no A2A tasks');
    try {
      const size = Math.min(MAX_PAGE, Math.max(1, Math.floor(params.pageSize ?? DEFAULT_PAGE)));
      const page = await records.page(principalOf(context), size + 1, afterOf(params.pageToken));
      const more = page.length > size;
      const shown = page.slice(0, size);
      const loaded = await Promise.all(shown.map((record) => this.tasks.load(record.taskId)));
      const tasks = loaded.filter(
        (task): task is Task =>
          task !== undefined &&
          (!params.contextId || task.contextId === params.contextId) &&
          (!params.status || task.status?.state === params.status),
      );
      const last = shown[shown.length - 1];
      const nextPageToken = more && last ? Buffer.from(JSON.stringify([last.createdAt, last.taskId])).toString('base64url') : '';
      return { tasks: tasks.map((task) => ({ ...task, history: [] })), nextPageToken, pageSize: size, totalSize: tasks.length };
    } catch (error) {
      throw wireError(error);
    }
  }

  /**
   * Checks the message, and settles it when it answers a waiting task; throws the refusal as the
   * SDK's error. A new task's message whose idempotency key started a task already returns that
   * task: nothing more starts.
   */
  private async before(params: SendMessageRequest, context: ServerCallContext): Promise<Task | undefined> {
    try {
      const message = params?.message;
      if (!message || !Array.isArray(message.parts) || message.parts.length === 0)
        throw new A2ARequestError('bad_message', 'the message needs at least one part');
      if (message.parts.length > this.options.maxParts)
        throw new A2ARequestError('bad_message', `a message may carry at most ${this.options.maxParts} parts`);
      if ((message.contextId ?? '').length > MAX_ID_LENGTH || (message.taskId ?? '').length > MAX_ID_LENGTH)
        throw new A2ARequestError('bad_message', `a task or context id is at most ${MAX_ID_LENGTH} characters`);
      const principal = principalOf(context);
      if (message.taskId) await this.reply(message, principal);
      else {
        await this.checkContext(message, principal);
        return await this.keyed.repeatOf(message, principal);
      }
      return undefined;
    } catch (error) {
      throw wireError(error);
    }
  }

  /** A new task in a context busy with another is refused: its client answers that task instead. */
  private async checkContext(message: Message, principal: Principal): Promise<void> {
    if (!message.parts.some((part) => part.content?.$case === 'text' && part.content.value.trim() !== ''))
      throw new A2ARequestError('bad_message', 'a new task is asked in text: the message has no text part');
    if (!message.contextId) return;
    const session = await this.runner.sessions?.loadSession(sessionOfContext(principal, message.contextId));
    const active = session?.active;
    if (active && (active.phase === 'halted' || (active.until ?? 0) >= Date.now()))
      throw new A2ARequestError(
        'busy',
        `context ${message.contextId} has task ${active.runId} in progress: send this message with its taskId`,
      );
  }

  /** A message on a task: the answer to its open request, settled here once; or a retry of the answer that was. */
  private async reply(message: Message, principal: Principal): Promise<void> {
    const taskId = message.taskId;
    // A call whose holder died mid-replay is taken over first, under the takeover rule every door
    // applies (docs/suspension.md): the holder's recorded answer goes on (an idempotent tool
    // replays), or a `recovery` request is raised. This message answers neither: the task then
    // shows where that left it (waiting on the recovery request, or going on).
    const context = this.options.context?.(principal);
    const taken = await this.runner.coordinator.recoverLapsed({ runId: taskId, limit: 1000, ...(context ? { context } : {}) });
    if (taken.some((entry) => entry.status === 'taken')) return;
    const task = await this.tasks.load(taskId);
    // No such task, or one over: the SDK says so in its words.
    if (!task || task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
      // Answered, its continuation never begun: the answerer's retry continues it (the SDK's flow, then the executor).
      if (task?.status?.state === TaskState.TASK_STATE_WORKING && (await this.tasks.answerersOf(taskId))?.includes(principal.id)) return;
      if (task?.status?.state === TaskState.TASK_STATE_WORKING)
        throw new A2ARequestError('not_pending', `task ${taskId} is not waiting for input: its request was answered, and it is running`);
      if (task?.status?.state === TaskState.TASK_STATE_COMPLETED)
        throw new A2ARequestError('not_pending', `task ${taskId} is completed: its request was answered`);
      return;
    }
    const open = await this.runner.coordinator.store.list({ runId: taskId, status: 'pending' });
    // Read between the two: another reply answered it meanwhile.
    if (open.length === 0) throw new A2ARequestError('not_pending', `the request of task ${taskId} was answered by another reply`);
    const { answer, comment } = readReply(message, open);
    let answered;
    try {
      answered = await answerAs(this.runner.coordinator, answer, {
        by: principal,
        ...(comment ? { comment } : {}),
        ...(context ? { context } : {}),
        // Two replies at once: the claim lets one go on, the other is told at once.
        ifClaimed: 'refuse',
      });
    } catch (error) {
      throw refusalOf(error, answer.id);
    }
    if (!answered.won) throw new A2ARequestError('not_pending', `request ${answer.id} of task ${taskId} was answered by another reply`);
  }

  /** Cancels every open request of a waiting task as the principal (the answer policy decides), then runs it to its end. */
  private async cancelWaiting(taskId: string, principal: Principal): Promise<void> {
    const open = await this.runner.coordinator.store.list({ runId: taskId, status: 'pending' });
    for (const call of open) {
      try {
        await answerAs(
          this.runner.coordinator,
          { id: call.request.id, ok: false, reason: 'cancelled' },
          { by: principal, ifClaimed: 'refuse' },
        );
      } catch (error) {
        throw refusalOf(error, call.request.id);
      }
    }
    // The model is told its requests were cancelled and ends the run, so the context is free again.
    const context = this.options.context?.(principal);
    await this.runner.continue(taskId, context ? { context } : {});
  }
}

/** Where a page token says the last page ended. */
function afterOf(token: string | undefined): { createdAt: string; taskId: string } | undefined {
  if (!token) return undefined;
  try {
    const [createdAt, taskId] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof taskId === 'string') return { createdAt, taskId };
  } catch {
    // Not one of ours: refused below.
  }
  throw new A2ARequestError('bad_message', 'pageToken is not a token this agent gave');
}

/** A settle's failure as the client is told it. */
function refusalOf(error: unknown, id: string): unknown {
  if (error instanceof ClaimHeldError || error instanceof AlreadyResolvedError || error instanceof UnknownSuspensionError)
    return new A2ARequestError('not_pending', `request ${id} is being answered or was answered by another reply`);
  if (error instanceof AnswerRefusedError) return new A2ARequestError('answer_refused', error.message);
  if (error instanceof InvalidAnswerError || error instanceof InvalidArgumentError) return new A2ARequestError('bad_answer', error.message);
  return error;
}
