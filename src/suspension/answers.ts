import { UnknownSuspensionError } from '../errors';
import { failure } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import type { SuspendedCall, SuspensionStore } from './store';

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

/** Default cap on an answer's `data`, in bytes of its JSON: {@link ResumeCoordinatorOptions.maxAnswerBytes}. */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024;
/** How deep an answer's `data` may nest. */
export const MAX_ANSWER_DEPTH = 32;
/** The longest suspension id any store is asked about; a longer one is unknown. */
export const MAX_SUSPENSION_ID_LENGTH = 512;
/** Keys that could reach a prototype: an answer carrying one is refused. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Where a checked answer keeps the cap its `data` was checked under, and where an answer
 * bound to its stored call keeps that call: symbols, and not enumerable, so JSON, spreads,
 * stores and `toEqual` never see them. The value carries the fact; nothing remembers it aside.
 */
const CHECKED_UNDER: unique symbol = Symbol('toolnexus.checkedUnder');
const READ_FROM: unique symbol = Symbol('toolnexus.readFrom');

/**
 * An answer {@link checkAnswer} checked and copied: `data` plain JSON within the cap it was
 * checked under. It is an {@link Answer} like any other; `ResumeCoordinator.resolve` takes it
 * without checking it again when that cap is no larger than its own.
 */
export type CheckedAnswer = Answer & { readonly [CHECKED_UNDER]: number };

/**
 * A checked answer with the stored call its id names, as read from a store once before the
 * claim (`undefined`: no call by that id): the path of an answer hands it down (answerAs, the
 * runner's resume, `resolve`) instead of each step reading the call again.
 */
export type AnswerWithCall = CheckedAnswer & { readonly [READ_FROM]: StoredCallRead };

/** A stored call as one read found it, and the store it was read from. */
interface StoredCallRead {
  readonly store: SuspensionStore;
  readonly call: SuspendedCall | undefined;
}

/** A checked answer, or why there is none. */
export type AnswerCheck = { ok: true; answer: CheckedAnswer } | { ok: false; problem: string };

/** Whether `answer` is a {@link CheckedAnswer} checked under a cap no larger than `maxDataBytes`. */
export function isCheckedAnswer(answer: unknown, maxDataBytes: number): answer is CheckedAnswer {
  if (typeof answer !== 'object' || answer === null) return false;
  try {
    const under = (answer as Partial<CheckedAnswer>)[CHECKED_UNDER];
    return typeof under === 'number' && under <= maxDataBytes;
  } catch {
    return false; // a hostile getter: not a copy checkAnswer made
  }
}

/** `answer` bound to `call`, the stored call its id names as just read from `store` (`undefined`: none). */
export function withStoredCall(answer: CheckedAnswer, store: SuspensionStore, call: SuspendedCall | undefined): AnswerWithCall {
  const copy: Answer = { ...answer };
  Object.defineProperty(copy, CHECKED_UNDER, { value: answer[CHECKED_UNDER] });
  Object.defineProperty(copy, READ_FROM, { value: { store, call } satisfies StoredCallRead });
  return copy as AnswerWithCall;
}

/** The stored call `answer` was bound to, as read: `undefined` when that read found none. */
export function storedCallOf(answer: AnswerWithCall): SuspendedCall | undefined {
  return answer[READ_FROM].call;
}

/** Whether `answer` carries its stored call as read from `store`. */
export function isAnswerWithCall(answer: CheckedAnswer, store: SuspensionStore): answer is AnswerWithCall {
  return (answer as Partial<AnswerWithCall>)[READ_FROM]?.store === store;
}

/** Why `answer` is not Answer-shaped, or `undefined` when it is (see {@link checkAnswer}). */
export function answerProblem(answer: unknown, maxDataBytes?: number): string | undefined {
  const checked = checkAnswer(answer, maxDataBytes);
  return checked.ok ? undefined : checked.problem;
}

