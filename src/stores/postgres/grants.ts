import { StoreError } from '../../errors';
import type { Grant, GrantFilter } from '../../suspension/grants';
import { toJson } from '../../suspension/json';
import { grantOf } from '../rows';
import { CLOCK } from './columns';
import type { PostgresQuery } from './part';

/** The grants table of a store: its qualified name, and the store's query (retries, prepared statements, error mapping). */
export interface GrantsTable {
  name: string;
  query: PostgresQuery;
}

/** Records a standing grant; a second grant with the same id is a StoreError. */
export async function insertGrant(table: GrantsTable, grant: Grant): Promise<void> {
  const json = toJson(grant, `grant ${grant.id}`);
  const result = await table.query(
    `insert of grant ${grant.id}`,
    `INSERT INTO ${table.name} (id, tool, grant_json) VALUES ($1, $2, $3::json) ON CONFLICT (id) DO NOTHING`,
    [grant.id, grant.tool, json],
  );
  if (result.rowCount !== 1) throw new StoreError(`grant ${grant.id} is already recorded`);
}

/** Revokes a live grant at the server's clock; undefined when there was none. */
export async function revokeGrant(table: GrantsTable, id: string): Promise<Grant | undefined> {
  const result = await table.query<{ grant_json: string; revoked_at: string | null }>(
    `revocation of grant ${id}`,
    `WITH ${CLOCK} UPDATE ${table.name} SET revoked_at = clock.iso FROM clock WHERE id = $1 AND revoked_at IS NULL
      RETURNING grant_json::text AS grant_json, revoked_at`,
    [id],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : grantOf(row.grant_json, row.revoked_at);
}

/** Every grant in the order they were made, or the live ones of one tool. */
export async function listGrants(table: GrantsTable, filter?: GrantFilter): Promise<Grant[]> {
  const where = filter ? 'WHERE tool = $1 AND revoked_at IS NULL ' : '';
  const result = await table.query<{ grant_json: string; revoked_at: string | null }>(
    'list of grants',
    `SELECT grant_json::text AS grant_json, revoked_at FROM ${table.name} ${where}ORDER BY seq`,
    filter ? [filter.tool] : [],
  );
  return result.rows.map((row) => grantOf(row.grant_json, row.revoked_at));
}
