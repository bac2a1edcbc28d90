import { InvalidArgumentError } from '../errors';
import { toJson } from '../suspension/json';
import { parseStored } from './rows';
import { StoreSessions } from './sessions';
import type { SteeringQueue, SteerQueued, StoredSteer } from '../runner/core/store';

/**
 * An A2A task as the A2A server keeps it beside its run (docs/a2a.md, "Listing and push"): whose
 * it is (for `tasks/list`), and, as JSON the server owns, its push configs and the outbox of
 * notifications not yet delivered. Saved by version compare-and-set, like a run checkpoint.
 */
export interface A2ATaskRecord {
  taskId: string;
  /** The id of the principal who started the task. */
  owner: string;
  contextId: string;
  /** RFC 3339: when the task was first seen. */
  createdAt: string;
  /** Starts at 1 and grows by one with every save. */
  version: number;
  /** The A2A server's JSON (push configs, the outbox). */
  state: Record<string, unknown>;
  /** Epoch ms of the earliest notification due to be sent; absent when none is. */
  dueAt?: number;
  /**
   * While the task has push configs and its owner was not yet told of an end: the version of
   * the task's run checkpoint its push state was last brought up to (0 before any). A run whose
   * checkpoint moved past it (continued by another process: the inbox, the CLI, `answerAs`) is
   * listed by {@link A2ATaskStore.listA2AMoved}. Absent when nothing is watched.
   */
  watch?: number;
}

/** One page of a principal's tasks: oldest first, after the task `after` names. */
export interface A2ATaskPage {
  owner: string;
  /** 1 to 1000. */
  limit: number;
  after?: { createdAt: string; taskId: string };
}

/**
 * Where the A2A server keeps its task records: the three built-in stores implement it, in the
 * same file or schema as the runs (schema step 4). Rules every implementation follows: records
 * round-trip as JSON, a save is a compare-and-set on `version` (1 inserts) that exactly one of
 * concurrent savers wins.
 */
export interface A2ATaskStore {
  loadA2ATask(taskId: string): Promise<A2ATaskRecord | undefined>;
  /** False on a version conflict (or an insert of a task id that exists). */
  saveA2ATask(record: A2ATaskRecord): Promise<boolean>;
  /** A principal's tasks, oldest first (by `createdAt`, then id). */
  listA2ATasks(page: A2ATaskPage): Promise<A2ATaskRecord[]>;
  /** Tasks with a notification due at or before `dueBefore` (epoch ms), the earliest first, at most `limit`. */
  listA2ADue(dueBefore: number, limit: number): Promise<A2ATaskRecord[]>;
  /**
   * Watched tasks (`watch` set) whose run's checkpoint (the store's `runs`) has a version past
   * `watch`, by task id (after `after` when given, so a sweep goes round them all), at most
   * `limit`: the tasks whose state moved since the A2A server last told of them.
   */
  listA2AMoved(limit: number, after?: string): Promise<A2ATaskRecord[]>;
}

/** `store` as an {@link A2ATaskStore}, when it is one. */
export function a2aTaskStoreOf(store: unknown): A2ATaskStore | undefined {
  const candidate = store as Partial<A2ATaskStore> | undefined;
  return typeof candidate?.saveA2ATask === 'function' && typeof candidate.listA2ATasks === 'function'
    ? (candidate as A2ATaskStore)
    : undefined;
}

/** Checks a record before a store writes it. */
export function checkA2ATaskRecord(record: A2ATaskRecord): void {
  const bad = (what: string): never => {
    throw new InvalidArgumentError(`saveA2ATask: ${what}`);
  };
  if (typeof record?.taskId !== 'string' || record.taskId === '' || record.taskId.length > 200)
    bad('taskId must be a string of 1 to 200 characters');
  if (typeof record.owner !== 'string' || record.owner === '') bad('owner must be a non-empty string');
  if (typeof record.contextId !== 'string') bad('contextId must be a string');
  if (typeof record.createdAt !== 'string' || Number.isNaN(Date.parse(record.createdAt))) bad('createdAt must be RFC 3339');
  if (typeof record.state !== 'object' || record.state === null || Array.isArray(record.state)) bad('state must be an object');
  if (record.dueAt !== undefined && !Number.isSafeInteger(record.dueAt)) bad('dueAt must be epoch milliseconds');
  if (record.watch !== undefined && (!Number.isSafeInteger(record.watch) || record.watch < 0))
    bad('watch must be a run checkpoint version from 0');
}

