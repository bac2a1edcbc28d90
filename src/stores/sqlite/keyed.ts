import type { ToolResult } from '../../results/wire';
import type { KeyedStart } from '../../suspension/keyed';
import { toJson } from '../../suspension/json';
import { parseStored } from '../rows';
import { immediate, type SqliteConnection } from './driver';
import { NOW_MS } from './clock';

interface KeyedRow {
  fence: number;
  lease_until: number | null;
  outcome: string | null;
  finished_at: number | null;
  now: number;
}

/**
 * A served call's incoming idempotency key (`KeyedCallStore.beginKeyed`): read and decided under
 * SQLite's write lock (IMMEDIATE), so of two processes with the same key one starts the call.
 */
export function beginKeyed(db: SqliteConnection, key: string, leaseMs: number, retentionMs: number): KeyedStart {
  return immediate(db, () => {
    const now = (db.prepare(`SELECT ${NOW_MS} AS now`).get() as { now: number }).now;
    const row = db.prepare('SELECT fence, lease_until, outcome, finished_at FROM keyed_calls WHERE key = ?').get(key) as
      Omit<KeyedRow, 'now'> | undefined;
    if (row?.outcome != null && now - Number(row.finished_at ?? 0) <= retentionMs)
      return { state: 'done', outcome: parseStored<ToolResult>(row.outcome, `the outcome of key ${key}`) };
    if (row && row.outcome === null && Number(row.lease_until ?? 0) >= now) return { state: 'running' };
    const fence = Number(row?.fence ?? 0) + 1;
    db.prepare(
      `INSERT INTO keyed_calls (key, fence, lease_until) VALUES (@key, @fence, @lease)
       ON CONFLICT (key) DO UPDATE SET fence = @fence, lease_until = @lease, outcome = NULL, finished_at = NULL`,
    ).run({ key, fence, lease: now + Math.ceil(leaseMs) });
    return { state: 'started', fence };
  });
}

/** Keeps the first outcome of a key while `fence` still holds it (`KeyedCallStore.finishKeyed`). */
export function finishKeyed(db: SqliteConnection, key: string, fence: number, outcome: ToolResult): boolean {
  const json = toJson(outcome, `the outcome of key ${key}`);
  return (
    db
      .prepare(
        `UPDATE keyed_calls SET outcome = @outcome, finished_at = ${NOW_MS}, lease_until = NULL
         WHERE key = @key AND fence = @fence AND outcome IS NULL`,
      )
      .run({ key, fence, outcome: json }).changes === 1
  );
}

/** Extends the lease of a key while `fence` still holds it, from SQLite's now (`KeyedCallStore.renewKeyed`). */
export function renewKeyed(db: SqliteConnection, key: string, fence: number, leaseMs: number): boolean {
  return (
    db
      .prepare(`UPDATE keyed_calls SET lease_until = ${NOW_MS} + @lease WHERE key = @key AND fence = @fence AND outcome IS NULL`)
      .run({ key, fence, lease: Math.ceil(leaseMs) }).changes === 1
  );
}
