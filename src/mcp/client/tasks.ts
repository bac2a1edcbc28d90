/**
 * A remote server's tasks (the tasks extension, `io.modelcontextprotocol/tasks`, SEP-2663), as
 * a client follows them (docs/mcp.md, "Tasks, as a client"): a `tools/call` answered with
 * `{ resultType: "task", taskId, status, ... }` is polled with `tasks/get` until it ends; what
 * it asks while `input_required` is answered like an MRTR round trip (in process, or by
 * suspending the local call with the task id kept), and the answer goes out by `tasks/update`.
 */
import { randomUUID } from 'node:crypto';
import type { Client, JSONRPCMessage, StandardSchemaV1, Transport } from '@modelcontextprotocol/client';

/** The extension's name, in per-request client capabilities and in a server's `server/discover` capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** The task statuses SEP-2663 defines; `completed`, `failed` and `cancelled` end a task. */
export type RemoteTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** A task as a server shows it (`CreateTaskResult`, or a `tasks/get` result), the fields this client reads. */
export interface RemoteTask {
  taskId: string;
  status: RemoteTaskStatus;
  statusMessage?: string;
  createdAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
  inputRequests?: Record<string, { method?: unknown; params?: unknown }>;
  result?: { content?: unknown; isError?: unknown; structuredContent?: unknown };
  error?: { code?: unknown; message?: unknown };
}

const STATUSES = new Set<string>(['working', 'input_required', 'completed', 'failed', 'cancelled']);
/** Most tasks caught and not yet taken per connection: a response the SDK dropped (a cancelled call) is not kept for ever. */
const MAX_CAUGHT = 100;
/** Most `tools/call` request ids watched per connection at once (a request that never got an answer is let go). */
const MAX_WATCHED = 1000;
/** The longest task id, status message and key list taken from a server; the rest is a server's fault. */
const MAX_TASK_ID_CHARS = 512;

/** The task a server's answer describes, or undefined when it is not one (a malformed answer is not a task). */
export function readTask(value: unknown): RemoteTask | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const raw = value as Record<string, unknown>;
  if (typeof raw.taskId !== 'string' || raw.taskId === '' || raw.taskId.length > MAX_TASK_ID_CHARS) return undefined;
  if (typeof raw.status !== 'string' || !STATUSES.has(raw.status)) return undefined;
  const task: RemoteTask = { taskId: raw.taskId, status: raw.status as RemoteTaskStatus };
  if (typeof raw.statusMessage === 'string') task.statusMessage = raw.statusMessage.slice(0, 2000);
  if (typeof raw.createdAt === 'string') task.createdAt = raw.createdAt;
  if (raw.ttlMs === null || (typeof raw.ttlMs === 'number' && Number.isFinite(raw.ttlMs))) task.ttlMs = raw.ttlMs;
  if (typeof raw.pollIntervalMs === 'number' && Number.isFinite(raw.pollIntervalMs)) task.pollIntervalMs = raw.pollIntervalMs;
  if (isObject(raw.inputRequests)) task.inputRequests = raw.inputRequests as RemoteTask['inputRequests'];
  if (isObject(raw.result)) task.result = raw.result;
  if (isObject(raw.error)) task.error = raw.error;
  return task;
}

/**
 * Catches the tasks a server answers `tools/call` with, on one client's transport. The SDK
 * (2.4.0) rejects `resultType: "task"` in its decoder and keeps nothing of the raw result, so
 * the answer is read where it arrives: the transport's `onmessage`, for the ids of the
 * `tools/call` requests this client sent. The task is kept under a random key, and the SDK is
 * handed an error result carrying only that key, which passes its checks (an error result is
 * not held to the tool's output schema); {@link taken} gives the task back. A server cannot
 * make a real result pass for a task: it does not know the key.
 */
export class TaskCatcher {
  private readonly watched = new Set<string | number>();
  private readonly caught = new Map<string, RemoteTask>();

  constructor(transport: Transport) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if ('method' in message && message.method === 'tools/call' && 'id' in message) {
        if (this.watched.size >= MAX_WATCHED) this.watched.delete(this.watched.values().next().value as string | number);
        this.watched.add(message.id);
      }
      return send(message, options);
    };
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      deliver?.call(transport, this.inbound(message), extra);
    };
  }

  /** The task a `tools/call` result stands for, taken once; undefined for any other result. */
  taken(result: unknown): RemoteTask | undefined {
    const content = (result as { content?: unknown } | null)?.content;
    const first = Array.isArray(content) ? (content[0] as { text?: unknown } | undefined) : undefined;
    if (typeof first?.text !== 'string') return undefined;
    const task = this.caught.get(first.text);
    this.caught.delete(first.text);
    return task;
  }

  private inbound(message: JSONRPCMessage): JSONRPCMessage {
    if ('method' in message || !('id' in message) || message.id === undefined || !this.watched.delete(message.id)) return message;
    if (!('result' in message)) return message;
    const result = message.result as Record<string, unknown>;
    if (result.resultType !== 'task') return message;
    const task = readTask(result);
    // Not a task after all (no id, an unknown status): the SDK refuses it as it refuses any unknown result type.
    if (!task) return message;
    const key = `toolnexus-task-${randomUUID()}`;
    if (this.caught.size >= MAX_CAUGHT) this.caught.delete(this.caught.keys().next().value as string);
    this.caught.set(key, task);
    return { ...message, result: { resultType: 'complete', content: [{ type: 'text', text: key }], isError: true } };
  }
}

/** Whether the server said, in its `server/discover` capabilities, that it offers tasks. */
export function offersTasks(client: Client): boolean {
  const extensions = (client.getServerCapabilities() as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return typeof extensions === 'object' && extensions !== null && extensions[TASKS_EXTENSION] !== undefined;
}

/** The results of `tasks/get`, `tasks/update` and `tasks/cancel`, taken as they come and read field by field. */
export const ANY_RESULT: StandardSchemaV1<unknown, Record<string, unknown>> = {
  '~standard': {
    version: 1,
    vendor: 'toolnexus',
    validate: (value) => (isObject(value) ? { value } : { issues: [{ message: 'the result is not an object' }] }),
  },
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
