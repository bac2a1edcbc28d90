import { InvalidArgumentError } from '../errors';
import { toJson } from '../suspension/json';
import { parseStored } from './rows';
import { StoreSessionsAndTasks } from './a2a-tasks';

/** Where a task of a served call stands (SEP-2663 statuses, and `suspended`: it follows a suspension). */
export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled' | 'suspended';

const STATUSES = new Set<string>(['working', 'input_required', 'completed', 'failed', 'cancelled', 'suspended']);

/**
 * The task of a served MCP call that was still running when it had to answer (docs/mcp.md,
 * "Tasks"), as serveMcp keeps it in the store so every server process on the store answers for
 * it: whose it is, where it stands, and, as JSON serveMcp owns, what its status carries (the
 * result, the error, the input round and its answers so far, the suspension it follows).
 * Saved by version compare-and-set; a `working` task is held by a lease of the process running it.
 */
export interface McpTaskRecord {
  taskId: string;
  /** The id of the principal who made the call: nobody else is shown the task. */
  owner: string;
  status: McpTaskStatus;
  /** Starts at 1 and grows by one with every save. */
  version: number;
  /** RFC 3339: when the task was made. */
  createdAt: string;
  /** RFC 3339: when its state last changed. */
  updatedAt: string;
  /** serveMcp's JSON: what the status carries. */
  state: Record<string, unknown>;
}

/** A record as loaded: with whether it is `working` under a lease that lapsed, by the store's clock. */
export interface LoadedMcpTask extends McpTaskRecord {
  /** True when the task is `working` and its process has not renewed its lease in time (it died, or hung). */
  lapsed: boolean;
}

/**
 * Where serveMcp keeps its tasks of calls that did not suspend (docs/mcp.md, "Tasks"): the three
 * built-in stores implement it, in the same file or schema as the suspended calls (schema step 4).
 * A store without it keeps serveMcp's tasks in the serving process's memory. Rules every
 * implementation follows: records round-trip as JSON; a save is a compare-and-set on `version`
 * (1 inserts) that exactly one of concurrent savers wins; leases are judged by the store's clock.
 */
export interface McpTaskStore {
  loadMcpTask(taskId: string): Promise<LoadedMcpTask | undefined>;
  /**
   * Saves `record` when its version follows the stored one (1: a task id not stored yet); false,
   * and nothing changes, otherwise. With `leaseMs`, the saver holds the task for that long from
   * the store's now; without, nobody holds it. Owner and creation are the first save's.
   */
  saveMcpTask(record: McpTaskRecord, leaseMs?: number): Promise<boolean>;
  /**
   * Extends the lease of a `working` task still at `version` to `leaseMs` from the store's now;
   * false (and nothing changes) once it was saved since (cancelled, failed as lapsed, settled).
   */
  renewMcpTask(taskId: string, version: number, leaseMs: number): Promise<boolean>;
  /**
   * Deletes up to `limit` tasks last changed before `updatedBefore` (RFC 3339) that nobody holds
   * (not `working`, or `working` under a lapsed lease); returns how many went.
   */
  pruneMcpTasks(updatedBefore: string, limit: number): Promise<number>;
}

/** `store` as an {@link McpTaskStore}, when it is one (a store of one's own may not be). */
export function mcpTaskStoreOf(store: unknown): McpTaskStore | undefined {
  const candidate = store as Partial<McpTaskStore> | undefined;
  return typeof candidate?.loadMcpTask === 'function' &&
    typeof candidate.saveMcpTask === 'function' &&
    typeof candidate.renewMcpTask === 'function' &&
    typeof candidate.pruneMcpTasks === 'function'
    ? (candidate as McpTaskStore)
    : undefined;
}

/** Checks a record (and a lease) before a store writes it. */
export function checkMcpTaskRecord(record: McpTaskRecord, leaseMs?: number): void {
  const bad = (what: string): never => {
    throw new InvalidArgumentError(`saveMcpTask: ${what}`);
  };
  if (typeof record?.taskId !== 'string' || record.taskId === '' || record.taskId.length > 200)
    bad('taskId must be a string of 1 to 200 characters');
  if (typeof record.owner !== 'string' || record.owner === '') bad('owner must be a non-empty string');
  if (!STATUSES.has(record.status)) bad(`status must be one of ${[...STATUSES].join(', ')}`);
  if (!Number.isSafeInteger(record.version) || record.version < 1) bad('version must be an integer from 1');
  if (typeof record.createdAt !== 'string' || Number.isNaN(Date.parse(record.createdAt))) bad('createdAt must be RFC 3339');
  if (typeof record.updatedAt !== 'string' || Number.isNaN(Date.parse(record.updatedAt))) bad('updatedAt must be RFC 3339');
  if (typeof record.state !== 'object' || record.state === null || Array.isArray(record.state)) bad('state must be an object');
  if (leaseMs !== undefined) checkLease('saveMcpTask', leaseMs);
}

/** Refuses a lease that is not a positive number of milliseconds. */
export function checkLease(what: string, leaseMs: number): void {
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs <= 0)
    throw new InvalidArgumentError(`${what}: leaseMs must be a positive number of milliseconds`);
}

/** Checks a prune's arguments. */
export function checkMcpTaskPrune(updatedBefore: string, limit: number): void {
  if (typeof updatedBefore !== 'string' || Number.isNaN(Date.parse(updatedBefore)))
    throw new InvalidArgumentError('pruneMcpTasks: updatedBefore must be RFC 3339');
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new InvalidArgumentError('pruneMcpTasks: limit must be an integer from 1 to 10000');
}

/** A record as the SQL stores keep it. */
export interface McpTaskRow {
  task_id: string;
  owner: string;
  status: string;
  version: number | string;
  created_at: string;
  updated_at: string;
  state: string;
  lapsed?: number | boolean | null;
}

/** The row a SQL store writes for `record`. */
export function mcpTaskRowOf(record: McpTaskRecord): McpTaskRow {
  return {
    task_id: record.taskId,
    owner: record.owner,
    status: record.status,
    version: record.version,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    state: toJson(record.state, `the MCP task ${record.taskId}`),
  };
}

/** The record a SQL store's row stands for. */
export function mcpTaskOf(row: McpTaskRow): LoadedMcpTask {
  return {
    taskId: row.task_id,
    owner: row.owner,
    status: row.status as McpTaskStatus,
    version: Number(row.version),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    state: parseStored<Record<string, unknown>>(row.state, `the MCP task ${row.task_id}`),
    lapsed: row.lapsed === true || Number(row.lapsed) === 1,
  };
}

/**
 * A SQL store's sessions, A2A tasks and MCP tasks: the MCP tasks kept by a part of their own
 * (each backend's `mcp-tasks.ts`), every method that part's.
 */
export abstract class StoreWithMcpTasks extends StoreSessionsAndTasks implements McpTaskStore {
  /** Keeps this store's MCP task records. */
  protected abstract readonly mcpTasks: McpTaskStore;

  loadMcpTask(taskId: string): Promise<LoadedMcpTask | undefined> {
    return this.mcpTasks.loadMcpTask(taskId);
  }

  saveMcpTask(record: McpTaskRecord, leaseMs?: number): Promise<boolean> {
    return this.mcpTasks.saveMcpTask(record, leaseMs);
  }

  renewMcpTask(taskId: string, version: number, leaseMs: number): Promise<boolean> {
    return this.mcpTasks.renewMcpTask(taskId, version, leaseMs);
  }

  pruneMcpTasks(updatedBefore: string, limit: number): Promise<number> {
    return this.mcpTasks.pruneMcpTasks(updatedBefore, limit);
  }
}
