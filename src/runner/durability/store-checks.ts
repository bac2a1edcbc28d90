import { InvalidArgumentError } from '../../errors';
import { MAX_STEER_CHARS, MAX_STEER_ID_CHARS } from '../core/steer';
import type { StaleRunFilter, StoredSteer } from '../core/store';

/*
 * What every run store checks the same way, so the three built-in stores (and one written
 * elsewhere) agree on which saves conflict and which listings are refused.
 */

/** True for a version some stored checkpoint could be followed by (a positive safe integer). */
export function versionCanFollow(version: unknown): version is number {
  return Number.isSafeInteger(version) && (version as number) >= 1;
}

/** The phase a runner's checkpoint has while a driver continues it; stale ones are orphans. */
export const RUNNING_PHASE = 'running';

/** The `limit` of a stale-run listing, checked (a store's own listing, not a coordinator's call). */
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

/** Checks a queued steer's run id and message before a store keeps it. */
export function checkStoredSteer(runId: string, steer: StoredSteer, max: number): void {
  checkSteerRun(runId, 'queueSteer');
  if (typeof steer?.id !== 'string' || steer.id === '' || steer.id.length > MAX_STEER_ID_CHARS)
    throw new InvalidArgumentError(`queueSteer: the id must be a string of 1 to ${MAX_STEER_ID_CHARS} characters`);
  if (typeof steer.content !== 'string' || steer.content.length > MAX_STEER_CHARS)
    throw new InvalidArgumentError(`queueSteer: the content must be a string of at most ${MAX_STEER_CHARS} characters`);
  if (!Number.isInteger(max) || max < 1 || max > 1000) throw new InvalidArgumentError('queueSteer: max must be an integer from 1 to 1000');
}

/** Checks the run id (and the limit, or the ids) of a read or a drop of queued steers. */
export function checkSteerRun(runId: string, what: string, limitOrIds?: number | readonly string[]): void {
  if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError(`${what}: runId must be a non-empty string`);
  if (typeof limitOrIds === 'number' && (!Number.isInteger(limitOrIds) || limitOrIds < 1 || limitOrIds > 1000))
    throw new InvalidArgumentError(`${what}: limit must be an integer from 1 to 1000`);
  if (Array.isArray(limitOrIds) && (limitOrIds.length > 1000 || !limitOrIds.every((id) => typeof id === 'string')))
    throw new InvalidArgumentError(`${what}: ids must be at most 1000 strings`);
}
