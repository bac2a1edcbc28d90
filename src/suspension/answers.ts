import { failure } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';

/** How an in-process host answers a suspension: ask a human, wait, return the answer. */
export type WaitFor = (request: PendingRequest) => Answer | Promise<Answer>;

/** Why a suspension ended without its tool running again. */
export type RefusalStatus = 'declined' | 'expired' | 'cancelled';

/** What the model is told when a suspension is refused: formatted by {@link FormatRefusal}. */
export interface Refusal {
  request: PendingRequest;
  status: RefusalStatus;
  /** The human's own words, when the answer carried them (`data.reason`), cut to 500 characters. */
  reason?: string;
}

/**
 * Words the text fed back for a refused suspension. It should start with
 * `declined/expired: <prompt>`, which other implementations of the contract match on.
 */
export type FormatRefusal = (refusal: Refusal) => string;

/** Longest chain of requests one call may make, by default. */
export const DEFAULT_MAX_CHAIN = 4;
const MAX_REASON = 500;

/** Why `answer` is not Answer-shaped, or `undefined` when it is. */
export function answerProblem(answer: unknown): string | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return 'expected an object { id, ok, data?, reason? }';
  const { id, ok, data, reason } = answer as Record<string, unknown>;
  if (typeof id !== 'string' || id === '') return 'id must be a non-empty string';
  if (typeof ok !== 'boolean') return 'ok must be a boolean';
  if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data)))
    return 'data must be an object when present';
  if (reason !== undefined && reason !== 'declined' && reason !== 'cancelled' && reason !== 'expired') {
    return 'reason must be "declined", "cancelled" or "expired" when present';
  }
  return undefined;
}

/** True once the request's `expiresAt` has passed at `now`. */
export function isExpired(request: PendingRequest, now: Date): boolean {
  return request.expiresAt !== undefined && Date.parse(request.expiresAt) <= now.getTime();
}

/** Why a request's `expiresAt` cannot be judged, or `undefined` when it can (or is absent). */
export function expiryProblem(request: PendingRequest): string | undefined {
  if (request.expiresAt === undefined) return undefined;
  if (typeof request.expiresAt === 'string' && !Number.isNaN(Date.parse(request.expiresAt))) return undefined;
  return `suspension ${request.id} has an invalid expiresAt ${JSON.stringify(request.expiresAt)}: expected an RFC 3339 instant`;
}

/** What refused a request: its expiry (judged at `now`), else the answer's own reason. */
export function refusalOf(request: PendingRequest, answer: Answer, now: Date): Refusal {
  const status: RefusalStatus = isExpired(request, now)
    ? 'expired'
    : answer.reason === 'cancelled'
      ? 'cancelled'
      : answer.reason === 'expired'
        ? 'expired'
        : 'declined';
  const words = answer.data?.reason;
  const refusal: Refusal = { request, status };
  if (typeof words === 'string' && words.trim() !== '')
    refusal.reason = words.length > MAX_REASON ? `${words.slice(0, MAX_REASON)}…` : words;
  return refusal;
}

/** The default {@link FormatRefusal}: `declined/expired: <prompt> (declined: "<reason>")`. */
export const formatRefusal: FormatRefusal = ({ request, status, reason }) =>
  `declined/expired: ${request.prompt} (${status}${reason === undefined ? '' : `: ${JSON.stringify(reason)}`})`;

/** The result of a refused suspension, worded by `format` (falling back to the default if it throws or returns no text). */
export function refused(refusal: Refusal, format: FormatRefusal): ToolResult {
  let text: unknown;
  try {
    text = format(refusal);
  } catch {
    text = undefined;
  }
  return failure(typeof text === 'string' && text !== '' ? text : formatRefusal(refusal));
}

/**
 * Why a replay's new request must not become the next link, or `undefined` when it may:
 * re-asking the kind just answered would loop on one question, and a chain has a limit.
 * `links` counts the requests so far, the answered one included.
 */
export function chainStop(answered: PendingRequest, next: PendingRequest, links: number, maxChain: number): ToolResult | undefined {
  if (next.kind === answered.kind || links >= maxChain) return failure(`unresolved: ${next.prompt}`);
  return undefined;
}