/** Checks the limit of {@link A2ATaskStore.listA2AMoved}. */
export function checkMovedLimit(limit: number, after?: string): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new InvalidArgumentError('listA2AMoved: limit must be an integer from 1 to 1000');
  if (after !== undefined && typeof after !== 'string') throw new InvalidArgumentError('listA2AMoved: after must be a task id');
}

/** Checks a page filter. */
export function checkA2ATaskPage(page: A2ATaskPage): void {
  if (typeof page?.owner !== 'string' || page.owner === '')
    throw new InvalidArgumentError('listA2ATasks: owner must be a non-empty string');
  if (!Number.isInteger(page.limit) || page.limit < 1 || page.limit > 1000)
    throw new InvalidArgumentError('listA2ATasks: limit must be an integer from 1 to 1000');
}

/** A record as the SQL stores keep it. */
export interface A2ATaskRow {
  task_id: string;
  owner: string;
  context_id: string;
  created_at: string;
  version: number | string;
  state: string;
  due_at: number | string | null;
  watch: number | string | null;
}

/** The row a SQL store writes for `record`. */
export function a2aTaskRowOf(record: A2ATaskRecord): A2ATaskRow {
  return {
    task_id: record.taskId,
    owner: record.owner,
    context_id: record.contextId,
    created_at: record.createdAt,
    version: record.version,
    state: toJson(record.state, `the A2A task ${record.taskId}`),
    due_at: record.dueAt ?? null,
    watch: record.watch ?? null,
  };
}

/** The record a SQL store's row stands for. */
export function a2aTaskOf(row: A2ATaskRow): A2ATaskRecord {
  const record: A2ATaskRecord = {
    taskId: row.task_id,
    owner: row.owner,
    contextId: row.context_id,
    createdAt: row.created_at,
    version: Number(row.version),
    state: parseStored<Record<string, unknown>>(row.state, `the A2A task ${row.task_id}`),
  };
  if (row.due_at !== null) record.dueAt = Number(row.due_at);
  if (row.watch !== null && row.watch !== undefined) record.watch = Number(row.watch);
  return record;
}

/**
 * The session and A2A task side of a SQL store: both kept by a part of their own (each backend's
 * `sessions.ts` and `a2a-tasks.ts`), every method that part's.
 */
export abstract class StoreSessionsAndTasks extends StoreSessions implements A2ATaskStore {
  /** Keeps this store's A2A task records. */
  protected abstract readonly a2aTasks: A2ATaskStore;

  loadA2ATask(taskId: string): Promise<A2ATaskRecord | undefined> {
    return this.a2aTasks.loadA2ATask(taskId);
  }

  saveA2ATask(record: A2ATaskRecord): Promise<boolean> {
    return this.a2aTasks.saveA2ATask(record);
  }

  listA2ATasks(page: A2ATaskPage): Promise<A2ATaskRecord[]> {
    return this.a2aTasks.listA2ATasks(page);
  }

  listA2ADue(dueBefore: number, limit: number): Promise<A2ATaskRecord[]> {
    return this.a2aTasks.listA2ADue(dueBefore, limit);
  }

  listA2AMoved(limit: number, after?: string): Promise<A2ATaskRecord[]> {
    return this.a2aTasks.listA2AMoved(limit, after);
  }

  /** Keeps the messages steered into runs driven elsewhere (docs/agents.md, "Steering"). */
  protected abstract readonly steers: SteeringQueue;

  queueSteer(runId: string, steer: StoredSteer, max: number): Promise<SteerQueued> {
    return this.steers.queueSteer(runId, steer, max);
  }

  queuedSteers(runId: string, limit: number): Promise<StoredSteer[]> {
    return this.steers.queuedSteers(runId, limit);
  }

  dropSteers(runId: string, ids: readonly string[]): Promise<number> {
    return this.steers.dropSteers(runId, ids);
  }
}
