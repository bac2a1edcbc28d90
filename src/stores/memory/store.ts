import { MemoryRunStore } from '../../runner/memory';
import { MemorySessionStore } from '../../sessions/memory';
import type { SessionFilter, SessionStore, SessionSummary, StoredSession } from '../../sessions/store';
import type { MemorySuspensionStoreOptions } from '../../suspension/memory';

/** Options of {@link MemoryStore}. */
export type MemoryStoreOptions = MemorySuspensionStoreOptions;

/**
 * Keeps suspended calls, run checkpoints and sessions in this process's memory: one store
 * for a coordinator and a runner, for hosts that resolve in the same process and tests.
 * Nothing survives a restart; use {@link SqliteStore} (or a Postgres store) for that.
 *
 * It joins the in-memory part of each job, each beside its interface: the suspension store
 * (a `ResumeCoordinator`'s default), the run store it extends and the session store it
 * holds. Values are stored as JSON copies, so it behaves exactly like a durable store: what
 * comes back is what JSON can carry, and callers cannot mutate what is stored. Leases, and
 * the claim's instant that expiry is judged by, are read from `options.clock` (the system
 * clock by default), the only clock its callers share; tests pass a fake one. After
 * `close`, every method rejects with `StoreError`, sessions' included.
 */
export class MemoryStore extends MemoryRunStore implements SessionStore {
  private readonly sessions = new MemorySessionStore();

  async loadSession(id: string): Promise<StoredSession | undefined> {
    this.assertOpen();
    return this.sessions.loadSession(id);
  }

  async saveSession(session: StoredSession): Promise<boolean> {
    this.assertOpen();
    return this.sessions.saveSession(session);
  }

  async listSessions(filter?: SessionFilter): Promise<SessionSummary[]> {
    this.assertOpen();
    return this.sessions.listSessions(filter);
  }

  async deleteSession(id: string): Promise<boolean> {
    this.assertOpen();
    return this.sessions.deleteSession(id);
  }

  async sessionOfRun(runId: string): Promise<string | undefined> {
    this.assertOpen();
    return this.sessions.sessionOfRun(runId);
  }
}
