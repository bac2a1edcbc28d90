import type { SteeringQueue, SteerQueued, StoredSteer } from '../../runner/core/store';
import { checkSteerRun, checkStoredSteer } from '../../runner/durability/store-checks';
import { NOW_TEXT } from './columns';
import { quoteIdentifier } from './resolve';
import type { PostgresQuery } from './sessions';

/** The qualified, quoted name of a store's steering queue. */
export function steersTable(schema: string, prefix: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(`${prefix}run_steers`)}`;
}

/**
 * Layout step 4 of the PostgreSQL store, steering's block (docs/agents.md, "Steering"): as in
 * SQLite, a row per message steered into a run another process drives, apart from its
 * checkpoint, until the driver takes it. A run's rows go with its checkpoint (a prune deletes
 * both): the foreign key cascades.
 */
export function steersPostgresDdl(schema: string, prefix: string, runs: string): string[] {
  // Constraints named with the prefix and short enough for the longest one (no name is truncated).
  const name = (suffix: string): string => quoteIdentifier(`${prefix}${suffix}`);
  return [
    `CREATE TABLE ${steersTable(schema, prefix)} (
       seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
       run_id     text NOT NULL,
       id         text NOT NULL,
       content    text NOT NULL,
       created_at text NOT NULL,
       CONSTRAINT ${name('run_steers_id_key')} UNIQUE (run_id, id),
       CONSTRAINT ${name('run_steers_run_fkey')} FOREIGN KEY (run_id) REFERENCES ${runs} (run_id) ON DELETE CASCADE)`,
  ];
}

/** The steering queue of a `PostgresStore`, in its schema. */
export class PostgresSteers implements SteeringQueue {
  constructor(
    private readonly table: string,
    private readonly runs: string,
    private readonly query: PostgresQuery,
  ) {}

  async queueSteer(runId: string, steer: StoredSteer, max: number): Promise<SteerQueued> {
    checkStoredSteer(runId, steer, max);
    // One statement: the run's checkpoint, the id held, the count and the insert read one snapshot.
    // Two steerers racing at the very cap may both pass it (each counts without the other's row).
    const result = await this.query<{ run: boolean; held: boolean; queued: string; added: boolean }>(
      `queue of a steer for ${runId}`,
      `WITH run AS (SELECT run_id FROM ${this.runs} WHERE run_id = $1),
            held AS (SELECT 1 FROM ${this.table} WHERE run_id = $1 AND id = $2),
            queued AS (SELECT count(*) AS n FROM ${this.table} WHERE run_id = $1),
            added AS (
              INSERT INTO ${this.table} (run_id, id, content, created_at)
              SELECT $1, $2, $3, ${NOW_TEXT} FROM run WHERE NOT EXISTS (SELECT 1 FROM held) AND (SELECT n FROM queued) < $4
              ON CONFLICT (run_id, id) DO NOTHING RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM run) AS run, EXISTS (SELECT 1 FROM held) AS held,
              (SELECT n FROM queued)::text AS queued, EXISTS (SELECT 1 FROM added) AS added`,
      [runId, steer.id, steer.content, max],
    );
    const row = result.rows[0];
    if (row?.added) return 'queued';
    if (!row?.run) return 'no-run';
    if (row.held || Number(row.queued) < max) return 'held'; // under the cap, only a racing insert of the same id stops it
    return 'full';
  }

  async queuedSteers(runId: string, limit: number): Promise<StoredSteer[]> {
    checkSteerRun(runId, 'queuedSteers', limit);
    const result = await this.query<StoredSteer>(
      `read of the steers of ${runId}`,
      `SELECT id, content FROM ${this.table} WHERE run_id = $1 ORDER BY seq LIMIT $2`,
      [runId, limit],
    );
    return result.rows.map((row) => ({ id: row.id, content: row.content }));
  }

  async dropSteers(runId: string, ids: readonly string[]): Promise<number> {
    checkSteerRun(runId, 'dropSteers', ids);
    if (ids.length === 0) return 0;
    const result = await this.query(
      `drop of the steers of ${runId}`,
      `DELETE FROM ${this.table} WHERE run_id = $1 AND id = ANY($2::text[])`,
      [runId, ids],
    );
    return result.rowCount ?? 0;
  }
}
