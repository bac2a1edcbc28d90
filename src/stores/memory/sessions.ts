import { jsonCopy } from '../json';
import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../../sessions/store';
import { checkSession, checkSessionFilter, checkSessionId } from '../../sessions/validate';

/** The sessions of a `MemoryStore`: JSON copies in a map, so it behaves as the durable stores do. */
export class MemorySessions implements SessionStore {
  private readonly sessions = new Map<string, StoredSession>();

  constructor(private readonly assertOpen: () => void) {}

  async loadSession(id: string): Promise<StoredSession | undefined> {
    this.assertOpen();
    checkSessionId(id, 'loadSession');
    const stored = this.sessions.get(id);
    return stored ? structuredClone(stored) : undefined;
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    this.assertOpen();
    checkSession(session);
    const copy = jsonCopy(session, `session ${session.id}`);
    const stored = this.sessions.get(session.id);
    if (session.version !== (stored ? stored.version + 1 : 1)) return false;
    this.sessions.set(session.id, copy);
    return true;
  }

  async listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    this.assertOpen();
    checkSessionFilter(filter);
    const all = [...this.sessions.values()].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    return all.slice(0, filter.limit ?? all.length).map(summaryOf);
  }

  async deleteSession(id: string): Promise<boolean> {
    this.assertOpen();
    checkSessionId(id, 'deleteSession');
    return this.sessions.delete(id);
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    this.assertOpen();
    for (const session of this.sessions.values()) if (session.active?.runId === runId) return session.id;
    return undefined;
  }
}

export function summaryOf(session: StoredSession): SessionSummary {
  const summary: SessionSummary = {
    id: session.id,
    version: session.version,
    messageCount: session.messages.length,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
  };
  if (session.active) summary.activeRun = session.active.runId;
  return summary;
}
