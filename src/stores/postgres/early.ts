import type { Answer } from '../../results/wire';
import type { Audit } from '../../suspension/audit';
import { toJson } from '../../suspension/json';
import type { Claim, EarlyClaim, SuspendedCall } from '../../suspension/store';
import { callRead, parsedColumn, parseStored, rowOf, type SuspensionRow } from '../rows';
import { CLOCK } from './columns';
import type { PostgresQuery } from './part';

/*
 * The early claim of the PostgreSQL store (docs/design.md, glossary: "early claim"): the read
 * and the claim of an answer in one statement, so a resolve is two round trips (this and the
 * settle) instead of three. The coordinator judges the call as read right after; a claim it
 * refuses is put back by {@link restoreStatement}.
 */

/** What the early claim statement returns: the row as it was (as one JSON object: {@link ROW_COLUMNS}), and the claim's columns when it claimed. */
interface EarlyRow {
  row: string;
  claimed_fence: number | string | null;
  claimed_lease: number | string | null;
  claimed_at: string | null;
}

/**
 * The row as `row_to_json` returns it, one column instead of twenty-six: `pg` then describes
 * and parses one field per claim, not a row object of twenty-six (that was a sixth of a fleet
 * worker's CPU per answer: docs/performance.md). `json` columns come back as written (the JSON
 * is embedded as stored); `args` as text, since JSON `null` arguments and a NULL column differ.
 */
const ROW_COLUMNS = `id, kind, tool, status, request, args::text AS args, answer, outcome, call_id, run_id, created_at, updated_at,
  lease_until_ms, fence, chain, next_id, binding, answered_by, answered_at, comment, traceparent, requested_by, signatures, automatic,
  session_id, receipts`;

/**
 * The row is locked first (`cur`), so what it returns is the latest committed row and nothing
 * changes it before the `UPDATE` that depends on it; under READ COMMITTED a concurrent claimer
 * waits for this statement to commit and then finds the row `resolving`. Only a `pending` call
 * whose request keeps its answer as given is claimed: not a login (`authorization`), no
 * `data.schema` (a `writeOnly` field is consumed, never stored) and no `data.quorum` (an
 * approval is a signature first): the same rule as `SuspensionStore.claimEarly`. PostgreSQL's
 * JSON path operators refuse a `\u0000` escape anywhere in the text they walk, so a request
 * holding one is never claimed early (the `CASE` keeps `#>` from seeing it): its answer takes
 * the read-first path, which reads the request as text and decides in JavaScript.
 */
function claimStatement(table: string): string {
  return `WITH ${CLOCK},
  cur AS (SELECT ${ROW_COLUMNS} FROM ${table} WHERE id = $1 FOR UPDATE),
  claimed AS (
    UPDATE ${table} AS s
       SET status = 'resolving', answer = $2::json, fence = COALESCE(s.fence, 0) + 1,
           lease_until_ms = clock.ms + $3::bigint, updated_at = clock.iso,
           answered_at = clock.iso, answered_by = $4::json, comment = $5::text
      FROM clock, cur
     WHERE s.id = cur.id AND s.status = 'pending' AND s.kind <> 'authorization'
       AND CASE WHEN strpos(s.request::text, '\\u0000') > 0 THEN false
                ELSE s.request #> '{data,schema}' IS NULL AND s.request #> '{data,quorum}' IS NULL END
     RETURNING s.fence AS claimed_fence, s.lease_until_ms AS claimed_lease, clock.iso AS claimed_at)
  SELECT row_to_json(cur)::text AS row, claimed.* FROM cur LEFT JOIN claimed ON true`;
}

/**
 * The early claim's statements for one table, their texts built once: a resolve then hands `pg`
 * the same string each time, which the prepared statements' table finds by its cached hash
 * instead of hashing a new kilobyte of SQL per call (docs/performance.md, the fleet).
 */
export class EarlyClaims {
  private readonly claimText: string;
  private readonly restoreText: string;

  constructor(table: string) {
    this.claimText = claimStatement(table);
    this.restoreText = restoreStatement(table);
  }

  /** Reads `id` and claims it when it may be claimed early: see `SuspensionStore.claimEarly`. */
  claim(query: PostgresQuery, id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<EarlyClaim | undefined> {
    return claimEarly(this.claimText, query, id, answer, leaseMs, audit);
  }

  /** The statement and values that give a refused early claim back: see `SuspensionStore.restoreClaim`. */
  restore(claim: Claim, read: SuspendedCall): { text: string; values: unknown[] } {
    return restoreQuery(this.restoreText, claim, read);
  }
}

async function claimEarly(
  statement: string,
  query: PostgresQuery,
  id: string,
  answer: Answer,
  leaseMs: number,
  audit?: Audit,
): Promise<EarlyClaim | undefined> {
  const answerJson = toJson(answer, `the answer to ${id}`);
  const byJson = audit?.by === undefined ? null : toJson(audit.by, `the principal who answered ${id}`);
  const result = await query<EarlyRow>(`early claim of suspension ${id}`, statement, [
    id,
    answerJson,
    Math.ceil(leaseMs),
    byJson,
    audit?.comment ?? null,
  ]);
  const row = result.rows[0];
  if (!row) return undefined;
  const { claimed_fence: fence, claimed_lease: lease, claimed_at: at } = row;
  const read = callRead(rowFrom(row.row, id), parsedColumn);
  if (fence === null || at === null) return { read };
  // The claimed row is the row read with what the UPDATE set: no second copy comes back over the
  // wire. Parsed again, so the claimed call shares no object with the call as read.
  const claimed: SuspensionRow = {
    ...rowFrom(row.row, id),
    status: 'resolving',
    answer: parseStored<string>(answerJson, `the answer to ${id}`),
    fence,
    lease_until_ms: lease,
    updated_at: at,
    answered_at: at,
    answered_by: byJson === null ? null : parseStored<string>(byJson, `the principal who answered ${id}`),
    comment: audit?.comment ?? null,
  };
  const call = callRead(claimed, parsedColumn);
  return { read, claim: { id, fence: call.fence as number, call, at } };
}

/** The row `row_to_json` returned, its JSON columns parsed with it (read by {@link parsedColumn}). */
function rowFrom(json: string, id: string): SuspensionRow {
  return parseStored<SuspensionRow>(json, `the row of suspension ${id}`);
}

/** The statement that puts back what an early claim set, while that claim still holds the call. */
function restoreStatement(table: string): string {
  return `UPDATE ${table}
      SET status = $3, answer = $4::json, fence = $5::integer, lease_until_ms = $6::bigint, updated_at = $7::text,
          answered_at = $8::text, answered_by = $9::json, comment = $10::text
    WHERE id = $1 AND status = 'resolving' AND fence = $2`;
}

function restoreQuery(statement: string, claim: Claim, read: SuspendedCall): { text: string; values: unknown[] } {
  const row = rowOf(read);
  return {
    text: statement,
    values: [
      claim.id,
      claim.fence,
      row.status,
      row.answer,
      row.fence,
      row.lease_until_ms,
      row.updated_at,
      row.answered_at,
      row.answered_by,
      row.comment,
    ],
  };
}
