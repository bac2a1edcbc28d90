import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import { failure } from '../../results/helpers';
import type { ToolResult } from '../../results/wire';
import { systemClock, type Clock } from '../../timing/clock';
import { sleep } from '../../timing/sleep';
import type { ToolContext } from '../../toolkit/context';
import { RECONNECT_ATTEMPTS, type Connection, type Connections } from './connection';
import { isConnectionLost, isDroppedSession, said } from './failures';
import type { InputRequired } from './input-required';
import type { SourceSettings } from './options';
import { fromMcpResult } from './results';
import { ANY_RESULT, offersTasks, readTask, TaskCatcher, type RemoteTask } from './tasks';

/** JSON-RPC's invalid params: SEP-2663's answer for a task id the server does not know (or no longer: expired). */
const INVALID_PARAMS = -32602;
/** The first wait before polling a task whose server suggests none; each wait after it is longer by {@link BACKOFF}. */
const FIRST_POLL_MS = 1000;
const BACKOFF = 1.5;
/** The shortest wait between two polls, whatever a server suggests (a `pollIntervalMs` of 0 is not a busy loop). */
const MIN_POLL_MS = 100;
/** The longest wait between two polls, unless the source's `tasks.maxPollIntervalMs` says otherwise. */
const MAX_POLL_MS = 30_000;
/** Most rounds of input one task is answered in process before following it fails (as for MRTR round trips). */
const MAX_INPUT_ROUNDS = 10;
/** Most answered input keys kept with a suspension, so a later poll showing them again does not ask again. */
const MAX_ANSWERED_KEPT = 100;
/** How long a best-effort `tasks/cancel` may take when the call gives up on its task. */
const CANCEL_TIMEOUT_MS = 5_000;

/** One call following its task: where it goes, what every `tasks/*` request carries, and who answers what it asks. */
export interface TaskSite {
  connection: Connection;
  tool: string;
  ctx: ToolContext | undefined;
  /** The `_meta` of every `tasks/*` request: the per-request capabilities, the extension declared (the server checks it). */
  meta: Record<string, unknown>;
  /**
   * Answers what an `input_required` task asks (the keys not answered yet): the responses at
   * once (in process), or the call's result, a suspension that keeps the task id.
   */
  answer(
    asked: InputRequired,
    task: { taskId: string; answered: string[] },
  ): Promise<{ inputResponses: Record<string, unknown> } | { result: ToolResult }>;
}

/**
 * A remote server's tasks, followed for the calls of a source that takes them (docs/mcp.md,
 * "Tasks, as a client"): polled with `tasks/get` at the server's `pollIntervalMs` (or a
 * backoff) on the source's clock, for at most the call's timeout between two answers, until
 * `completed` (the tool's result), `failed`, `cancelled` or gone; what it asks is answered
 * through {@link TaskSite.answer}, and the answers sent by `tasks/update`.
 */
export class RemoteTasks {
  private readonly catchers = new WeakMap<Client, TaskCatcher>();
  private readonly clock: Clock;
  private readonly maxPollMs: number;

  constructor(
    private readonly settings: SourceSettings,
    private readonly connections: Connections,
  ) {
    const options = typeof settings.tasks === 'object' ? settings.tasks : {};
    this.clock = options.clock ?? systemClock;
    this.maxPollMs = options.maxPollIntervalMs ?? MAX_POLL_MS;
  }

  /** Whether a call to this server declares the extension: the source takes tasks and the server offers them (2026-07-28). */
  declares(connection: Connection): boolean {
    if (this.settings.tasks === undefined || this.settings.tasks === false) return false;
    return connection.client.getProtocolEra() === 'modern' && offersTasks(connection.client);
  }

  /** The catcher of tasks on the connection's current client, put in place before its first call that declares them. */
  catcher(connection: Connection): TaskCatcher | undefined {
    const client = connection.client;
    if (!client.transport) return undefined;
    let catcher = this.catchers.get(client);
    if (!catcher) {
      catcher = new TaskCatcher(client.transport);
      this.catchers.set(client, catcher);
    }
    return catcher;
  }

  /** The replay of a call suspended on a task's input: the answers sent by `tasks/update` (once), then the task followed. */
  async resume(site: TaskSite, taskId: string, inputResponses: Record<string, unknown>, answered: string[]): Promise<ToolResult> {
    await this.request(site, 'tasks/update', { taskId, inputResponses });
    const polled = await this.get(site, taskId);
    if ('result' in polled) return polled.result;
    return this.follow(site, polled.task, [...answered, ...Object.keys(inputResponses)]);
  }

