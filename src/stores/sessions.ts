import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../sessions/store';
import { StreamLogHolder } from '../sessions/stream-holder';
import { parseStored } from './rows';
import { isSpending } from '../sessions/validate';
import { StoreError } from '../errors';
import { toJson } from '../suspension/json';

/**
 * The session side of a SQL store: its sessions sit in the same file or schema, kept by a part
 * of their own (each backend's `sessions.ts`), and every session method is that part's.
 */
export abstract class StoreSessions extends StreamLogHolder implements SessionStore {
  /** Keeps this store's sessions, and checks the store is open where the store would. */
  protected abstract readonly sessions: SessionStore;

  loadSession(id: string): Promise<StoredSession | undefined> {
    return this.sessions.loadSession(id);
  }

  saveSession(session: StoredSession): Promise<boolean> {
    return this.sessions.saveSession(session);
  }

  listSessions(filter?: SessionFilter): Promise<SessionSummary[]> {
    return this.sessions.listSessions(filter);
  }

  deleteSession(id: string): Promise<boolean> {
    return this.sessions.deleteSession(id);
  }

  sessionOfRun(runId: string): Promise<string | undefined> {
    return this.sessions.sessionOfRun(runId);
  }
}

/** The JSON a SQL store keeps in a session's `state` column: the thread, the active run, what its runs spent (no schema step: it is JSON). */
interface SessionState {
  messages: StoredSession['messages'];
  active?: StoredSession['active'];
  spent?: StoredSession['spent'];
}

/** A session as the SQL stores keep it: the thread as JSON text, the active run also as a column of its own. */
export interface SessionRow {
  id: string;
  version: number;
  state: string;
  message_count: number;
  active_run: string | null;
  created_at: string;
  updated_at: string;
}

/** The row a SQL store writes for `session`; its JSON is serialised here, before any statement runs. */
export function sessionRowOf(session: StoredSession): SessionRow {
  const state: SessionState = { messages: session.messages };
  if (session.active) state.active = session.active;
  if (session.spent) state.spent = session.spent;
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

/** The session a stored row holds. Drivers may hand integers back as strings, hence `Number`. */
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
  if (state.spent !== undefined) {
    // Read into every budget check of the session's runs: a row edited by hand must not pass as spending.
    if (!isSpending(state.spent)) throw new StoreError(`the stored JSON of session ${row.id} is corrupt: spent is not a spending record`);
    session.spent = state.spent;
  }
  return session;
}

/** What a listing says of a stored session, read without its `state`. */
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
