import { InvalidArgumentError } from '../errors';
import type { StaleRunFilter } from './store';

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
