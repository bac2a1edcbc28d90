import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../../sessions/store';
import { checkSession, checkSessionFilter, checkSessionId } from '../../sessions/validate';
import { sessionOf, sessionRowOf, summaryOfRow, type SessionRow } from '../sessions';
import { SqlitePart } from './part';

/**
 * Schema step 4 of the SQLite store, sessions' block: one row per conversation, its thread
 * and active run as JSON in `state`, the active run also as an indexed column so a resumed
 * run finds its session.
 */
export const SESSIONS_SQLITE_DDL = `
    CREATE TABLE sessions (
      id            TEXT PRIMARY KEY,
      version       INTEGER NOT NULL,
      state         TEXT NOT NULL,
      message_count INTEGER NOT NULL,
      active_run    TEXT,
      created_at    TEXT NOT NULL,
      updated_at    TEXT NOT NULL
    );
    CREATE INDEX sessions_active_run ON sessions (active_run) WHERE active_run IS NOT NULL;
    CREATE INDEX sessions_updated ON sessions (updated_at);
`;

/** The sessions of a `SqliteStore`, in the same file. */
export class SqliteSessions extends SqlitePart implements SessionStore {
  private readonly insert = this.db.prepare(`
      INSERT INTO sessions (id, version, state, message_count, active_run, created_at, updated_at)
      VALUES (@id, 1, @state, @message_count, @active_run, @created_at, @updated_at) ON CONFLICT (id) DO NOTHING`);
  private readonly update = this.db.prepare(`
      UPDATE sessions SET version = @version, state = @state, message_count = @message_count, active_run = @active_run,
             updated_at = @updated_at
      WHERE id = @id AND version = @version - 1`);
  private readonly read = this.db.prepare('SELECT * FROM sessions WHERE id = ?');
  private readonly list = this.db.prepare(`SELECT id, version, message_count, active_run, created_at, updated_at FROM sessions
      ORDER BY updated_at DESC, id LIMIT ?`);
  private readonly remove = this.db.prepare('DELETE FROM sessions WHERE id = ?');
  private readonly ofRun = this.db.prepare('SELECT id FROM sessions WHERE active_run = ? LIMIT 1');

  async loadSession(id: string): Promise<StoredSession | undefined> {
    this.assertOpen();
    checkSessionId(id, 'loadSession');
    const row = this.run(() => this.read.get(id) as SessionRow | undefined, `load session ${id}`);
    return row ? sessionOf(row) : undefined;
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    this.assertOpen();
    checkSession(session);
    const params = sessionRowOf(session);
    if (!Number.isSafeInteger(session.version) || session.version < 1) return false;
    const statement = session.version === 1 ? this.insert : this.update;
    return this.run(() => statement.run(params).changes === 1, `save session ${session.id}`);
  }

  async listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    this.assertOpen();
    checkSessionFilter(filter);
    const rows = this.run(() => this.list.all(filter.limit ?? -1) as SessionRow[], 'list sessions');
    return rows.map(summaryOfRow);
  }

  async deleteSession(id: string): Promise<boolean> {
    this.assertOpen();
    checkSessionId(id, 'deleteSession');
    return this.run(() => this.remove.run(id).changes === 1, `delete session ${id}`);
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    this.assertOpen();
    const row = this.run(() => this.ofRun.get(runId) as { id: string } | undefined, `find the session of run ${runId}`);
    return row?.id;
  }
}
