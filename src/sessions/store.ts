import { hasMethods } from './checks';
import type { ChatMessage } from '../models/types';

/**
 * The run a session is busy with. `running`: a process drives it and holds the session
 * until `until` (epoch ms, that process's clock); a holder that died is taken over after
 * it. `halted`: the run waits for answers; the session stays with it until it ends.
 */
export interface ActiveRun {
  runId: string;
  phase: 'running' | 'halted';
  /** Epoch ms: while `running`, the hold lapses at this instant. */
  until?: number;
}

/** One conversation as a {@link SessionStore} keeps it. Everything round-trips as JSON. */
export interface StoredSession {
  id: string;
  /** Starts at 1 and grows by one with every save: the compare-and-set of {@link SessionStore.saveSession}. */
  version: number;
  /** The thread, oldest first, without the system prompt. */
  messages: ChatMessage[];
  /** The run the session is busy with, if any. */
  active?: ActiveRun;
  /**
   * What the session's ended runs spent, all together: what a runner's `sessionBudget` is
   * counted against (docs/agents.md, "Budgets"). Absent until a run of it ended.
   */
  spent?: SessionSpending;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339. */
  updatedAt: string;
}

/** What a session's runs spent: tokens, US dollars (when priced), tool calls, and wall time driving them. */
export interface SessionSpending {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  toolCalls: number;
  wallMs: number;
}

/** What {@link SessionStore.listSessions} says of each session, without its thread. */
export interface SessionSummary {
  id: string;
  version: number;
  messageCount: number;
  /** The run the session is busy with, if any. */
  activeRun?: string;
  createdAt: string;
  updatedAt: string;
}

/** Filter of {@link SessionStore.listSessions}: most recently updated first, at most `limit`. */
export interface SessionFilter {
  limit?: number;
}

/**
 * Where conversations are kept: one row per session, each save a compare-and-set on its
 * version, so two processes never interleave one thread. The three stores
 * (`MemoryStore`, `SqliteStore`, `PostgresStore`) are each one, in the
 * same file or tables as their suspensions. The runner's `session` option reads and writes it
 * (docs/chat.md, "Sessions").
 */
export interface SessionStore {
  loadSession(id: string): Promise<StoredSession | undefined>;
  /**
   * Saves `session` if its version is one more than the stored one (1 creates it). Returns
   * false, and changes nothing, on a version conflict.
   */
  saveSession(session: StoredSession): Promise<boolean>;
  listSessions(filter?: SessionFilter): Promise<SessionSummary[]>;
  /** Deletes a session; false when there was none. */
  deleteSession(id: string): Promise<boolean>;
  /** The session whose active run is `runId`, if any. */
  sessionOfRun(runId: string): Promise<string | undefined>;
}

const SESSION_STORE_METHODS: ReadonlyArray<keyof SessionStore> = [
  'loadSession',
  'saveSession',
  'listSessions',
  'deleteSession',
  'sessionOfRun',
];

/** True when `value` has the methods of a {@link SessionStore}. */
export function isSessionStore(value: unknown): value is SessionStore {
  return hasMethods<SessionStore>(value, SESSION_STORE_METHODS);
}