/**
 * Checks an answer and copies it through a prototype-safe path: `data` must be plain JSON
 * (objects, arrays, strings, finite numbers, booleans, null), nested at most
 * {@link MAX_ANSWER_DEPTH} deep, with no own `__proto__`, `constructor` or `prototype` key,
 * and, when `maxDataBytes` is given, no larger than that as JSON. Fields beyond
 * `id`, `ok`, `data` and `reason` are dropped; a `data` or `reason` of `null` (how other ports of
 * the contract serialise an absent field) reads as absent. Never throws, whatever the answer's getters do.
 * The copy is a {@link CheckedAnswer}.
 */
export function checkAnswer(answer: unknown, maxDataBytes?: number): AnswerCheck {
  try {
    return checkFields(answer, maxDataBytes);
  } catch (error) {
    if (error instanceof DataProblem) return { ok: false, problem: error.message };
    return { ok: false, problem: 'the answer cannot be read' };
  }
}

function checkFields(answer: unknown, maxDataBytes: number | undefined): AnswerCheck {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
    return { ok: false, problem: 'expected an object { id, ok, data?, reason? }' };
  const fields = answer as Record<string, unknown>;
  const { id, ok } = fields;
  // Wire compatibility: other ports of the contract (the Python one) serialise an absent field as null.
  const data = fields.data === null ? undefined : fields.data;
  const reason = fields.reason === null ? undefined : fields.reason;
  if (typeof id !== 'string' || id === '') return { ok: false, problem: 'id must be a non-empty string' };
  if (typeof ok !== 'boolean') return { ok: false, problem: 'ok must be a boolean' };
  if (data !== undefined && (typeof data !== 'object' || data === null || Array.isArray(data)))
    return { ok: false, problem: 'data must be an object when present' };
  if (reason !== undefined && reason !== 'declined' && reason !== 'cancelled' && reason !== 'expired') {
    return { ok: false, problem: 'reason must be "declined", "cancelled" or "expired" when present' };
  }
  const copy: Answer = { id, ok };
  if (data !== undefined) {
    const budget = { left: maxDataBytes ?? Number.POSITIVE_INFINITY, max: maxDataBytes };
    copy.data = copyJson(data, 'data', 0, budget) as Record<string, unknown>;
    if (maxDataBytes !== undefined && Buffer.byteLength(JSON.stringify(copy.data)) > maxDataBytes) throw tooLarge(maxDataBytes);
  }
  if (reason !== undefined) copy.reason = reason;
  const args = fields.args === null ? undefined : fields.args;
  if (args !== undefined) {
    if (typeof args !== 'object' || Array.isArray(args)) return { ok: false, problem: 'args must be an object when present' };
    if (!ok) return { ok: false, problem: 'args (edited arguments) come only with an approval (ok: true)' };
    const budget = { left: maxDataBytes ?? Number.POSITIVE_INFINITY, max: maxDataBytes };
    copy.args = copyJson(args, 'args', 0, budget) as Record<string, unknown>;
  }
  Object.defineProperty(copy, CHECKED_UNDER, { value: maxDataBytes ?? Number.POSITIVE_INFINITY });
  return { ok: true, answer: copy as CheckedAnswer };
}

class DataProblem extends Error {}

function tooLarge(maxDataBytes: number): DataProblem {
  return new DataProblem(`data is larger than ${maxDataBytes} bytes as JSON`);
}

/** A copy of `value` holding plain JSON only; counts bytes against `budget` as it goes, so a huge answer stops early. */
function copyJson(value: unknown, path: string, depth: number, budget: { left: number; max?: number }): unknown {
  const spend = (bytes: number) => {
    budget.left -= bytes;
    if (budget.left < 0 && budget.max !== undefined) throw tooLarge(budget.max);
  };
  switch (typeof value) {
    case 'string':
      spend(value.length + 2);
      return value;
    case 'boolean':
      spend(5);
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new DataProblem(`${path} must be a finite number`);
      spend(8);
      return value;
    case 'object':
      break;
    default:
      throw new DataProblem(`${path} is a ${typeof value}, not JSON`);
  }
  if (value === null) {
    spend(4);
    return null;
  }
  if (depth >= MAX_ANSWER_DEPTH) throw new DataProblem(`data is nested deeper than ${MAX_ANSWER_DEPTH} levels`);
  if (Array.isArray(value)) {
    spend(2 + value.length);
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) out.push(copyJson(value[i], `${path}[${i}]`, depth + 1, budget));
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) throw new DataProblem(`${path} is not a plain object`);
  const out: Record<string, unknown> = {};
  spend(2);
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) throw new DataProblem(`${path} has a forbidden key "${key}"`);
    const child = (value as Record<string, unknown>)[key];
    if (child === undefined) continue; // as JSON would
    spend(key.length + 4);
    out[key] = copyJson(child, `${path}.${key}`, depth + 1, budget);
  }
  return out;
}

