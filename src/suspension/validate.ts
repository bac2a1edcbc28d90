import { InvalidArgumentError } from '../errors';
import type { HistoryFilter } from './audit';
import { isSettled, isSuspensionStatus } from './status';
import type { SuspendedCall } from './store';

/*
 * What crosses from the coordinator into a store is checked here, once, at the coordinator's
 * boundary (a call before it is recorded, a history filter before it is read), so no store
 * repeats the checks in every method and a store written elsewhere need not copy them.
 * Refused with InvalidArgumentError (code TOOLNEXUS_INVALID_ARGUMENT) before anything is written.
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

function isTimestamp(value: unknown): value is string {
  return typeof value === 'string' && !Number.isNaN(Date.parse(value));
}

function isFence(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

function isChain(value: unknown): boolean {
  return Array.isArray(value) && value.every((link) => isObject(link) && isObject(link.request) && isObject(link.answer));
}
