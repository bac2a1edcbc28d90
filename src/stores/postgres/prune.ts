import type { PruneOptions } from '../../runner/retention';
import { cutoffOf, LIVE_PHASES, SETTLED_STATUSES, type PruneTable } from '../retention';
import type { Tables } from './schema';
import type { PostgresQuery } from './sessions';

const SETTLED = `status IN (${SETTLED_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const FINISHED = `(state->>'phase') NOT IN (${LIVE_PHASES.map((p) => `'${p}'`).join(', ')})`;

/**
 * The batch steps of a PostgreSQL prune. Each select walks an index on `updated_at`
 * (`suspensions_hist_idx`, `runs_upd_idx`, `sessions_upd_idx`) from the oldest row, and each
 * delete names its rows by key and checks them again, so a row that changed since the select
 * stays. A settled link whose next request still waits is kept: its chain is not over.
 */
export function postgresPruneTables(tables: Tables, sessions: string, query: PostgresQuery, options: PruneOptions): PruneTable[] {
  const steps: PruneTable[] = [];
  const settled = cutoffOf(options.settledBefore, 'settledBefore');
  if (settled !== undefined) {
    const qualifies = `s.${SETTLED} AND s.updated_at COLLATE "C" < $1
      AND NOT EXISTS (SELECT 1 FROM ${tables.suspensions} n WHERE n.id = s.next_id AND n.status IN ('pending', 'resolving'))`;
    steps.push({
      table: 'suspensions',
      key: 'id',
      cutoff: settled,
      select: async (cutoff, limit, whole) =>
        (
          await query(
            'prune of settled suspensions',
            `SELECT ${whole ? 's.*' : 's.id'} FROM ${tables.suspensions} s WHERE ${qualifies} ORDER BY s.updated_at COLLATE "C" NULLS FIRST, s.seq LIMIT $2`,
            [cutoff, limit],
          )
        ).rows,
      remove: async (cutoff, keys) =>
        (
          await query('prune of settled suspensions', `DELETE FROM ${tables.suspensions} s WHERE s.id = ANY($2::text[]) AND ${qualifies}`, [
            cutoff,
            keys,
          ])
        ).rowCount ?? 0,
    });
  }
  const finished = cutoffOf(options.finishedBefore, 'finishedBefore');
  if (finished !== undefined) {
    const qualifies = `updated_at COLLATE "C" < $1 AND ${FINISHED}`;
    steps.push({
      table: 'runs',
      key: 'run_id',
      cutoff: finished,
      select: async (cutoff, limit, whole) =>
        (
          await query(
            'prune of finished runs',
            `SELECT ${whole ? '*' : 'run_id'} FROM ${tables.runs} WHERE ${qualifies} ORDER BY updated_at COLLATE "C" LIMIT $2`,
            [cutoff, limit],
          )
        ).rows,
      remove: async (cutoff, keys) =>
        (
          await query('prune of finished runs', `DELETE FROM ${tables.runs} WHERE run_id = ANY($2::text[]) AND ${qualifies}`, [
            cutoff,
            keys,
          ])
        ).rowCount ?? 0,
    });
  }
  const idle = cutoffOf(options.idleBefore, 'idleBefore');
  if (idle !== undefined) {
    const qualifies = `active_run IS NULL AND updated_at COLLATE "C" < $1`;
    steps.push({
      table: 'sessions',
      key: 'id',
      cutoff: idle,
      select: async (cutoff, limit, whole) =>
        (
          await query(
            'prune of idle sessions',
            `SELECT ${whole ? '*' : 'id'} FROM ${sessions} WHERE ${qualifies} ORDER BY updated_at COLLATE "C" LIMIT $2`,
            [cutoff, limit],
          )
        ).rows,
      remove: async (cutoff, keys) =>
        (await query('prune of idle sessions', `DELETE FROM ${sessions} WHERE id = ANY($2::text[]) AND ${qualifies}`, [cutoff, keys]))
          .rowCount ?? 0,
    });
  }
  return steps;
}
