import { InvalidArgumentError, StoreError, SessionBusyError, SessionFullError } from '../../errors';
import type { ChatMessage } from '../../models/types';
import { sessionStoreOf } from '../../sessions/memory';
import { isSessionStore, type SessionSpending, type SessionStore, type StoredSession } from '../../sessions/store';
import { addedSpending } from '../core/budget';
import { checkSessionId } from '../../sessions/validate';
import type { RunResult } from '../core/types';

/** Bounds and timing of the sessions a runner keeps. */
export interface ThreadLimits {
  maxMessages: number;
  maxBytes: number;
  holdMs: number;
}

/** Saves of a finished run that lose a compare-and-set are retried this often (a write-back races only other write-backs). */
const MAX_SAVE_ATTEMPTS = 20;

/** What a run holding a session carries from `hold` to `finish`. */
export interface HeldSession {
  id: string;
  runId: string;
  /** The version this run wrote when it took the session. */
  version: number;
  createdAt: string;
  /** The thread as it was when the run took the session. */
  thread: ChatMessage[];
  /** What the session's ended runs had spent when the run took it. */
  spent?: SessionSpending;
}

/**
 * The runner's side of sessions: take a session for a run (a compare-and-set, refused with
 * {@link SessionBusyError} while another run holds it), and write the run's transcript back
 * when it ends or halts. The thread is only ever replaced by a run that held it, so two
 * requests never interleave turns.
 */
export class Threads {
  constructor(
    readonly store: SessionStore,
    private readonly limits: ThreadLimits,
  ) {}

  /**
   * Takes the session for `runId` and returns its thread.
   * @throws {@link SessionBusyError} another run holds it. @throws {@link SessionFullError} it is at its bound.
   */
  async hold(id: string, runId: string, added: readonly ChatMessage[]): Promise<HeldSession> {
    checkSessionId(id, 'run');
    const stored = await this.store.loadSession(id);
    const now = Date.now();
    const active = stored?.active;
    if (active && (active.phase === 'halted' || (active.until ?? 0) >= now)) throw new SessionBusyError(id, active.runId, active.phase);
    const thread = stored?.messages ?? [];
    const count = thread.length + added.length;
    if (count > this.limits.maxMessages)
      throw new SessionFullError(id, `${count} messages would exceed its bound of ${this.limits.maxMessages}; delete it or start another`);
    const bytes = Buffer.byteLength(JSON.stringify(thread)) + Buffer.byteLength(JSON.stringify(added));
    if (bytes > this.limits.maxBytes)
      throw new SessionFullError(id, `${bytes} bytes would exceed its bound of ${this.limits.maxBytes}; delete it or start another`);
    const at = new Date(now).toISOString();
    const next: StoredSession = {
      id,
      version: (stored?.version ?? 0) + 1,
      messages: thread,
      active: { runId, phase: 'running', until: now + this.limits.holdMs },
      createdAt: stored?.createdAt ?? at,
      updatedAt: at,
    };
    if (stored?.spent) next.spent = stored.spent;
    // Lost to a concurrent request: whoever won holds it now.
    if (!(await this.store.saveSession(next))) {
      const winner = (await this.store.loadSession(id))?.active;
      throw new SessionBusyError(id, winner?.runId ?? 'another run', winner?.phase ?? 'running');
    }
    const held: HeldSession = { id, runId, version: next.version, createdAt: next.createdAt, thread };
    if (stored?.spent) held.spent = stored.spent;
    return held;
  }

  /**
   * Writes the run's transcript as the thread, within the bounds (see {@link fitted}); a
   * halted run keeps the session until it ends.
   * @throws {@link SessionFullError} the run's own turn passes a bound: the session is given back as it was before the run.
   */
  async finish(held: HeldSession, result: RunResult): Promise<void> {
    const thread = this.fitted(result.messages, held.thread.length);
    if (!thread) {
      await this.release(held);
      throw this.full(held.id, result);
    }
    const saved = await this.store.saveSession(this.after(held.id, held.version + 1, held.createdAt, result, thread, held.spent));
    // Only a takeover after the hold lapsed (this process was too slow) can get here.
    if (!saved) throw new StoreError(`session ${held.id}: run ${held.runId} held it too long and another run took it over`);
  }

  /** Gives the session back unchanged after a run that failed. */
  async release(held: HeldSession): Promise<void> {
    const stored = await this.store.loadSession(held.id);
    if (!stored || stored.version !== held.version) return;
    const { active: _released, ...rest } = stored;
    await this.store.saveSession({ ...rest, version: stored.version + 1, updatedAt: new Date().toISOString() });
  }

