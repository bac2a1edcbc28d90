import { InvalidArgumentError } from '../errors';
import type { SessionFilter, SessionSpending, StoredSession } from './store';

/** Session ids: printable, at most 200 characters (they name rows and appear in URLs). */
const SESSION_ID = /^[\x21-\x7e]{1,200}$/;

export function checkSessionId(id: unknown, operation: string): asserts id is string {
  if (typeof id !== 'string' || !SESSION_ID.test(id))
    throw new InvalidArgumentError(`${operation}: a session id is 1 to 200 printable ASCII characters without spaces`);
}

export function checkSession(session: unknown): asserts session is StoredSession {
  const s = session as Partial<StoredSession>;
  if (typeof session !== 'object' || session === null) throw new InvalidArgumentError('saveSession: the session must be an object');
  checkSessionId(s.id, 'saveSession');
  if (!Array.isArray(s.messages)) throw new InvalidArgumentError('saveSession: messages must be an array');
  if (typeof s.createdAt !== 'string' || typeof s.updatedAt !== 'string')
    throw new InvalidArgumentError('saveSession: createdAt and updatedAt must be RFC 3339 strings');
  const active = s.active;
  if (
    active !== undefined &&
    (typeof active !== 'object' ||
      active === null ||
      typeof active.runId !== 'string' ||
      (active.phase !== 'running' && active.phase !== 'halted') ||
      (active.until !== undefined && !Number.isFinite(active.until)))
  )
    throw new InvalidArgumentError('saveSession: active must be { runId, phase: "running" | "halted", until? }');
  if (s.spent !== undefined && !isSpending(s.spent))
    throw new InvalidArgumentError(
      'saveSession: spent must be { inputTokens, outputTokens, costUsd, toolCalls, wallMs }, each a number >= 0',
    );
}

/** True for a session's spending: every count a finite number, none negative. */
export function isSpending(value: unknown): value is SessionSpending {
  if (typeof value !== 'object' || value === null) return false;
  const spent = value as Record<string, unknown>;
  return (['inputTokens', 'outputTokens', 'costUsd', 'toolCalls', 'wallMs'] as const).every(
    (key) => typeof spent[key] === 'number' && Number.isFinite(spent[key]) && spent[key] >= 0,
  );
}

export function checkSessionFilter(filter: unknown): asserts filter is SessionFilter {
  const f = filter as SessionFilter;
  if (typeof filter !== 'object' || filter === null) throw new InvalidArgumentError('listSessions: the filter must be an object');
  if (f.limit !== undefined && (!Number.isSafeInteger(f.limit) || f.limit < 0))
    throw new InvalidArgumentError('listSessions: limit must be an integer >= 0');
}
