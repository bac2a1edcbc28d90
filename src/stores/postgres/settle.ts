import { toJson } from '../../suspension/json';
import type { Claim, Settlement } from '../../suspension/store';
import { rowOf, type SuspensionRow } from '../rows';
import { CLOCK, INSERT_COLUMNS, NOW_TEXT, insertPlaceholders, insertValues } from './columns';

/*
 * The settle of the PostgreSQL store (`SuspensionStore.complete`): the outcome stored under the
 * claim's fence. Most settlements have no next link: theirs is one plain `UPDATE` whose row
 * count says whether the fence still held, with no CTE, no clock row and no result row to
 * describe and parse (docs/performance.md, the fleet). A settlement with a next link inserts it
 * in the same statement, so a taken id fails the whole statement and leaves the call claimed.
 */

/** A settle's statement and values; `next`: the row of the next link it inserts, if any. */
export interface SettleQuery {
  text: string;
  values: unknown[];
  next: SuspensionRow | undefined;
  /** How the result says the settlement was stored: a row count of 1, or the `settled` column of its one row. */
  counted: 'rowCount' | 'settled';
}

/** The settle statements for one table, their texts built once. */
export class Settles {
  private readonly plain: string;
  private readonly linked: string;

  constructor(table: string) {
    // `updated_at` is the server's now, as the clock of the other statements writes it (UTC, milliseconds).
    this.plain = `UPDATE ${table}
        SET status = $3, outcome = $4::json, updated_at = ${NOW_TEXT}, lease_until_ms = NULL, receipts = COALESCE($5::json, receipts)
      WHERE id = $1 AND status = 'resolving' AND fence = $2`;
    const settle = `UPDATE ${table}
          SET status = $3, outcome = $4::json, updated_at = clock.iso, lease_until_ms = NULL, next_id = COALESCE($5::text, next_id),
              receipts = COALESCE($6::json, receipts)
         FROM clock
        WHERE id = $1 AND status = 'resolving' AND fence = $2
        RETURNING id`;
    // No ON CONFLICT: a taken id fails the whole statement and leaves the call claimed, as `insert` would refuse it.
    this.linked = `WITH ${CLOCK}, settled AS (${settle}),
              linked AS (INSERT INTO ${table} (${INSERT_COLUMNS}) SELECT ${insertPlaceholders(7)} FROM settled RETURNING id)
         SELECT (SELECT count(*) FROM settled)::int AS settled`;
  }

  /** What stores `settlement` for `claim`; JSON is serialised here, before anything is sent. */
  query(claim: Claim, settlement: Settlement): SettleQuery {
    const outcomeJson = toJson(settlement.outcome, `the outcome of ${claim.id}`);
    const receipts = settlement.receipts === undefined ? null : toJson(settlement.receipts, `the receipts of ${claim.id}`);
    if (settlement.next === undefined)
      return {
        text: this.plain,
        values: [claim.id, claim.fence, settlement.status, outcomeJson, receipts],
        next: undefined,
        counted: 'rowCount',
      };
    const next = rowOf(settlement.next);
    return {
      text: this.linked,
      values: [claim.id, claim.fence, settlement.status, outcomeJson, next.id, receipts, ...insertValues(next)],
      next,
      counted: 'settled',
    };
  }
}