/**
 * Why no store could hold suspension `id` (so it is unknown everywhere), or `undefined`:
 * NUL (PostgreSQL text refuses it), a lone surrogate (not UTF-8), more than {@link MAX_SUSPENSION_ID_LENGTH} characters.
 */
export function suspensionIdProblem(id: string): string | undefined {
  if (id.length > MAX_SUSPENSION_ID_LENGTH) return `longer than ${MAX_SUSPENSION_ID_LENGTH} characters`;
  if (id.includes('\u0000')) return 'contains NUL';
  if (/\p{Surrogate}/u.test(id)) return 'is not well-formed UTF-16';
  return undefined;
}

/** An id no store could hold is unknown, said before any store is asked (PostgreSQL would fail on NUL). */
export function assertStorableId(id: string): void {
  if (suspensionIdProblem(id) !== undefined) throw new UnknownSuspensionError(shownId(id));
}

/** An id as messages show it: cut when long, control characters escaped. */
export function shownId(id: string): string {
  const cut = id.length > 80 ? `${id.slice(0, 80)}… (${id.length} characters)` : id;
  return JSON.stringify(cut).slice(1, -1);
}

/** True once the request's `expiresAt` has passed at `now`. */
export function isExpired(request: PendingRequest, now: Date): boolean {
  return request.expiresAt !== undefined && Date.parse(request.expiresAt) <= now.getTime();
}

/**
 * Why a request a tool suspended with cannot be stored or sent (its `data` not plain JSON: a
 * cycle, a BigInt, a throwing `toJSON`), else why its `expiresAt` cannot be judged; `undefined`
 * when it can be kept. Checked before anything walks the request, so a cycle is an error
 * result rather than a stack overflow: `execute` never rejects (docs/design.md).
 */
export function requestProblem(request: PendingRequest): string | undefined {
  try {
    JSON.stringify(request);
  } catch (error) {
    const why = error instanceof Error ? error.message.split('\n')[0]! : 'it cannot be written as JSON';
    return `suspension ${String(request.id).slice(0, 80)} cannot be stored: its request is not plain JSON (${why.slice(0, 200)})`;
  }
  return expiryProblem(request);
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
/**
 * Refusal results this process made, with their status: the wire result is the contract's
 * `{ output, isError: true }` and nothing more, so what it was is kept beside it (weakly,
 * like the argument plans' caches) for the run's `toolCalls` records.
 */
const refusals = new WeakMap<ToolResult, RefusalStatus>();

/** The refusal status of a result {@link refused} made in this process, if it is one. */
export function refusalStatusOf(result: ToolResult): RefusalStatus | undefined {
  return refusals.get(result);
}

export function refused(refusal: Refusal, format: FormatRefusal): ToolResult {
  let text: unknown;
  try {
    text = format(refusal);
  } catch {
    text = undefined;
  }
  const result = failure(typeof text === 'string' && text !== '' ? text : formatRefusal(refusal));
  refusals.set(result, refusal.status);
  return result;
}

/**
 * Why a replay's new request must not become the next link, or `undefined` when it may:
 * re-asking the kind just answered would loop on one question, and a chain has a limit.
 * `links` counts the requests so far, the answered one included. A request marked
 * `data.followUp: true` says it is a new question of a conversation the answer went on
 * (a remote A2A agent asking again on its task, a declared approval asked again because an
 * approver's edit needs another quorum), so it may repeat the kind; the limit holds.
 */
export function chainStop(answered: PendingRequest, next: PendingRequest, links: number, maxChain: number): ToolResult | undefined {
  if ((next.kind === answered.kind && next.data?.followUp !== true) || links >= maxChain) return failure(`unresolved: ${next.prompt}`);
  return undefined;
}
