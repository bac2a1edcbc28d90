import type { SuspensionRow } from '../rows';

/*
 * The suspensions table's columns as the store reads and writes them, and the server clock its
 * statements share (./store.ts).
 */

/** JSON columns are read as text and parsed here, so a pool's own type parsers cannot change what comes back. */
export const SUSPENSION_COLUMNS = `id, kind, tool, status, request::text AS request, args::text AS args, answer::text AS answer,
  outcome::text AS outcome, call_id, run_id, created_at, updated_at, lease_until_ms, fence, chain::text AS chain, next_id, binding,
  answered_by::text AS answered_by, answered_at, comment, traceparent, requested_by::text AS requested_by,
  signatures::text AS signatures, automatic::text AS automatic, session_id, receipts::text AS receipts`;

/**
 * The columns an insert writes, each with the cast `INSERT … SELECT` needs for its `$n`
 * placeholder: one list, so a column and its cast never part. Every one is a `SuspensionRow` field.
 */
const INSERTED: ReadonlyArray<readonly [keyof SuspensionRow, 'text' | 'json' | 'bigint' | 'integer']> = [
  ['id', 'text'],
  ['kind', 'text'],
  ['tool', 'text'],
  ['status', 'text'],
  ['request', 'json'],
  ['args', 'json'],
  ['answer', 'json'],
  ['outcome', 'json'],
  ['call_id', 'text'],
  ['run_id', 'text'],
  ['created_at', 'text'],
  ['updated_at', 'text'],
  ['lease_until_ms', 'bigint'],
  ['fence', 'integer'],
  ['chain', 'json'],
  ['next_id', 'text'],
  ['binding', 'text'],
  ['answered_by', 'json'],
  ['answered_at', 'text'],
  ['comment', 'text'],
  ['traceparent', 'text'],
  ['requested_by', 'json'],
  ['signatures', 'json'],
  ['automatic', 'json'],
  ['session_id', 'text'],
  ['receipts', 'json'],
];

/** Columns of an insert, in the order of {@link insertValues}. */
export const INSERT_COLUMNS = INSERTED.map(([column]) => column).join(', ');

/** The `$n` placeholders of an insert's values from `$from` on, with their casts. */
export const insertPlaceholders = (from: number) => INSERTED.map(([, type], i) => `$${from + i}::${type}`).join(', ');

/** A row's values in the order of {@link INSERT_COLUMNS}; a field the row lacks is `null`. */
export function insertValues(row: SuspensionRow): unknown[] {
  return INSERTED.map(([column]) => row[column] ?? null);
}

/** The server's clock as RFC 3339 with milliseconds, as `Date.toISOString` writes it, for a statement that needs no lease clock. */
export const NOW_TEXT = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The database server's now, read once per statement: `ms` (epoch milliseconds) grants and
 * judges leases, `iso` (RFC 3339, UTC) is what `updatedAt` and `Claim.at` record. Every
 * process sharing the database thus judges leases by one clock, whatever its own says.
 */
export const CLOCK = `clock AS (
  SELECT (extract(epoch FROM t) * 1000)::bigint AS ms, to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS iso
  FROM (SELECT date_trunc('milliseconds', clock_timestamp()) AS t) AS now)`;

/** `column = $n` for each filter that is given, in order, its value appended to `values` (which numbers it). */
export function equalities(filters: ReadonlyArray<readonly [string, string | undefined]>, values: unknown[]): string[] {
  const conditions: string[] = [];
  for (const [column, value] of filters) {
    if (value === undefined) continue;
    values.push(value);
    conditions.push(`${column} = $${values.length}`);
  }
  return conditions;
}
