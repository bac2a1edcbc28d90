import { InvalidArgumentError } from '../errors';
import type { Answer } from '../results/wire';
import type { SettledStatus } from './store';

/**
 * Who answered a suspension: the authenticated identity (docs/operating.md, "Audit trail").
 * `id` is what rules and audits match on (a user id, `cli:alice`, `service:billing`);
 * `name` is only for display.
 */
export interface Principal {
  id: string;
  name?: string;
}

/**
 * The audit of an answer: who gave it and in which words, recorded with it, atomically with
 * its claim, by `ResumeCoordinator.resolve` (and `cancel`, `answerAs`). Stored on the call as
 * `answeredBy`, `comment` (and the store's `answeredAt`). One word for this data everywhere.
 */
export interface Audit {
  /** Who answered. Recorded as the call's `answeredBy`. */
  by?: Principal;
  /**
   * The human's own words for the answer, at most {@link MAX_COMMENT_LENGTH} characters.
   * For a decline or cancellation whose answer carries no `data.reason`, the comment becomes
   * `data.reason` too, so the model is told why (docs/operating.md, "Audit trail").
   */
  comment?: string;
}

/** Filter of `ResumeCoordinator.history` and `SuspensionStore.history`; fields combine with AND. */
export interface HistoryFilter {
  /** One settled status; without it, every settled status. */
  status?: SettledStatus;
  kind?: string;
  runId?: string;
  tool?: string;
  /** At most this many calls, newest first. The coordinator defaults it to {@link DEFAULT_HISTORY_LIMIT}. */
  limit?: number;
}

/** Longest comment an answer may carry, in characters (UTF-16 code units). */
export const MAX_COMMENT_LENGTH = 500;
/** Longest principal `id` or `name`, in characters. */
export const MAX_PRINCIPAL_LENGTH = 200;
/** How many settled calls `history` returns when the filter sets no limit. */
export const DEFAULT_HISTORY_LIMIT = 100;
/** The largest `limit` `history` accepts. */
export const MAX_HISTORY_LIMIT = 1000;

/**
 * Checks resolve options and copies the fields a store keeps (a principal's other fields
 * are dropped), or throws {@link InvalidArgumentError} naming `operation`. `undefined` when
 * there is nothing to record.
 */
export function checkedAudit(options: unknown, operation: string): Audit | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new InvalidArgumentError(`${operation}: options must be an object { by?, comment? }`);
  const { by, comment } = options as Record<string, unknown>;
  const copy: Audit = {};
  if (by !== undefined) copy.by = checkedPrincipal(by, operation);
  if (comment !== undefined) {
    if (typeof comment !== 'string') throw new InvalidArgumentError(`${operation}: comment must be a string`);
    if (comment.length > MAX_COMMENT_LENGTH)
      throw new InvalidArgumentError(`${operation}: comment is longer than ${MAX_COMMENT_LENGTH} characters (${comment.length})`);
    copy.comment = comment;
  }
  return copy.by === undefined && copy.comment === undefined ? undefined : copy;
}

function checkedPrincipal(by: unknown, operation: string): Principal {
  if (typeof by !== 'object' || by === null || Array.isArray(by))
    throw new InvalidArgumentError(`${operation}: by must be a principal { id, name? }`);
  const { id, name } = by as Record<string, unknown>;
  if (typeof id !== 'string' || id.trim() === '') throw new InvalidArgumentError(`${operation}: by.id must be a non-empty string`);
  if (id.length > MAX_PRINCIPAL_LENGTH)
    throw new InvalidArgumentError(`${operation}: by.id is longer than ${MAX_PRINCIPAL_LENGTH} characters`);
  if (name !== undefined && typeof name !== 'string') throw new InvalidArgumentError(`${operation}: by.name must be a string`);
  if (typeof name === 'string' && name.length > MAX_PRINCIPAL_LENGTH)
    throw new InvalidArgumentError(`${operation}: by.name is longer than ${MAX_PRINCIPAL_LENGTH} characters`);
  return name === undefined ? { id } : { id, name };
}

/**
 * A refusal's comment doubles as its `data.reason` (what the refusal text quotes to the
 * model) when the answer carries no reason of its own; an approval's data is left alone.
 */
export function withCommentAsReason(answer: Answer, comment: string | undefined): Answer {
  if (answer.ok || comment === undefined || comment.trim() === '') return answer;
  const reason = answer.data?.reason;
  if (typeof reason === 'string' && reason.trim() !== '') return answer;
  return { ...answer, data: { ...answer.data, reason: comment } };
}