  /**
   * After a resume or recover: the session waiting for this run (if any) gets its transcript,
   * within the bounds (see {@link fitted}; the run's own turn starts at its last user message).
   * @throws {@link SessionFullError} the run's own turn passes a bound: the session is given back as it was, without the run.
   */
  async writeBack(result: RunResult): Promise<void> {
    const thread = this.fitted(result.messages, lastUserIndex(result.messages));
    for (let attempt = 0; attempt < MAX_SAVE_ATTEMPTS; attempt++) {
      const id = await this.store.sessionOfRun(result.runId);
      if (id === undefined) return;
      const stored = await this.store.loadSession(id);
      if (!stored || stored.active?.runId !== result.runId) return;
      // A later result of this run (the one that ended it, or halted it again) was written
      // already. Both keep the run's own turn whole, so the part after its last user message
      // compares them even when older turns were dropped.
      if (result.status === 'halted' && ownTurnLength(stored.messages) > ownTurnLength(result.messages)) return;
      if (!thread) {
        const { active: _released, ...rest } = stored;
        if (await this.store.saveSession({ ...rest, version: stored.version + 1, updatedAt: new Date().toISOString() }))
          throw this.full(id, result);
        continue;
      }
      if (await this.store.saveSession(this.after(id, stored.version + 1, stored.createdAt, result, thread, stored.spent))) return;
    }
    throw new StoreError(`run ${result.runId}: its session kept changing; the transcript was not written`);
  }

  /**
   * The thread a run leaves, within the bounds: all of `messages` when they fit, else the
   * oldest whole turns (each from a user message, so every tool call keeps its result) dropped
   * until the rest fits, never a message from `keep` on (the run's own turn: it records what
   * ran). Undefined when even that turn passes a bound. A bound is checked when a run takes the
   * session too ({@link hold}), but only the write sees what the run's tool calls added.
   */
  private fitted(messages: ChatMessage[], keep: number): ChatMessage[] | undefined {
    const { maxMessages, maxBytes } = this.limits;
    // The bytes of a thread as JSON: its messages', the commas between them and the brackets.
    const sizes = messages.map((message) => Buffer.byteLength(JSON.stringify(message)));
    let bytes = 2 + sizes.reduce((sum, size) => sum + size, 0) + Math.max(0, messages.length - 1);
    for (let from = 0; from <= Math.min(keep, messages.length - 1); from++) {
      const count = messages.length - from;
      if ((from === 0 || messages[from]?.role === 'user') && count <= maxMessages && bytes <= maxBytes)
        return from === 0 ? messages : messages.slice(from);
      bytes -= (sizes[from] as number) + (count > 1 ? 1 : 0);
    }
    return messages.length === 0 ? messages : undefined;
  }

  private full(id: string, result: RunResult): SessionFullError {
    const count = result.messages.length;
    const bytes = Buffer.byteLength(JSON.stringify(result.messages));
    return new SessionFullError(
      id,
      `run ${result.runId} grew its thread to ${count} messages and ${bytes} bytes, and its own turn alone passes the bound of ` +
        `${this.limits.maxMessages} messages and ${this.limits.maxBytes} bytes; the session is kept as it was before the run (the run's result is in its checkpoint, if it has one)`,
    );
  }

  /**
   * The session after `result`: its thread, and the run holding it while halted; an ended run's
   * spending is added to the session's (a halted run's is counted once it ends).
   */
  private after(
    id: string,
    version: number,
    createdAt: string,
    result: RunResult,
    messages: ChatMessage[],
    spent: SessionSpending | undefined,
  ): StoredSession {
    const session: StoredSession = { id, version, messages, createdAt, updatedAt: new Date().toISOString() };
    if (result.status === 'halted') {
      session.active = { runId: result.runId, phase: 'halted' };
      if (spent) session.spent = spent;
    } else {
      session.spent = addedSpending(spent, result.usage, result.spend);
    }
    return session;
  }
}

/** Where the newest turn starts: the last user message (0 when there is none). */
function lastUserIndex(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return i;
  return 0;
}

/** How many messages the newest turn has. */
function ownTurnLength(messages: readonly ChatMessage[]): number {
  return messages.length - lastUserIndex(messages);
}

/** What the runner's options say of sessions: where they are kept, and their bounds. */
export interface ThreadOptions {
  sessions?: SessionStore;
  maxSessionMessages?: number;
  maxSessionBytes?: number;
  sessionHoldMs?: number;
}

/** The runner's threads over `options.sessions`, else over `store` when it keeps sessions; undefined when neither does. */
export function threadsOf(options: ThreadOptions, store: unknown): Threads | undefined {
  const sessions = options.sessions ?? sessionStoreOf(store);
  if (options.sessions !== undefined && !isSessionStore(options.sessions))
    throw new InvalidArgumentError('sessions must be a SessionStore (loadSession, saveSession, listSessions, deleteSession, sessionOfRun)');
  const limit = (value: number | undefined, fallback: number, name: string): number => {
    const chosen = value ?? fallback;
    if (!Number.isSafeInteger(chosen) || chosen < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer, got ${String(value)}`);
    return chosen;
  };
  const limits = {
    maxMessages: limit(options.maxSessionMessages, 10_000, 'maxSessionMessages'),
    maxBytes: limit(options.maxSessionBytes, 8 * 1024 * 1024, 'maxSessionBytes'),
    holdMs: limit(options.sessionHoldMs, 600_000, 'sessionHoldMs'),
  };
  return sessions ? new Threads(sessions, limits) : undefined;
}
