import { PostgresPart, type TableLayout } from './part';
import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../../sessions/store';
import { checkSession, checkSessionFilter, checkSessionId } from '../../sessions/validate';
import { sessionOf, sessionRowOf, summaryOfRow, type SessionRow } from '../sessions';

// Its former home, where streams.ts and steers.ts still import it from (./part is where it lives).
export type { PostgresQuery } from './part';

/**
 * Layout step 4 of the PostgreSQL store, sessions' block: as in SQLite, one row per
 * conversation, `state` kept as `json` (the text as written).
 */
export const SESSIONS_POSTGRES: TableLayout = {
  columns: `
       id             text PRIMARY KEY,
       version        integer NOT NULL CHECK (version >= 1),
       state          json NOT NULL,
       message_count  integer NOT NULL,
       active_run     text,
       created_at     text NOT NULL,
       updated_at     text NOT NULL`,
  indexes: { sessions_run_idx: '(active_run) WHERE active_run IS NOT NULL', sessions_upd_idx: '(updated_at COLLATE "C" DESC, id)' },
};

/** The sessions of a `PostgresStore`, in its schema. */
export class PostgresSessions extends PostgresPart implements SessionStore {
  async loadSession(id: string): Promise<StoredSession | undefined> {
    checkSessionId(id, 'loadSession');
    const result = await this.query<SessionRow>(
      `load of session ${id}`,
      `SELECT id, version, state::text AS state, message_count, active_run, created_at, updated_at FROM ${this.table} WHERE id = $1`,
      [id],
    );
    return result.rows[0] ? sessionOf(result.rows[0]) : undefined;
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    checkSession(session);
    const p = sessionRowOf(session);
    if (!Number.isSafeInteger(session.version) || session.version < 1) return false;
    const result =
      session.version === 1
        ? await this.query(
            `save of session ${p.id}`,
            `INSERT INTO ${this.table} (id, version, state, message_count, active_run, created_at, updated_at)
             VALUES ($1, 1, $2::json, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
            [p.id, p.state, p.message_count, p.active_run, p.created_at, p.updated_at],
          )
        : await this.query(
            `save of session ${p.id}`,
            `UPDATE ${this.table} SET version = $2, state = $3::json, message_count = $4, active_run = $5, updated_at = $6
              WHERE id = $1 AND version = $2 - 1`,
            [p.id, p.version, p.state, p.message_count, p.active_run, p.updated_at],
          );
    return result.rowCount === 1;
  }

  async listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    checkSessionFilter(filter);
    const result = await this.query<Omit<SessionRow, 'state'>>(
      'list of sessions',
      `SELECT id, version, message_count, active_run, created_at, updated_at FROM ${this.table}
        ORDER BY updated_at COLLATE "C" DESC, id LIMIT $1::bigint`,
      [filter.limit ?? null],
    );
    return result.rows.map(summaryOfRow);
  }

  async deleteSession(id: string): Promise<boolean> {
    checkSessionId(id, 'deleteSession');
    const result = await this.query(`delete of session ${id}`, `DELETE FROM ${this.table} WHERE id = $1`, [id]);
    return result.rowCount === 1;
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    const result = await this.query<{ id: string }>(
      `session of run ${runId}`,
      `SELECT id FROM ${this.table} WHERE active_run = $1 LIMIT 1`,
      [runId],
    );
    return result.rows[0]?.id;
  }
}
