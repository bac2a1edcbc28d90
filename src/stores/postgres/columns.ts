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

/** Columns of an insert, in the order of {@link insertValues}; `$n` placeholders with the casts `INSERT … SELECT` needs. */
export const INSERT_COLUMNS =
  'id, kind, tool, status, request, args, answer, outcome, call_id, run_id, created_at, updated_at, lease_until_ms, fence, chain, next_id, binding, ' +
  'answered_by, answered_at, comment, traceparent, requested_by, signatures, automatic, session_id, receipts';
export const insertPlaceholders = (from: number) =>
  [
    'text',
    'text',
    'text',
    'text',
    'json',
    'json',
    'json',
    'json',
    'text',
    'text',
    'text',
    'text',
    'bigint',
    'integer',
    'json',
    'text',
    'text',
    'json',
    'text',
    'text',
    'text',
    'json',
    'json',
    'json',
    'text',
    'json',
  ]
    .map((type, i) => `$${from + i}::${type}`)
    .join(', ');

export function insertValues(row: SuspensionRow): unknown[] {
  return [
    row.id,
    row.kind,
    row.tool,
    row.status,
    row.request,
    row.args,
    row.answer,
    row.outcome,
    row.call_id,
    row.run_id,
    row.created_at,
    row.updated_at,
    row.lease_until_ms,
    row.fence,
    row.chain,
    row.next_id,
    row.binding,
    row.answered_by,
    row.answered_at,
    row.comment,
    row.traceparent,
    row.requested_by,
    row.signatures,
    row.automatic,
    row.session_id,
    row.receipts ?? null,
  ];
}

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
