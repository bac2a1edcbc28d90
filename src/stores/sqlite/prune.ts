import type { PruneOptions } from '../../runner/retention';
import { cutoffOf, LIVE_PHASES, SETTLED_STATUSES, type PruneTable } from '../retention';
import { immediate, type SqliteConnection } from './driver';

const SETTLED = `status IN (${SETTLED_STATUSES.map((s) => `'${s}'`).join(', ')})`;
const FINISHED = `json_extract(state, '$.phase') NOT IN (${LIVE_PHASES.map((p) => `'${p}'`).join(', ')})`;
/** The keys of a batch, given as one JSON array parameter. */
const KEYS = '(SELECT value FROM json_each(@keys))';

/** The JSON columns of each table, parsed for `archive` as PostgreSQL's driver parses its json columns. */
const JSON_COLUMNS: Record<PruneTable['table'], readonly string[]> = {
  suspensions: ['request', 'args', 'answer', 'outcome', 'chain', 'answered_by', 'requested_by', 'signatures', 'automatic', 'receipts'],
  runs: ['state'],
  sessions: ['state'],
  streams: [],
};

/**
 * The batch steps of a SQLite prune: as PostgreSQL's (../postgres/prune.ts), each statement its
 * own short transaction, walking `suspensions_settled`, `runs_updated` and `sessions_updated`
 * from the oldest row. `run` wraps each statement in the store's error translation.
 */
export function sqlitePruneTables(db: SqliteConnection, run: <T>(work: () => T, what: string) => T, options: PruneOptions): PruneTable[] {
  const steps: PruneTable[] = [];
  const step = (table: PruneTable['table'], key: string, cutoff: string | undefined, qualifies: string, order: string): void => {
    if (cutoff === undefined) return;
    const from = table === 'suspensions' ? 'suspensions AS s' : table;
    const column = table === 'suspensions' ? `s.${key}` : key;
    steps.push({
      table,
      key,
      select: (limit, whole) =>
        Promise.resolve(
          run(
            () =>
              (
                db
                  .prepare(`SELECT ${whole ? '*' : column} FROM ${from} WHERE ${qualifies} ORDER BY ${order} LIMIT @limit`)
                  .all({ cutoff, limit }) as Array<Record<string, unknown>>
              ).map((row) => (whole ? parsed(table, row) : row)),
            `prune ${table}`,
          ),
        ),
      remove: (keys) =>
        Promise.resolve(
          run(
            () =>
              db.prepare(`DELETE FROM ${from} WHERE ${column} IN ${KEYS} AND ${qualifies}`).run({ cutoff, keys: JSON.stringify(keys) })
                .changes,
            `prune ${table}`,
          ),
        ),
    });
  };
  step(
    'suspensions',
    'id',
    cutoffOf(options.settledBefore, 'settledBefore'),
    `s.${SETTLED} AND s.updated_at < @cutoff
       AND NOT EXISTS (SELECT 1 FROM suspensions n WHERE n.id = s.next_id AND n.status IN ('pending', 'resolving'))`,
    's.updated_at, s.seq',
  );
  step('runs', 'run_id', cutoffOf(options.finishedBefore, 'finishedBefore'), `updated_at < @cutoff AND ${FINISHED}`, 'updated_at');
  step('sessions', 'id', cutoffOf(options.idleBefore, 'idleBefore'), 'active_run IS NULL AND updated_at < @cutoff', 'updated_at');
  const streams = cutoffOf(options.finishedBefore, 'finishedBefore');
  if (streams !== undefined) steps.push(streamsStep(db, run, streams));
  return steps;
}

function parsed(table: PruneTable['table'], row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const column of JSON_COLUMNS[table]) {
    const value = out[column];
    if (typeof value === 'string') {
      try {
        out[column] = JSON.parse(value) as unknown;
      } catch {
        // Kept as the text stored: an archive must not lose a row over its shape.
      }
    }
  }
  return out;
}

/**
 * Stream logs go with the run's retention (`finishedBefore`): a closed log last written before
 * the cut-off, with its parts, in one transaction (a log that opened again since stays).
 */
function streamsStep(db: SqliteConnection, run: <T>(work: () => T, what: string) => T, cutoff: string): PruneTable {
  const qualifies = 'open = 0 AND updated_at < @cutoff';
  return {
    table: 'streams',
    key: 'run_id',
    select: (limit, whole) =>
      Promise.resolve(
        run(
          () =>
            db
              .prepare(
                `SELECT ${whole ? 'run_id, session_id, next, updated_at' : 'run_id'} FROM stream_logs WHERE ${qualifies} ORDER BY updated_at LIMIT @limit`,
              )
              .all({ cutoff, limit }) as Array<Record<string, unknown>>,
          'prune streams',
        ),
      ),
    remove: (keys) =>
      Promise.resolve(
        run(
          () =>
            immediate(db, () => {
              const gone = db
                .prepare(`DELETE FROM stream_logs WHERE run_id IN ${KEYS} AND ${qualifies} RETURNING run_id`)
                .all({ cutoff, keys: JSON.stringify(keys) }) as Array<{ run_id: string }>;
              const ids = JSON.stringify(gone.map((row) => row.run_id));
              db.prepare(`DELETE FROM stream_parts WHERE run_id IN (SELECT value FROM json_each(@ids))`).run({ ids });
              return gone.length;
            }),
          'prune streams',
        ),
      ),
  };
}
