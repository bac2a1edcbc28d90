import type { PruneOptions } from '../../runner/durability/retention';
import { cutoffMsOf, cutoffOf, LIVE_PHASES, SETTLED_STATUSES, type PruneTable } from '../retention';
import type { Tables } from './schema';
import type { PostgresQuery } from './part';
import type { StreamTables } from './streams';

const SETTLED = `status IN (${SETTLED_STATUSES.map((s) => `'${s}'`).join(', ')})`;
/** A checkpoint's run is finished (neither running nor halted); `state` is the column as the statement names it. */
const finished = (state: string): string => `(${state}->>'phase') NOT IN (${LIVE_PHASES.map((p) => `'${p}'`).join(', ')})`;

/**
 * The batch steps of a PostgreSQL prune. Each select walks an index from the oldest row
 * (`suspensions_hist_idx`, `runs_upd_idx`, `sessions_upd_idx`, `a2a_tasks_idle_idx`,
 * `keyed_calls_done_idx`, `deliveries_done_idx`), and each
 * delete names its rows by key and checks them again, so a row that changed since the select
 * stays. A settled link whose next request still waits is kept: its chain is not over.
 */
export function postgresPruneTables(tables: Tables, streams: StreamTables, query: PostgresQuery, options: PruneOptions): PruneTable[] {
  const steps: PruneTable[] = [];
  /** One table's step: `from` (with its alias), its key (`column` as the statements name it), what qualifies a row ($1 the cut-off), the walk's order. */
  const step = (
    table: PruneTable['table'],
    at: string | number | undefined,
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
  const finishedAt = cutoffOf(options.finishedBefore, 'finishedBefore');
  // A2A tasks before runs (a task goes while its run's end still shows): one whose outbox is
  // empty and whose run, when kept at all, finished before the cut-off.
  step(
    'a2aTasks',
    finishedAt,
    `${tables.a2aTasks} t`,
    ['task_id', 't.task_id'],
    `t.due_at IS NULL AND t.created_at COLLATE "C" < $1 AND NOT EXISTS (SELECT 1 FROM ${tables.runs} r WHERE r.run_id = t.task_id
       AND NOT COALESCE(r.updated_at COLLATE "C" < $1 AND ${finished('r.state')}, FALSE))`,
    't.created_at COLLATE "C", t.task_id COLLATE "C"',
  );
  step(
    'runs',
    finishedAt,
    tables.runs,
    ['run_id', 'run_id'],
    `updated_at COLLATE "C" < $1 AND ${finished('state')}`,
    'updated_at COLLATE "C"',
  );
  step(
    'sessions',
    cutoffOf(options.idleBefore, 'idleBefore'),
    tables.sessions,
    ['id', 'id'],
    'active_run IS NULL AND updated_at COLLATE "C" < $1',
    'updated_at COLLATE "C"',
  );
  // Stream logs go with the run's retention: a closed log last written before the cut-off, its parts in the same statement.
  const streamCutoff = finishedAt;
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
  const finishedMs = cutoffMsOf(options.finishedBefore, 'finishedBefore');
  // Served calls' keys whose outcome was kept before the cut-off (the server's clock, ms), never one held.
  step(
    'keyedCalls',
    finishedMs,
    tables.keyed,
    ['key', 'key'],
    'outcome IS NOT NULL AND lease_until_ms IS NULL AND finished_ms < $1',
    'finished_ms',
  );
  // Cards done (they show a settled call) and last saved before the cut-off: every save moves `due_at` past its own instant.
  step('deliveries', finishedMs, tables.deliveries, ['id', 'id'], 'done AND due_at < $1', 'due_at');
  return steps;
}
