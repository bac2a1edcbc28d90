import { answerAs } from '../../runner/answer-as';
import { approvalsOf, quorumOf } from '../../suspension/quorum';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { SuspendedCall } from '../../suspension/store';
import { McpTaskNotFoundError } from './errors';
import { answerRetry, waitingRequests, type ModernCall, type MrtrSettings } from './mrtr';
import { toMcpResult, type McpCallResult } from './results';
import { pendingOf } from '../../results/helpers';

/** The tasks extension's name, as clients declare it in `_meta` capabilities (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Whether a served tool's suspended call may become a task (the tasks extension, SEP-2663):
 * `never` answers MRTR round trips only, `allowed` (the default) makes a task for a client
 * that declared the extension, `always` refuses a client that did not (`-32021`).
 */
export type McpTaskSupport = 'never' | 'allowed' | 'always';

/** A task as `tasks/get` shows it (SEP-2663 `Task`, with what its status carries). */
export interface McpTask {
  taskId: string;
  status: 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, unknown>;
  result?: McpCallResult;
}

const POLL_INTERVAL_MS = 2000;

/** Whether the request's client declared the tasks extension. */
export function takesTasks(capabilities: Record<string, unknown> | undefined): boolean {
  const extensions = capabilities?.extensions as Record<string, unknown> | undefined;
  return extensions?.[TASKS_EXTENSION] !== undefined;
}

/**
 * The task a suspended call is (docs/mcp.md, "Tasks"): the task id is the suspension's id, the
 * task was recorded durably before the call answered, and its state is the store's, so any
 * server process on the store answers for it. Only the principal that made the call sees it:
 * anyone else gets "not found", as for a task that does not exist.
 *
 * @throws {@link McpTaskNotFoundError} no such task, or another principal's.
 */
export async function taskOf(coordinator: ResumeCoordinator, taskId: unknown, view: TaskView): Promise<McpTask> {
  const { first, current } = await ownTask(coordinator, taskId, view.by);
  const task: McpTask = {
    taskId: first.request.id,
    status: 'working',
    createdAt: first.createdAt,
    lastUpdatedAt: current.updatedAt ?? current.createdAt,
    ttlMs: ttlOf(current, view.settings.clock.now()),
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  if (current.status === 'pending') {
    task.status = 'input_required';
    task.statusMessage = statusOf(current);
    const waiting = await waitingRequests(coordinator, callOf(current, view), view.settings, current);
    if ('inputRequests' in waiting && waiting.inputRequests) task.inputRequests = waiting.inputRequests;
    return task;
  }
  if (current.status === 'cancelled') return { ...task, status: 'cancelled', statusMessage: 'cancelled' };
  if (current.outcome === undefined) return { ...task, statusMessage: `the call is ${current.status}` };
  // Expired and declined calls end with the tool result the model is told (isError), as the extension says.
  return { ...task, status: 'completed', result: toMcpResult(current.outcome, coordinator.toolkit.get(current.tool)?.outputSchema) };
}

/** `tasks/update`: the task's own principal answers what is asked of them, through the one answer path. */
export async function updateTask(coordinator: ResumeCoordinator, taskId: unknown, inputResponses: unknown, view: TaskView): Promise<void> {
  const { current } = await ownTask(coordinator, taskId, view.by);
  if (current.status !== 'pending') return;
  const responses = typeof inputResponses === 'object' && inputResponses !== null ? (inputResponses as Record<string, unknown>) : {};
  const call = { ...callOf(current, view), inputResponses: responses };
  await answerRetry(coordinator, call, current);
}

/** `tasks/cancel`: a cancel answer, judged by the answer policy like any other. */
export async function cancelTask(coordinator: ResumeCoordinator, taskId: unknown, view: TaskView): Promise<void> {
  const { current } = await ownTask(coordinator, taskId, view.by);
  if (current.status !== 'pending') return;
  await answerAs(coordinator, { id: current.request.id, ok: false, reason: 'cancelled' }, { by: view.by, context: view.ctx });
}

/** Who asks about a task, and how this server asks its questions. */
export interface TaskView {
  by: Principal;
  settings: MrtrSettings;
  support: ModernCall['support'];
  ctx: ModernCall['ctx'];
}

function callOf(stored: SuspendedCall, view: TaskView): ModernCall {
  return { name: stored.tool, args: (stored.args ?? {}) as Record<string, unknown>, by: view.by, support: view.support, ctx: view.ctx };
}

/** The task's first link and the link it waits on now (a chain asks link by link). */
async function ownTask(
  coordinator: ResumeCoordinator,
  taskId: unknown,
  by: Principal,
): Promise<{ first: SuspendedCall; current: SuspendedCall }> {
  if (typeof taskId !== 'string' || taskId === '') throw new McpTaskNotFoundError();
  const first = await coordinator.get(taskId);
  if (!first || first.requestedBy?.id !== by.id) throw new McpTaskNotFoundError();
  let current = first;
  for (let hops = 0; hops < 100; hops++) {
    const next = current.next ?? (current.outcome ? pendingOf(current.outcome)?.id : undefined);
    const linked = next === undefined ? undefined : await coordinator.get(next);
    if (!linked) break;
    current = linked;
  }
  return { first, current };
}

function ttlOf(call: SuspendedCall, now: number): number | null {
  if (call.request.expiresAt === undefined || call.status !== 'pending') return null;
  return Math.max(0, Date.parse(call.request.expiresAt) - now);
}

/** What the task waits for: `approval 1 of 2 (finance:ann, finance:ben)` for a quorum, `approval` otherwise. */
function statusOf(call: SuspendedCall): string {
  const quorum = quorumOf(call.request);
  if (!quorum) return `waiting for ${call.request.kind}`;
  const signed = approvalsOf(call.signatures).length;
  const who = quorum.from ? ` (${quorum.from.join(', ')})` : '';
  return `waiting for ${call.request.kind} ${signed} of ${quorum.of}${who}`;
}
