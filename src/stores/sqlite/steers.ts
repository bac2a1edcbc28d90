import type { SteeringQueue, SteerQueued, StoredSteer } from '../../runner/core/store';
import { checkSteerRun, checkStoredSteer } from '../../runner/durability/store-checks';
import { immediate, type SqliteConnection, type SqliteStatement } from './driver';

/**
 * Schema step 4 of the SQLite store, steering's block (docs/agents.md, "Steering"): the
 * messages steered into a run another process drives, a row each, apart from the run's
 * checkpoint (a steer does not touch the driver's version), until the driver takes them. A
 * run's rows go with its checkpoint (a prune deletes both): the trigger deletes them.
 */
export const STEERS_SQLITE_DDL = `
    CREATE TABLE run_steers (
      seq        INTEGER PRIMARY KEY,
      run_id     TEXT NOT NULL,
      id         TEXT NOT NULL,
      content    TEXT NOT NULL,
      created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
      UNIQUE (run_id, id)
    );
    CREATE TRIGGER runs_steers_gone AFTER DELETE ON runs BEGIN
      DELETE FROM run_steers WHERE run_id = OLD.run_id;
    END;
`;

/** The steering queue of a `SqliteStore`, in the same file. */
export class SqliteSteers implements SteeringQueue {
  private readonly runExists: SqliteStatement;
  private readonly held: SqliteStatement;
  private readonly count: SqliteStatement;
  private readonly insert: SqliteStatement;
  private readonly read: SqliteStatement;
  private readonly drop: SqliteStatement;

  constructor(
    private readonly db: SqliteConnection,
    /** Runs one statement, translating a driver error into the store's own. */
    private readonly run: <T>(work: () => T, what: string) => T,
    /** The store's check that it is still open, made before anything else. */
    private readonly assertOpen: () => void,
  ) {
    this.runExists = db.prepare('SELECT 1 AS kept FROM runs WHERE run_id = ?');
    this.held = db.prepare('SELECT 1 AS held FROM run_steers WHERE run_id = @run_id AND id = @id');
    this.count = db.prepare('SELECT COUNT(*) AS queued FROM run_steers WHERE run_id = ?');
    this.insert = db.prepare('INSERT INTO run_steers (run_id, id, content) VALUES (@run_id, @id, @content)');
    this.read = db.prepare('SELECT id, content FROM run_steers WHERE run_id = @run_id ORDER BY seq LIMIT @limit');
    this.drop = db.prepare('DELETE FROM run_steers WHERE run_id = @run_id AND id IN (SELECT value FROM json_each(@ids))');
  }

  async queueSteer(runId: string, steer: StoredSteer, max: number): Promise<SteerQueued> {
    this.assertOpen();
    checkStoredSteer(runId, steer, max);
    // One IMMEDIATE transaction: two steerers at the cap do not both pass it.
    return this.run(
      () =>
        immediate(this.db, (): SteerQueued => {
          if (!this.runExists.get(runId)) return 'no-run';
          if (this.held.get({ run_id: runId, id: steer.id })) return 'held';
          const { queued } = this.count.get(runId) as { queued: number };
          if (Number(queued) >= max) return 'full';
          this.insert.run({ run_id: runId, id: steer.id, content: steer.content });
          return 'queued';
        }),
      `queue a steer for ${runId}`,
    );
  }

  async queuedSteers(runId: string, limit: number): Promise<StoredSteer[]> {
    this.assertOpen();
    checkSteerRun(runId, 'queuedSteers', limit);
    return this.run(() => this.read.all({ run_id: runId, limit }) as StoredSteer[], `read the steers of ${runId}`).map((row) => ({
      id: row.id,
      content: row.content,
    }));
  }

  async dropSteers(runId: string, ids: readonly string[]): Promise<number> {
    this.assertOpen();
    checkSteerRun(runId, 'dropSteers', ids);
    if (ids.length === 0) return 0;
    return Number(this.run(() => this.drop.run({ run_id: runId, ids: JSON.stringify(ids) }).changes, `drop the steers of ${runId}`));
  }
}
