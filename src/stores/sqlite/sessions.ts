import type Database from 'better-sqlite3';
import { toJson } from '../json';
import { parseStored } from '../rows';
import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../../sessions/store';
import { checkSession, checkSessionFilter, checkSessionId, type SessionState } from '../../sessions/validate';

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

interface SessionRow {
  id: string;
  version: number;
  state: string;
  message_count: number;
  active_run: string | null;
  created_at: string;
  updated_at: string;
}

/** The sessions of a `SqliteStore`, in the same file. */
export class SqliteSessions implements SessionStore {
  private readonly insert: Database.Statement;
  private readonly update: Database.Statement;
  private readonly read: Database.Statement;
  private readonly list: Database.Statement;
  private readonly remove: Database.Statement;
  private readonly ofRun: Database.Statement;

  constructor(
    db: Database.Database,
    /** Runs one statement, translating a driver error into the store's own. */
    private readonly run: <T>(work: () => T, what: string) => T,
  ) {
    this.insert = db.prepare(`
      INSERT INTO sessions (id, version, state, message_count, active_run, created_at, updated_at)
      VALUES (@id, 1, @state, @message_count, @active_run, @created_at, @updated_at) ON CONFLICT (id) DO NOTHING`);
    this.update = db.prepare(`
      UPDATE sessions SET version = @version, state = @state, message_count = @message_count, active_run = @active_run,
             updated_at = @updated_at
      WHERE id = @id AND version = @version - 1`);
    this.read = db.prepare('SELECT * FROM sessions WHERE id = ?');
    this.list = db.prepare(`SELECT id, version, message_count, active_run, created_at, updated_at FROM sessions
      ORDER BY updated_at DESC, id LIMIT ?`);
    this.remove = db.prepare('DELETE FROM sessions WHERE id = ?');
    this.ofRun = db.prepare('SELECT id FROM sessions WHERE active_run = ? LIMIT 1');
  }

  async loadSession(id: string): Promise<StoredSession | undefined> {
    checkSessionId(id, 'loadSession');
    const row = this.run(() => this.read.get(id) as SessionRow | undefined, `load session ${id}`);
    return row ? sessionOf(row) : undefined;
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    checkSession(session);
    const params = paramsOf(session);
    if (!Number.isSafeInteger(session.version) || session.version < 1) return false;
    const statement = session.version === 1 ? this.insert : this.update;
    return this.run(() => statement.run(params).changes === 1, `save session ${session.id}`);
  }

  async listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    checkSessionFilter(filter);
    const rows = this.run(() => this.list.all(filter.limit ?? -1) as SessionRow[], 'list sessions');
    return rows.map(summaryOfRow);
  }

  async deleteSession(id: string): Promise<boolean> {
    checkSessionId(id, 'deleteSession');
    return this.run(() => this.remove.run(id).changes === 1, `delete session ${id}`);
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    const row = this.run(() => this.ofRun.get(runId) as { id: string } | undefined, `find the session of run ${runId}`);
    return row?.id;
  }
}

/** The row values of a session, shared with the PostgreSQL store. */
export function paramsOf(session: StoredSession): SessionRow {
  const state: SessionState = { messages: session.messages };
  if (session.active) state.active = session.active;
  return {
    id: session.id,
    version: session.version,
    state: toJson(state, `session ${session.id}`),
    message_count: session.messages.length,
    active_run: session.active?.runId ?? null,
    created_at: session.createdAt,
    updated_at: session.updatedAt,
  };
}

export function sessionOf(row: SessionRow): StoredSession {
  const state = parseStored<SessionState>(row.state, `session ${row.id}`);
  const session: StoredSession = {
    id: row.id,
    version: Number(row.version),
    messages: state.messages,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (state.active) session.active = state.active;
  return session;
}

export function summaryOfRow(row: Omit<SessionRow, 'state'>): SessionSummary {
  const summary: SessionSummary = {
    id: row.id,
    version: Number(row.version),
    messageCount: Number(row.message_count),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.active_run !== null) summary.activeRun = row.active_run;
  return summary;
}

export type { SessionRow };