  /** Follows `task` until it ends, asking what it asks through the site; never waits past the call's timeout between two answers. */
  async follow(site: TaskSite, task: RemoteTask, answered: string[] = []): Promise<ToolResult> {
    const { taskId } = task;
    const name = `MCP server ${site.connection.name}, tool ${site.tool}`;
    const timeoutMs = this.connections.timeoutOf(site.connection);
    let deadline = this.clock.now() + timeoutMs;
    let backoff = FIRST_POLL_MS;
    let rounds = 0;
    let current = task;
    for (;;) {
      const ended = endOf(current, name, this.settings.maxOutputChars);
      if (ended) return ended;
      const open = current.status === 'input_required' ? unanswered(current.inputRequests, answered) : undefined;
      if (open) {
        if (++rounds > MAX_INPUT_ROUNDS)
          return failure(`${name}: its task ${taskId} still asks for input after ${MAX_INPUT_ROUNDS} rounds`);
        const next = await site.answer({ inputRequests: open }, { taskId, answered: answered.slice(-MAX_ANSWERED_KEPT) });
        if ('result' in next) return next.result;
        await this.request(site, 'tasks/update', { taskId, inputResponses: next.inputResponses });
        answered = [...answered, ...Object.keys(next.inputResponses)];
        // The time a person took to answer is not the server's: the wait for the task starts again.
        deadline = this.clock.now() + timeoutMs;
      } else {
        const now = this.clock.now();
        if (now >= deadline) {
          await this.cancel(site, taskId);
          return failure(
            `${name}: its task ${taskId} was still ${current.status} after ${timeoutMs} ms, so this call stopped following it ` +
              'and asked the server to cancel it (it may still finish)',
          );
        }
        const suggested = current.pollIntervalMs ?? backoff;
        backoff = Math.min(backoff * BACKOFF, this.maxPollMs);
        try {
          await sleep(Math.min(Math.max(suggested, MIN_POLL_MS), this.maxPollMs, deadline - now), site.ctx?.signal, this.clock);
        } catch (error) {
          // The call was cancelled (its run was): the server is told, as the extension asks, with tasks/cancel.
          await this.cancel(site, taskId);
          throw error;
        }
      }
      const polled = await this.get(site, taskId);
      if ('result' in polled) return polled.result;
      current = polled.task;
    }
  }

  /** `tasks/get`: the task, or the call's result when the server no longer knows it (expired, purged) or answers no task. */
  private async get(site: TaskSite, taskId: string): Promise<{ task: RemoteTask } | { result: ToolResult }> {
    const name = `MCP server ${site.connection.name}, tool ${site.tool}`;
    let answer: unknown;
    try {
      answer = await this.request(site, 'tasks/get', { taskId });
    } catch (error) {
      // SEP-2663: an unknown or expired task id is -32602; the task is gone, and with it its result.
      if (error instanceof ProtocolError && error.code === INVALID_PARAMS)
        return {
          result: failure(`${name}: its task ${taskId} is no longer known to the server (it expired or was removed): ${said(error)}`),
        };
      throw error;
    }
    const task = readTask(answer);
    if (!task || task.taskId !== taskId) return { result: failure(`${name}: tasks/get for ${taskId} did not answer that task`) };
    return { task };
  }

  /** Tells the server this call gives up on the task; cooperative, so nothing waits on it long and nothing it says matters. */
  private async cancel(site: TaskSite, taskId: string): Promise<void> {
    const timeout = Math.min(this.connections.timeoutOf(site.connection), CANCEL_TIMEOUT_MS);
    await site.connection.client
      .request({ method: 'tasks/cancel', params: { taskId, _meta: site.meta } }, ANY_RESULT, { timeout })
      .catch(() => undefined);
  }

  /**
   * One `tasks/*` request. A lost connection is opened again and the request sent again:
   * `tasks/get` changes nothing, and a `tasks/update` answers keys the server takes once and
   * ignores after (SEP-2663: a key is never reused within a task).
   */
  private async request(site: TaskSite, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const signal = site.ctx?.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        return await site.connection.client.request({ method, params: { ...params, _meta: site.meta } }, ANY_RESULT, {
          timeout: this.connections.timeoutOf(site.connection),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        if (attempt >= RECONNECT_ATTEMPTS || !(isConnectionLost(error) || isDroppedSession(error))) throw error;
        await this.connections.reconnect(site.connection);
      }
    }
  }
}

/** The call's result once the task has ended; undefined while it goes on. */
function endOf(task: RemoteTask, name: string, maxOutputChars: number): ToolResult | undefined {
  const message = task.statusMessage !== undefined ? `: ${task.statusMessage}` : '';
  switch (task.status) {
    case 'completed':
      // A tool error is a completed task with an error result (SEP-2663), passed on as it came.
      return task.result
        ? fromMcpResult(task.result, maxOutputChars)
        : failure(`${name}: its task ${task.taskId} completed without a result`);
    case 'failed': {
      const error = typeof task.error?.message === 'string' ? ` (${task.error.message.slice(0, 2000)})` : '';
      return failure(`${name}: its task ${task.taskId} failed${message}${error}`);
    }
    case 'cancelled':
      return failure(`${name}: its task ${task.taskId} was cancelled${message}`);
    default:
      return undefined;
  }
}

/** The input requests whose keys have not been answered yet; undefined when there is none (the task is waiting on its own). */
function unanswered(asked: RemoteTask['inputRequests'], answered: string[]): InputRequired['inputRequests'] | undefined {
  const open = Object.fromEntries(Object.entries(asked ?? {}).filter(([key]) => !answered.includes(key)));
  return Object.keys(open).length > 0 ? open : undefined;
}
