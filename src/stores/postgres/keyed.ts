import type { ToolResult } from '../../results/wire';
import type { KeyedStart } from '../../suspension/keyed';
import { toJson } from '../../suspension/json';
import { parseStored } from '../rows';
import { CLOCK } from './columns';

/** One statement of the store, as `PostgresStore` runs it (retries and errors its own). */
type Query = <Row extends object>(operation: string, text: string, values: unknown[]) => Promise<{ rows: Row[]; rowCount: number | null }>;

/**
 * A served call's incoming idempotency key (`KeyedCallStore.beginKeyed`) in one statement: the
 * upsert starts the call when the key is new, its holder's lease lapsed or its outcome is past
 * the retention (all by the server's clock); otherwise the row as it stands says `running` or
 * `done`. A row a concurrent statement inserted after this one's snapshot reads as `running`:
 * the caller is told to come back, never let in twice.
 */
export async function beginKeyed(table: string, query: Query, key: string, leaseMs: number, retentionMs: number): Promise<KeyedStart> {
  const result = await query<{ won: number | null; fence: number | null; outcome: string | null }>(
    'begin of a keyed call',
    `WITH ${CLOCK},
     up AS (
       INSERT INTO ${table} AS k (key, fence, lease_until_ms) SELECT $1, 1, clock.ms + $2::bigint FROM clock
       ON CONFLICT (key) DO UPDATE SET fence = k.fence + 1, lease_until_ms = EXCLUDED.lease_until_ms, outcome = NULL, finished_ms = NULL
        WHERE (k.outcome IS NULL AND k.lease_until_ms < EXCLUDED.lease_until_ms - $2::bigint)
           OR (k.outcome IS NOT NULL AND k.finished_ms < EXCLUDED.lease_until_ms - $2::bigint - $3::bigint)
       RETURNING k.fence)
     SELECT (SELECT fence FROM up) AS won, k.fence, k.outcome::text AS outcome
       FROM (SELECT 1) AS one LEFT JOIN ${table} AS k ON k.key = $1`,
    [key, Math.ceil(leaseMs), Math.ceil(retentionMs)],
  );
  const row = result.rows[0];
  if (row?.won != null) return { state: 'started', fence: Number(row.won) };
  if (row?.outcome != null) return { state: 'done', outcome: parseStored<ToolResult>(row.outcome, `the outcome of key ${key}`) };
  return { state: 'running' };
}

/** Keeps the first outcome of a key while `fence` still holds it (`KeyedCallStore.finishKeyed`). */
export async function finishKeyed(table: string, query: Query, key: string, fence: number, outcome: ToolResult): Promise<boolean> {
  const result = await query(
    'finish of a keyed call',
    `WITH ${CLOCK} UPDATE ${table} SET outcome = $3::json, finished_ms = clock.ms, lease_until_ms = NULL
       FROM clock WHERE key = $1 AND fence = $2 AND outcome IS NULL`,
    [key, fence, toJson(outcome, `the outcome of key ${key}`)],
  );
  return result.rowCount === 1;
}

/** Extends the lease of a key while `fence` still holds it, by the server's clock (`KeyedCallStore.renewKeyed`). */
export async function renewKeyed(table: string, query: Query, key: string, fence: number, leaseMs: number): Promise<boolean> {
  const result = await query(
    'renewal of a keyed call',
    `WITH ${CLOCK} UPDATE ${table} SET lease_until_ms = clock.ms + $3::bigint
       FROM clock WHERE key = $1 AND fence = $2 AND outcome IS NULL`,
    [key, fence, Math.ceil(leaseMs)],
  );
  return result.rowCount === 1;
}
