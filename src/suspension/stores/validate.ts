import { InvalidArgumentError } from '../../errors';
import { checkedResolveOptions, type HistoryFilter, type ResolveOptions } from '../audit';
import { isSettled, isSuspensionStatus } from '../status';
import type { Claim, RunCheckpoint, Settlement, StaleRunFilter, SuspendedCall, SuspensionFilter } from '../store';

/*
 * Every store checks its arguments here, before anything is read or written, so all of them
 * refuse the same mistakes with the same InvalidArgumentError message, and a refused call
 * changes nothing.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Refuses a call no store should keep: a programmer error in whoever builds it. `operation`
 * names the method in the message (`insert`, or `complete (next link)` for a settlement's next call).
 */
export function checkInsertable(call: SuspendedCall, operation = 'insert'): void {
  if (!isObject(call)) throw new InvalidArgumentError(`${operation}: the call must be an object`);
  const { request } = call;
  if (!isObject(request) || typeof request.id !== 'string' || request.id === '') {
    throw new InvalidArgumentError(`${operation}: call.request.id must be a non-empty string`);
  }
  // The message is built only when something is wrong: this runs on every recorded call.
  const refuse = (problem: string): never => {
    throw new InvalidArgumentError(`${operation}: suspension ${request.id} ${problem}`);
  };
  if (typeof request.kind !== 'string') refuse('has no string request.kind');
  if (typeof call.tool !== 'string' || call.tool === '') refuse('has no tool name');
  if (!isSuspensionStatus(call.status)) refuse(`has unknown status ${JSON.stringify(call.status)}`);
  if (!isTimestamp(call.createdAt)) refuse('has no RFC 3339 createdAt');
  for (const key of STRING_FIELDS) {
    if (call[key] !== undefined && typeof call[key] !== 'string') refuse(`has a non-string ${key}`);
  }
  if (call.leaseUntil !== undefined && !isTimestamp(call.leaseUntil)) refuse('has a leaseUntil that is not RFC 3339');
  if (call.fence !== undefined && !isFence(call.fence)) refuse('has a fence that is not a positive integer');
  if (call.chain !== undefined && !isChain(call.chain)) refuse('has a chain that is not an array of { request, answer } objects');
  if (call.answeredAt !== undefined && !isTimestamp(call.answeredAt)) refuse('has an answeredAt that is not RFC 3339');
  if (call.answeredBy !== undefined && (!isObject(call.answeredBy) || typeof call.answeredBy.id !== 'string'))
    refuse('has an answeredBy that is not a principal { id, name? }');
}

/** `claim`: the audit recorded with the answer, checked and copied (only `by.id`, `by.name`, `comment` are kept). */
export function checkAudit(audit: unknown, operation: string): ResolveOptions | undefined {
  return checkedResolveOptions(audit, operation);
}

/** `history`: an optional object of an optional settled status, kind, runId, tool and limit. */
export function checkHistoryFilter(filter: unknown): asserts filter is HistoryFilter {
  if (!isObject(filter)) throw new InvalidArgumentError('history: the filter must be an object');
  const { status, limit } = filter;
  if (status !== undefined && (!isSuspensionStatus(status) || !isSettled(status))) {
    throw new InvalidArgumentError(
      `history: ${JSON.stringify(status)} is not a settled status filter (resolved, declined, expired or cancelled)`,
    );
  }
  for (const key of ['kind', 'runId', 'tool'] as const) {
    if (filter[key] !== undefined && typeof filter[key] !== 'string')
      throw new InvalidArgumentError(`history: ${key} filter must be a string`);
  }
  if (limit !== undefined && (!Number.isSafeInteger(limit) || (limit as number) < 1))
    throw new InvalidArgumentError(
      `history: limit must be a positive integer, got ${typeof limit === 'number' ? String(limit) : JSON.stringify(limit)}`,
    );
}

const STRING_FIELDS = ['callId', 'runId', 'updatedAt', 'next', 'binding', 'comment'] as const;

/** `get`, `claim`: the id of a suspended call. */
export function checkId(id: unknown, operation: string): asserts id is string {
  if (typeof id !== 'string') throw new InvalidArgumentError(`${operation}: the suspension id must be a string`);
}

/** `claim`, `renew`: a lease is a positive, finite number of milliseconds. */
export function checkLeaseMs(leaseMs: unknown, operation: string): asserts leaseMs is number {
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs <= 0) {
    throw new InvalidArgumentError(`${operation}: leaseMs must be a positive finite number of milliseconds, got ${String(leaseMs)}`);
  }
}

