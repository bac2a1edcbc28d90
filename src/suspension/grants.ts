import { InvalidArgumentError } from '../errors';
import { checkedAudit, type Principal } from './audit';

/** What a standing grant covers: the calls of one run, of one chat session, or made on one principal's behalf. */
export type GrantScope = 'run' | 'session' | 'principal';

/**
 * A standing approval (docs/who-may-answer.md, "Grants"): `by` approves, in advance, every
 * approval request of `tool` raised within its scope until `until` or until revoked. Each call
 * it approves is settled as answered by `by`, with the grant's id as the comment.
 */
export interface Grant {
  id: string;
  /** Who granted it: judged by the answer policy, and recorded as who approved each call. */
  by: Principal;
  tool: string;
  scope: GrantScope;
  /** The run id, session id or principal id the scope names. */
  subject: string;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339: the grant lapses then. Absent: until revoked. */
  until?: string;
  /** RFC 3339: when it was revoked. */
  revokedAt?: string;
}

/** What `ResumeCoordinator.grant` takes. */
export interface GrantInit {
  by: Principal;
  tool: string;
  scope: GrantScope;
  subject: string;
  /** A `Date`, or RFC 3339. */
  until?: Date | string;
}

/** What `ResumeCoordinator.grant` takes besides the grant. */
export interface GrantOptions {
  /**
   * The id of the pending approval request this grant is given in answer to (an "always
   * approve" of it, as the adapters map one): the grant must be for the tool that asked, and
   * `by` is judged as an approval of that request is, so a principal refused it (the answer
   * policy, separation of duties) is refused the grant, nothing stored.
   */
  answering?: string;
}

/** Where a call is, for matching grants: its tool, run, session and the principal it was made for. */
export interface GrantPlace {
  tool: string;
  runId?: string;
  session?: string;
  requestedBy?: string;
}

/** The grants a store keeps: optional on a {@link SuspensionStore}; every built-in store has them. */
export interface GrantStore {
  insertGrant(grant: Grant): Promise<void>;
  /** Marks it revoked at the store's now and returns it so; `undefined` when unknown or already revoked. */
  revokeGrant(id: string): Promise<Grant | undefined>;
  /**
   * Grants oldest first: every one (revoked and lapsed ones included), or, given a tool, only
   * that tool's grants not revoked: what an approval request of it is matched against.
   */
  listGrants(filter?: GrantFilter): Promise<Grant[]>;
}

/** Filter of {@link GrantStore.listGrants}: one tool's grants that are not revoked. */
export interface GrantFilter {
  tool: string;
}

const SCOPES: readonly GrantScope[] = ['run', 'session', 'principal'];

/** Checks what `grant` was given; the copy a store keeps. */
export function checkedGrant(init: GrantInit, id: string, now: number): Grant {
  if (typeof init !== 'object' || init === null) throw new InvalidArgumentError('grant needs { by, tool, scope, subject, until? }');
  const by = checkedAudit({ by: init.by }, 'grant')?.by as Principal;
  if (typeof init.tool !== 'string' || init.tool === '') throw new InvalidArgumentError('grant: tool must be a tool name');
  if (!SCOPES.includes(init.scope)) throw new InvalidArgumentError("grant: scope must be 'run', 'session' or 'principal'");
  if (typeof init.subject !== 'string' || init.subject === '')
    throw new InvalidArgumentError('grant: subject must name the run, session or principal');
  const grant: Grant = { id, by, tool: init.tool, scope: init.scope, subject: init.subject, createdAt: new Date(now).toISOString() };
  if (init.until !== undefined) {
    const until = init.until instanceof Date ? init.until.getTime() : Date.parse(init.until);
    if (Number.isNaN(until) || until <= now) throw new InvalidArgumentError('grant: until must be an instant in the future');
    grant.until = new Date(until).toISOString();
  }
  return grant;
}

/** Whether `grant` is live at `now` and covers a call at `place`. */
export function covers(grant: Grant, place: GrantPlace, now: number): boolean {
  if (grant.revokedAt !== undefined) return false;
  if (grant.until !== undefined && Date.parse(grant.until) <= now) return false;
  if (grant.tool !== place.tool) return false;
  const subject = grant.scope === 'run' ? place.runId : grant.scope === 'session' ? place.session : place.requestedBy;
  return subject === grant.subject;
}

/** Whether `store` keeps grants. */
export function isGrantStore(store: object): store is GrantStore {
  const s = store as Partial<GrantStore>;
  return typeof s.insertGrant === 'function' && typeof s.revokeGrant === 'function' && typeof s.listGrants === 'function';
}
