import { MemorySuspensionStore } from '../suspension/memory';
import { jsonCopy } from '../suspension/json';
import { isSessionStore, type SessionFilter, type SessionStore, type SessionSummary, type StoredSession } from './store';
import { checkSession, checkSessionFilter, checkSessionId } from './validate';
import { MemoryStreamLog } from './stream-log';
import { StreamLogHolder } from './stream-holder';

/**
 * Keeps sessions in this process's memory: JSON copies in a map, so it behaves as the
 * durable stores do. A runner's sessions when its coordinator's store is an in-memory one
 * that keeps none; `MemoryStore` keeps its sessions in one.
 */
export class MemorySessionStore extends StreamLogHolder implements SessionStore {
  private readonly sessions = new Map<string, StoredSession>();
  /** The stream logs of the sessions' runs (docs/chat.md, "Reconnecting"). */
  readonly streams: MemoryStreamLog;

  /** `now`: the store's clock as RFC 3339, which a stream log's last write is stamped with. */
  constructor(now?: () => string) {
    super();
    this.streams = new MemoryStreamLog(now);
  }

  async loadSession(id: string): Promise<StoredSession | undefined> {
    checkSessionId(id, 'loadSession');
    const stored = this.sessions.get(id);
    return stored ? structuredClone(stored) : undefined;
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    checkSession(session);
    const copy = jsonCopy(session, `session ${session.id}`);
    const stored = this.sessions.get(session.id);
    if (session.version !== (stored ? stored.version + 1 : 1)) return false;
    this.sessions.set(session.id, copy);
    return true;
  }

  async listSessions(filter: SessionFilter = {}): Promise<SessionSummary[]> {
    checkSessionFilter(filter);
    const all = [...this.sessions.values()].sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : 0));
    return all.slice(0, filter.limit ?? all.length).map(summaryOf);
  }

  async deleteSession(id: string): Promise<boolean> {
    checkSessionId(id, 'deleteSession');
    return this.sessions.delete(id);
  }

  /** Sessions with no active run last saved before `cutoff` (RFC 3339), oldest first, and the deletion of one: what `MemoryStore.prune` works through. */
  prunableSessions(cutoff: string): StoredSession[] {
    return [...this.sessions.values()]
      .filter((session) => session.active === undefined && session.updatedAt < cutoff)
      .sort((a, b) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0))
      .map((session) => structuredClone(session));
  }

  deletePrunableSession(id: string, cutoff: string): boolean {
    const session = this.sessions.get(id);
    return session !== undefined && session.active === undefined && session.updatedAt < cutoff && this.sessions.delete(id);
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    for (const session of this.sessions.values()) if (session.active?.runId === runId) return session.id;
    return undefined;
  }
}

function summaryOf(session: StoredSession): SessionSummary {
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

/**
 * Where a runner without `sessions` keeps them: the coordinator's store when it is a session
 * store too; a {@link MemorySessionStore} of its own when that store is an in-memory
 * suspension store that keeps none; otherwise none (the runner then refuses the `session` option).
 */
export function sessionStoreOf(store: unknown): SessionStore | undefined {
  if (isSessionStore(store)) return store;
  return store instanceof MemorySuspensionStore ? new MemorySessionStore() : undefined;
}