/** `claim`: what is recorded as the answer must at least be an object (the coordinator checks the rest). */
export function checkAnswer(answer: unknown, operation: string): void {
  if (!isObject(answer)) throw new InvalidArgumentError(`${operation}: the answer must be an object`);
}

/** `renew`, `complete`: the claim must be shaped like one `claim()` returned; its fence is what the store compares. */
export function checkClaim(claim: unknown, operation: string): asserts claim is Claim {
  if (!isObject(claim) || typeof claim.id !== 'string' || !isFence(claim.fence)) {
    throw new InvalidArgumentError(`${operation}: the claim must be one returned by claim() (a string id and a positive integer fence)`);
  }
}

/** `complete`: a settled status, an outcome object, and, when given, a next link any store could insert. */
export function checkSettlement(settlement: unknown): asserts settlement is Settlement {
  if (!isObject(settlement)) throw new InvalidArgumentError('complete: the settlement must be an object { status, outcome, next? }');
  const { status, outcome, next } = settlement;
  if (!isSuspensionStatus(status) || !isSettled(status)) {
    throw new InvalidArgumentError(
      `complete: ${JSON.stringify(status)} is not a settled status (resolved, declined, expired or cancelled)`,
    );
  }
  if (!isObject(outcome)) throw new InvalidArgumentError('complete: the outcome must be a ToolResult object');
  if (next !== undefined) checkInsertable(next as SuspendedCall, 'complete (next link)');
}

/** `list`: an optional object of optional status / runId / kind. */
export function checkFilter(filter: unknown): asserts filter is SuspensionFilter {
  if (!isObject(filter)) throw new InvalidArgumentError('list: the filter must be an object');
  if (filter.status !== undefined && !isSuspensionStatus(filter.status)) {
    throw new InvalidArgumentError(`list: unknown status filter ${JSON.stringify(filter.status)}`);
  }
  if (filter.runId !== undefined && typeof filter.runId !== 'string') throw new InvalidArgumentError('list: runId filter must be a string');
  if (filter.kind !== undefined && typeof filter.kind !== 'string') throw new InvalidArgumentError('list: kind filter must be a string');
}

/** `loadRun`: the id of a run. */
export function checkRunId(runId: unknown, operation: string): asserts runId is string {
  if (typeof runId !== 'string') throw new InvalidArgumentError(`${operation}: runId must be a string`);
}

/**
 * `saveRun`: the checkpoint's shape. The version is not checked here: one that cannot
 * follow the stored version (0, 1.5, not a number) is a conflict, answered with `false`;
 * {@link versionCanFollow} says which.
 */
export function checkCheckpoint(checkpoint: unknown): asserts checkpoint is RunCheckpoint {
  if (!isObject(checkpoint)) throw new InvalidArgumentError('saveRun: the checkpoint must be an object');
  if (typeof checkpoint.runId !== 'string' || checkpoint.runId === '')
    throw new InvalidArgumentError('saveRun: runId must be a non-empty string');
  if (typeof checkpoint.updatedAt !== 'string') throw new InvalidArgumentError('saveRun: updatedAt must be an RFC 3339 string');
  if (!isObject(checkpoint.state)) throw new InvalidArgumentError('saveRun: state must be an object');
}

/** True for a version some stored checkpoint could be followed by (a positive safe integer). */
export function versionCanFollow(version: unknown): version is number {
  return Number.isSafeInteger(version) && (version as number) >= 1;
}

function isTimestamp(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}

function isFence(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

function isChain(value: unknown): boolean {
  return Array.isArray(value) && value.every((link) => isObject(link) && isObject(link.request) && isObject(link.answer));
}

/** The phase a runner's checkpoint has while a driver continues it; stale ones are orphans. */
export const RUNNING_PHASE = 'running';

/** The `limit` of a stale-run listing, checked. */
export function staleRunLimit(filter: StaleRunFilter): number {
  if (
    typeof filter !== 'object' ||
    filter === null ||
    typeof filter.updatedBefore !== 'string' ||
    Number.isNaN(Date.parse(filter.updatedBefore))
  )
    throw new InvalidArgumentError('listStaleRuns needs { updatedBefore } as an RFC 3339 instant');
  const limit = filter.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new InvalidArgumentError(`listStaleRuns limit must be an integer from 1 to 1000, got ${String(filter.limit)}`);
  return limit;
}
