import { InvalidArgumentError } from '../errors';
import { fits, isObject, type MemberChecks } from './checks';
import type { ActiveRun, SessionFilter, SessionSpending, StoredSession } from './store';

/** Session ids: printable, at most 200 characters (they name rows and appear in URLs). */
const SESSION_ID = /^[\x21-\x7e]{1,200}$/;

export function checkSessionId(id: unknown, operation: string): asserts id is string {
  if (typeof id !== 'string' || !SESSION_ID.test(id))
    throw new InvalidArgumentError(`${operation}: a session id is 1 to 200 printable ASCII characters without spaces`);
}

/** What a session's active run must be. */
const ACTIVE: MemberChecks<ActiveRun> = {
  runId: (id) => typeof id === 'string',
  phase: (phase) => phase === 'running' || phase === 'halted',
  until: (until) => until === undefined || Number.isFinite(until),
};

export function checkSession(session: unknown): asserts session is StoredSession {
  const s = session as Partial<StoredSession>;
  if (typeof session !== 'object' || session === null) throw new InvalidArgumentError('saveSession: the session must be an object');
  checkSessionId(s.id, 'saveSession');
  if (!Array.isArray(s.messages)) throw new InvalidArgumentError('saveSession: messages must be an array');
  if (typeof s.createdAt !== 'string' || typeof s.updatedAt !== 'string')
    throw new InvalidArgumentError('saveSession: createdAt and updatedAt must be RFC 3339 strings');
  if (s.active !== undefined && !fits(s.active, ACTIVE))
    throw new InvalidArgumentError('saveSession: active must be { runId, phase: "running" | "halted", until? }');
  if (s.spent !== undefined && !isSpending(s.spent))
    throw new InvalidArgumentError(
      'saveSession: spent must be { inputTokens, outputTokens, costUsd, toolCalls, wallMs }, each a number >= 0',
    );
}

const SPENDING_KEYS: ReadonlyArray<keyof SessionSpending> = ['inputTokens', 'outputTokens', 'costUsd', 'toolCalls', 'wallMs'];

/** True for a session's spending: every count a finite number, none negative. */
export function isSpending(value: unknown): value is SessionSpending {
  return isObject(value) && SPENDING_KEYS.every((key) => typeof value[key] === 'number' && Number.isFinite(value[key]) && value[key] >= 0);
}

export function checkSessionFilter(filter: unknown): asserts filter is SessionFilter {
  const f = filter as SessionFilter;
  if (typeof filter !== 'object' || filter === null) throw new InvalidArgumentError('listSessions: the filter must be an object');
  if (f.limit !== undefined && (!Number.isSafeInteger(f.limit) || f.limit < 0))
    throw new InvalidArgumentError('listSessions: limit must be an integer >= 0');
}
