import { answerAs } from '../../runner/answer-as';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import type { SuspendedCall } from '../../suspension/store';
import { McpTaskNotFoundError } from './errors';
import { answerRetry, progressOf, requestKey, waitingRequests, type ModernCall, type MrtrSettings } from './mrtr';
import { toMcpResult, type McpCallResult } from './results';
import { pendingOf } from '../../results/helpers';

/** The tasks extension's name, as clients declare it in `_meta` capabilities (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * Whether a served tool's call may become a task (the tasks extension, SEP-2663): `never`
 * answers MRTR round trips only, `allowed` (the default) makes a task for a client that
 * declared the extension when the call suspends or is still running after serveMcp's
 * `taskAfterMs`, `always` does the same and refuses a client that did not declare it (`-32021`).
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
  /** A `failed` task's JSON-RPC error (the extension keeps `failed` for those; a tool's error is a `completed` result). */
  error?: McpTaskError;
}

/** The JSON-RPC error a `failed` task carries (SEP-2663 `DetailedTask.error`). */
export interface McpTaskError {
  code: number;
  message: string;
  data?: unknown;
}

const POLL_INTERVAL_MS = 2000;
const TASK_METHODS = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/**
 * Why an HTTP request of `tasks/get`, `tasks/update` or `tasks/cancel` is refused before it is
 * served: its `Mcp-Name` header names another task than its `params.taskId` (SEP-2663 extends
 * SEP-2243's routing headers to these methods; a mismatch is `-32020`, HTTP 400). A request
 * without the header is served: the SDK's own client (2.4.0) sends none for these methods.
 */
export function taskNameMismatch(body: unknown, mcpName: string | undefined): { message: string; id: string | number | null } | undefined {
  if (mcpName === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, params, id } = body as { method?: unknown; params?: { taskId?: unknown }; id?: unknown };
  if (typeof method !== 'string' || !TASK_METHODS.has(method)) return undefined;
  // RFC 9110 §5.5: a field value's surrounding whitespace is not part of it.
  if (mcpName.trim() === params?.taskId) return undefined;
  return { message: 'the Mcp-Name header does not match params.taskId', id: typeof id === 'string' || typeof id === 'number' ? id : null };
}

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
  const { first, current } = await expiredIfDue(coordinator, await ownTask(coordinator, taskId, view.by), view);
  const task: McpTask = {
    taskId: first.request.id,
    status: 'working',
    createdAt: first.createdAt,
    lastUpdatedAt: current.updatedAt ?? current.createdAt,
    ttlMs: ttlOf(first, current),
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  if (current.status === 'pending') {
    task.status = 'input_required';
    task.statusMessage = progressOf(current);
    const waiting = await waitingRequests(coordinator, callOf(current, view), view.settings, current);
    if ('inputRequests' in waiting && waiting.inputRequests) task.inputRequests = waiting.inputRequests;
    return task;
  }
  if (current.status === 'cancelled') return { ...task, status: 'cancelled', statusMessage: 'cancelled' };
  if (current.outcome === undefined) return { ...task, statusMessage: `the call is ${current.status}` };
  // Expired and declined calls end with the tool result the model is told (isError): the extension's
  // `failed` is for JSON-RPC errors only, and a tool error is `completed` with its result.
  const result = toMcpResult(current.outcome, coordinator.toolkit.get(current.tool)?.outputSchema);
  const said = current.status === 'expired' || current.status === 'declined' ? { statusMessage: current.status } : {};
  return { ...task, status: 'completed', ...said, result };
}

/** `tasks/update`: the task's own principal answers what is asked of them, through the one answer path. */
export async function updateTask(coordinator: ResumeCoordinator, taskId: unknown, inputResponses: unknown, view: TaskView): Promise<void> {
  const { current } = await expiredIfDue(coordinator, await ownTask(coordinator, taskId, view.by), view);
  if (current.status !== 'pending') return;
  const responses = typeof inputResponses === 'object' && inputResponses !== null ? (inputResponses as Record<string, unknown>) : {};
  // A key not outstanding now (answered, superseded by a signature, never issued) is ignored, as the extension says.
  if (responses[requestKey(current)] === undefined) return;
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

/**
 * A task whose call waits past its `expiresAt` is settled `expired` by the coordinator's sweep
 * before it is shown, so it never reads `input_required` after its TTL, whether or not a sweep
 * runs on a timer: by the store's clock, as every process sharing the store judges expiry.
 */
async function expiredIfDue(
  coordinator: ResumeCoordinator,
  task: { first: SuspendedCall; current: SuspendedCall },
  view: TaskView,
): Promise<{ first: SuspendedCall; current: SuspendedCall }> {
  const { current } = task;
  if (current.status !== 'pending' || current.request.expiresAt === undefined) return task;
  const { store } = coordinator;
  const now = typeof store.now === 'function' ? await store.now() : view.settings.clock.now();
  if (Date.parse(current.request.expiresAt) > now) return task;
  await coordinator.sweep();
  return ownTask(coordinator, task.first.request.id, view.by);
}

/** The extension's `ttlMs`, from the task's creation to when the call it waits on expires; null when it never does. */
function ttlOf(first: SuspendedCall, current: SuspendedCall): number | null {
  if (current.request.expiresAt === undefined) return null;
  return Math.max(0, Date.parse(current.request.expiresAt) - Date.parse(first.createdAt));
}
