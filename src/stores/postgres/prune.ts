import type { PruneOptions } from '../../runner/retention';
import { cutoffOf, LIVE_PHASES, SETTLED_STATUSES, type PruneTable } from '../retention';
import type { Tables } from './schema';
import type { PostgresQuery } from './sessions';
import type { StreamTables } from './streams';

const SETTLED = `status IN (${SETTLED_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const FINISHED = `(state->>'phase') NOT IN (${LIVE_PHASES.map((p) => `'${p}'`).join(', ')})`;

/**
 * The batch steps of a PostgreSQL prune. Each select walks an index on `updated_at`
 * (`suspensions_hist_idx`, `runs_upd_idx`, `sessions_upd_idx`) from the oldest row, and each
 * delete names its rows by key and checks them again, so a row that changed since the select
 * stays. A settled link whose next request still waits is kept: its chain is not over.
 */
export function postgresPruneTables(
  tables: Tables,
  sessions: string,
  streams: StreamTables,
  query: PostgresQuery,
  options: PruneOptions,
): PruneTable[] {
  const steps: PruneTable[] = [];
  /** One table's step: `from` (with its alias), its key (`column` as the statements name it), what qualifies a row ($1 the cut-off), the walk's order. */
  const step = (
    table: PruneTable['table'],
    at: string | undefined,
    from: string,
    [key, column]: [string, string],
    qualifies: string,
    order: string,
  ): void => {
    if (at === undefined) return;
    const operation = `prune of ${table}`;
    steps.push({
      table,
      key,
      select: async (limit, whole) =>
        (await query(operation, `SELECT ${whole ? '*' : column} FROM ${from} WHERE ${qualifies} ORDER BY ${order} LIMIT $2`, [at, limit]))
          .rows,
      remove: async (keys) =>
        (await query(operation, `DELETE FROM ${from} WHERE ${column} = ANY($2::text[]) AND ${qualifies}`, [at, keys])).rowCount ?? 0,
    });
  };
  step(
    'suspensions',
    cutoffOf(options.settledBefore, 'settledBefore'),
    `${tables.suspensions} s`,
    ['id', 's.id'],
    `s.${SETTLED} AND s.updated_at COLLATE "C" < $1
      AND NOT EXISTS (SELECT 1 FROM ${tables.suspensions} n WHERE n.id = s.next_id AND n.status IN ('pending', 'resolving'))`,
    's.updated_at COLLATE "C" NULLS FIRST, s.seq',
  );
  step(
    'runs',
    cutoffOf(options.finishedBefore, 'finishedBefore'),
    tables.runs,
    ['run_id', 'run_id'],
    `updated_at COLLATE "C" < $1 AND ${FINISHED}`,
    'updated_at COLLATE "C"',
  );
  step(
    'sessions',
    cutoffOf(options.idleBefore, 'idleBefore'),
    sessions,
    ['id', 'id'],
    'active_run IS NULL AND updated_at COLLATE "C" < $1',
    'updated_at COLLATE "C"',
  );
  // Stream logs go with the run's retention: a closed log last written before the cut-off, its parts in the same statement.
  const streamCutoff = cutoffOf(options.finishedBefore, 'finishedBefore');
  if (streamCutoff !== undefined) {
    const qualifies = 'NOT open AND updated_at COLLATE "C" < $1';
    steps.push({
      table: 'streams',
      key: 'run_id',
      select: async (limit, whole) =>
        (
          await query(
            'prune of streams',
            `SELECT ${whole ? 'run_id, session_id, next, updated_at' : 'run_id'} FROM ${streams.logs} WHERE ${qualifies}
              ORDER BY updated_at COLLATE "C" LIMIT $2`,
            [streamCutoff, limit],
          )
        ).rows,
      remove: async (keys) =>
        (
          await query(
            'prune of streams',
            `WITH gone AS (DELETE FROM ${streams.logs} WHERE run_id = ANY($2::text[]) AND ${qualifies} RETURNING run_id),
                  parts AS (DELETE FROM ${streams.parts} p USING gone WHERE p.run_id = gone.run_id)
             SELECT count(*)::int AS n FROM gone`,
            [streamCutoff, keys],
          )
        ).rows.map((row) => Number((row as { n: number }).n))[0] ?? 0,
    });
  }
  return steps;
}
