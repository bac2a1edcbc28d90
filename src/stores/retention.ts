import { InvalidArgumentError } from '../errors';
import type { PrunedBatch, PruneOptions, PruneReport } from '../runner/durability/retention';

/** The statuses of a settled suspension: final, never claimed again. */
export const SETTLED_STATUSES = ['resolved', 'declined', 'expired', 'cancelled'] as const;
/** The checkpoint phases of a run that may still go on; every other phase is finished. */
export const LIVE_PHASES = ['running', 'halted'] as const;

export const DEFAULT_PRUNE_BATCH = 1000;

const EMPTY_REPORT: PruneReport = {
  suspensions: 0,
  runs: 0,
  sessions: 0,
  streams: 0,
  keyedCalls: 0,
  a2aTasks: 0,
  deliveries: 0,
  batches: 0,
};
const MAX_PRUNE_BATCH = 10_000;

/** One table's batch step, its cut-off bound in: the oldest rows past it (at most `limit`), and their deletion. */
export interface PruneTable {
  table: PrunedBatch['table'];
  /** Up to `limit` candidate rows, oldest first: keys only, or whole rows when `whole`. */
  select(limit: number, whole: boolean): Promise<Array<Record<string, unknown>>>;
  /** Deletes those of `keys` that still qualify (checked again: a row may have changed since); returns how many. */
  remove(keys: string[]): Promise<number>;
  /** The key column of a selected row. */
  key: string;
}

/**
 * Works through each table a batch at a time until nothing older than its cut-off is left
 * (or `maxBatches`, or the signal): every batch a select and a delete by key, each its own
 * short statement, so concurrent work waits at most one batch.
 */
export async function pruneInBatches(options: PruneOptions, tablesOf: (options: PruneOptions) => PruneTable[]): Promise<PruneReport> {
  const batchSize = checkPruneOptions(options);
  const tables = tablesOf(options);
  const report: PruneReport = { ...EMPTY_REPORT };
  const maxBatches = options.maxBatches ?? Infinity;
  for (const step of tables) {
    for (;;) {
      if (report.batches >= maxBatches || options.signal?.aborted) return report;
      const rows = await step.select(batchSize, options.archive !== undefined);
      if (rows.length === 0) break;
      if (options.archive) await options.archive({ table: step.table, rows });
      const deleted = await step.remove(rows.map((row) => String(row[step.key])));
      if (deleted > 0) report.batches++;
      report[step.table] += deleted;
      if (rows.length < batchSize) break;
      // A full batch of which nothing qualified any more (all changed since the select) ends this table:
      // the next select would find the same rows.
      if (deleted === 0) break;
    }
  }
  return report;
}

/** A cut-off given, as epoch milliseconds (for the tables that keep time so), or undefined for a table not to prune. */
export function cutoffMsOf(date: Date | undefined, name: string): number | undefined {
  const at = cutoffOf(date, name);
  return at === undefined ? undefined : Date.parse(at);
}

/** The cut-offs given, as RFC 3339 text, or undefined for a table not to prune. */
export function cutoffOf(date: Date | undefined, name: string): string | undefined {
  if (date === undefined) return undefined;
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) throw new InvalidArgumentError(`${name} must be a valid Date`);
  return date.toISOString();
}

function checkPruneOptions(options: PruneOptions): number {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('prune needs options: { settledBefore?, finishedBefore?, idleBefore? }');
  if (options.settledBefore === undefined && options.finishedBefore === undefined && options.idleBefore === undefined) {
    throw new InvalidArgumentError('prune needs at least one of settledBefore, finishedBefore and idleBefore');
  }
  const batchSize = options.batchSize ?? DEFAULT_PRUNE_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_PRUNE_BATCH) {
    throw new InvalidArgumentError(`batchSize must be a whole number from 1 to ${MAX_PRUNE_BATCH}, got ${String(options.batchSize)}`);
  }
  if (options.maxBatches !== undefined && (!Number.isInteger(options.maxBatches) || options.maxBatches < 1)) {
    throw new InvalidArgumentError(`maxBatches must be a positive whole number, got ${String(options.maxBatches)}`);
  }
  if (options.archive !== undefined && typeof options.archive !== 'function') throw new InvalidArgumentError('archive must be a function');
  return batchSize;
}
