import { ProtocolError } from '@modelcontextprotocol/server';
import { messageOf } from '../../errors/message';
import type { McpTaskRecord } from '../../stores/mcp-tasks';
import { McpInputResponseError, McpRequestStateError } from './errors';
import type { McpInputRequest } from './input-round';
import type { McpCallResult } from './results';
import type { McpTask, McpTaskError } from './tasks';

/** The JSON-RPC code of a request the client did not declare it can answer (SEP-2575). */
export const MISSING_CAPABILITY = -32021;
const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
const POLL_INTERVAL_MS = 1000;

/**
 * What a task of a call that did not suspend carries in the store, by status (serveMcp's JSON in
 * {@link McpTaskRecord.state}): the tool always; the suspension it follows; the result; the
 * JSON-RPC error; or the input round and its answers so far (of a call with `@Sensitive` values,
 * only which keys are in), with, for a call without `@Sensitive` values only, its arguments and the round's sealed state, so any process may run the call again.
 */
export interface TaskState {
  tool: string;
  suspension?: string;
  result?: McpCallResult;
  error?: McpTaskError;
  inputRequests?: Record<string, McpInputRequest>;
  answers?: Record<string, unknown>;
  /** The keys answered so far of a round whose answers are held in memory (a call with `@Sensitive` arguments). */
  answered?: string[];
  requestState?: string;
  args?: Record<string, unknown>;
}

/** What the reader of a task whose process stopped renewing its lease is told, and writes. */
export const LAPSED_MESSAGE =
  'the server process running this task stopped renewing its lease (it died or hung): the call may or may not have run, in part or in whole, and what it did is not known';

/** `record`'s state as serveMcp wrote it. */
export function stateOf(record: McpTaskRecord): TaskState {
  return record.state as unknown as TaskState;
}

/** A task as `tasks/get` shows it, from its record (a `suspended` one is shown by the suspension it follows). */
export function shownTask(record: McpTaskRecord, keepMs: number): McpTask {
  const task: McpTask = {
    taskId: record.taskId,
    status: 'working',
    createdAt: record.createdAt,
    lastUpdatedAt: record.updatedAt,
    ttlMs: keepMs,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
  const state = stateOf(record);
  if (record.status === 'completed') return { ...task, status: 'completed', result: state.result ?? { content: [] } };
  if (record.status === 'failed') {
    const error = state.error ?? { code: INTERNAL_ERROR, message: 'failed' };
    return { ...task, status: 'failed', statusMessage: error.message, error };
  }
  if (record.status === 'cancelled') return { ...task, status: 'cancelled', statusMessage: 'cancelled' };
  if (record.status === 'input_required') {
    const answered = new Set([...(state.answered ?? []), ...Object.keys(state.answers ?? {})]);
    const open = Object.entries(state.inputRequests ?? {}).filter(([key]) => !answered.has(key));
    return { ...task, status: 'input_required', statusMessage: 'input', inputRequests: Object.fromEntries(open) };
  }
  return task;
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
export function errorOf(error: unknown): McpTaskError {
  if (error instanceof McpRequestStateError || error instanceof McpInputResponseError)
    return { code: INVALID_PARAMS, message: error.message, data: { reason: error.code } };
  if (error instanceof ProtocolError)
    return { code: error.code, message: error.message, ...(error.data !== undefined ? { data: error.data } : {}) };
  return { code: INTERNAL_ERROR, message: messageOf(error) };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
