import type { PruneOptions } from '../../runner/durability/retention';
import { cutoffMsOf, cutoffOf, LIVE_PHASES, SETTLED_STATUSES, type PruneTable } from '../retention';
import { immediate, type SqliteConnection } from './driver';

const SETTLED = `status IN (${SETTLED_STATUSES.map((s) => `'${s}'`).join(', ')})`;
/** A checkpoint's run is finished (neither running nor halted); `state` is the column as the statement names it. */
const finished = (state: string): string => `json_extract(${state}, '$.phase') NOT IN (${LIVE_PHASES.map((p) => `'${p}'`).join(', ')})`;
/** The keys of a batch, given as one JSON array parameter. */
const KEYS = '(SELECT value FROM json_each(@keys))';

/** The JSON columns of each table, parsed for `archive` as PostgreSQL's driver parses its json columns. */
const JSON_COLUMNS: Record<PruneTable['table'], readonly string[]> = {
  suspensions: ['request', 'args', 'answer', 'outcome', 'chain', 'answered_by', 'requested_by', 'signatures', 'automatic', 'receipts'],
  runs: ['state'],
  sessions: ['state'],
  streams: [],
  keyedCalls: ['outcome'],
  a2aTasks: ['state'],
  deliveries: ['delivery'],
};

/**
 * The batch steps of a SQLite prune: as PostgreSQL's (../postgres/prune.ts), each statement its
 * own short transaction, walking `suspensions_settled`, `runs_updated`, `sessions_updated`,
 * `a2a_tasks_idle`, `keyed_calls_done` and `deliveries_done` from the oldest row. `run`
 * wraps each statement in the store's error translation.
 */
export function sqlitePruneTables(db: SqliteConnection, run: <T>(work: () => T, what: string) => T, options: PruneOptions): PruneTable[] {
  const steps: PruneTable[] = [];
  /** One table's step: `from` (with its alias), its key column (`alias` qualifying it), what qualifies a row (@cutoff the cut-off), the walk's order. */
  const step = (
    table: PruneTable['table'],
    [from, alias]: [string, string],
    key: string,
    cutoff: string | number | undefined,
    qualifies: string,
    order: string,
  ): void => {
    if (cutoff === undefined) return;
    const column = `${alias}.${key}`;
    steps.push({
      table,
      key,
      select: (limit, whole) =>
        Promise.resolve(
          run(
            () =>
              (
                db
                  .prepare(`SELECT ${whole ? '*' : column} FROM ${from} AS ${alias} WHERE ${qualifies} ORDER BY ${order} LIMIT @limit`)
                  .all({ cutoff, limit }) as Array<Record<string, unknown>>
              ).map((row) => (whole ? parsed(table, row) : row)),
            `prune ${table}`,
          ),
        ),
      remove: (keys) =>
        Promise.resolve(
          run(
            () =>
              db
                .prepare(`DELETE FROM ${from} AS ${alias} WHERE ${column} IN ${KEYS} AND ${qualifies}`)
                .run({ cutoff, keys: JSON.stringify(keys) }).changes,
            `prune ${table}`,
          ),
        ),
    });
  };
  const finishedAt = cutoffOf(options.finishedBefore, 'finishedBefore');
  const finishedMs = cutoffMsOf(options.finishedBefore, 'finishedBefore');
  step(
    'suspensions',
    ['suspensions', 's'],
    'id',
    cutoffOf(options.settledBefore, 'settledBefore'),
    `s.${SETTLED} AND s.updated_at < @cutoff
       AND NOT EXISTS (SELECT 1 FROM suspensions n WHERE n.id = s.next_id AND n.status IN ('pending', 'resolving'))`,
    's.updated_at, s.seq',
  );
  // A2A tasks before runs (a task goes while its run's end still shows): one whose outbox is
  // empty and whose run, when kept at all, finished before the cut-off.
  step(
    'a2aTasks',
    ['a2a_tasks', 't'],
    'task_id',
    finishedAt,
    `t.due_at IS NULL AND t.created_at < @cutoff AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = t.task_id
       AND NOT COALESCE(r.updated_at < @cutoff AND ${finished('r.state')}, FALSE))`,
    't.created_at, t.task_id',
  );
  step('runs', ['runs', 'r'], 'run_id', finishedAt, `r.updated_at < @cutoff AND ${finished('r.state')}`, 'r.updated_at');
  step(
    'sessions',
    ['sessions', 'e'],
    'id',
    cutoffOf(options.idleBefore, 'idleBefore'),
    'e.active_run IS NULL AND e.updated_at < @cutoff',
    'e.updated_at',
  );
  if (finishedAt !== undefined) steps.push(streamsStep(db, run, finishedAt));
  // Served calls' keys whose outcome was kept before the cut-off (SQLite's clock, ms), never one held.
  step(
    'keyedCalls',
    ['keyed_calls', 'k'],
    'key',
    finishedMs,
    'k.outcome IS NOT NULL AND k.lease_until IS NULL AND k.finished_at < @cutoff',
    'k.finished_at',
  );
  // Cards done (they show a settled call) and last saved before the cut-off: every save moves `due_at` past its own instant.
  step('deliveries', ['deliveries', 'd'], 'id', finishedMs, 'd.done = 1 AND d.due_at < @cutoff', 'd.due_at');
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
