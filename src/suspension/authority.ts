import { AnswerRefusedError, InvalidArgumentError } from '../errors';
import { messageOf } from '../errors/message';
import type { Answer } from '../results/wire';
import type { Audit, Principal } from './audit';
import { askingCallOf, type AskingCall } from './asking';
import { quorumOf } from './quorum';
import { escalationOf, storeNow } from './escalation';
import type { Clock } from '../timing/clock';
import type { AnswerAction, AnswerDecision, AnswerPolicy } from './policy';
import type { SuspendedCall, SuspensionStore } from './store';

/** Marks an audit as the library's own settlement (a failed run cancelling its open calls): no person answers it. */
const SYSTEM = Symbol.for('toolnexus:system-settlement');

/** An audit for a settlement the library makes itself, which no answer policy judges. Internal: never exported from an entry. */
export function systemAudit(comment?: string): Audit {
  const audit: Audit = comment === undefined ? {} : { comment };
  Object.defineProperty(audit, SYSTEM, { value: true, enumerable: false });
  return audit;
}

/** Whether `audit` was made by {@link systemAudit}. */
export function isSystemAudit(audit: Audit | undefined): boolean {
  return audit !== undefined && (audit as { [SYSTEM]?: boolean })[SYSTEM] === true;
}

/** `copy` marked as `source` is (a checked copy of a system audit stays one). */
export function keepSystemMark(source: unknown, copy: Audit | undefined): Audit | undefined {
  if (!isSystemAudit(source as Audit | undefined)) return copy;
  const marked = systemAudit();
  return Object.assign(marked, copy);
}

/** A refused answer, as observers are told of it (docs/who-may-answer.md, "Audit"). */
export interface AnswerRefusal {
  by?: Principal;
  action: AnswerAction;
  reason: string;
}

/** What {@link Authority} works with: the coordinator's answer policy settings. */
export interface AuthoritySettings {
  store: SuspensionStore;
  policy?: AnswerPolicy;
  /** Refuse an approval by the principal the call was requested for. */
  separationOfDuties: boolean;
  /** Judges when an escalation came due, for a store without a clock of its own (`SuspensionStore.now`). */
  clock: Clock;
  /** Told of every refusal (the call as read, not changed). */
  onRefused?: (call: SuspendedCall, refusal: AnswerRefusal) => void;
}

/**
 * The one place that decides whether an answer may be given (docs/who-may-answer.md): the
 * coordinator's policy, separation of duties, and the sub-agent path. Judged before the claim,
 * on the call as read; the claim then refuses a call that changed since.
 */
export class Authority {
  constructor(private readonly settings: AuthoritySettings) {}

  /** Whether any answer is judged at all. */
  get active(): boolean {
    return this.settings.policy !== undefined;
  }

  /**
   * Refuses an answer the policy does not allow, telling observers.
   * @throws {@link AnswerRefusedError} the answer may not be given (nothing changed).
   */
  async judge(read: SuspendedCall, answer: Answer, audit: Audit | undefined): Promise<void> {
    if (isSystemAudit(audit) || this.takesAll(read)) return;
    const action = actionOf(answer);
    const by = audit?.by;
    if (by === undefined && !this.active) return; // a quorum approval without a principal is refused when it signs
    const decision =
      by === undefined
        ? { deny: 'an answer policy is set, and the answer names no principal' }
        : await this.decide(by, read, answer, action);
    if (decision === 'allow') return;
    const refusal: AnswerRefusal = { action, reason: decision.deny, ...(by ? { by: { ...by } } : {}) };
    try {
      this.settings.onRefused?.(read, refusal);
    } catch {
      // An observer's failure is its own.
    }
    throw new AnswerRefusedError(read.request.id, decision.deny, by?.id);
  }

  /**
   * Refuses a standing grant of `tool` by `by` given in answer to `read`, as an approval of
   * `read` by `by` would be refused (observers told); the grant must be for the tool that asked.
   * @throws {@link AnswerRefusedError} `by` may not approve `read` (nothing changed).
   * @throws {@link InvalidArgumentError} `read` is no pending approval request of `tool`.
   */
  async judgeGrant(read: SuspendedCall, by: Principal, tool: string): Promise<void> {
    const id = read.request.id;
    if (read.status !== 'pending') throw new InvalidArgumentError(`grant: the request ${id} it answers is no longer pending`);
    if (quorumOf(read.request)) throw new InvalidArgumentError(`grant: the request ${id} needs a quorum, which no grant gives`);
    const asking = await this.askingCall(read);
    if ('deny' in asking) throw new AnswerRefusedError(id, asking.deny, by.id);
    const { call } = asking;
    if (call.request.kind !== 'approval' || call.tool !== tool)
      throw new InvalidArgumentError(`grant: the request ${id} it answers is no approval request of ${tool}`);
    await this.judge(read, { id, ok: true }, { by });
  }

  /** What `principal` may do to `call` now: for front ends that show the actions (the inbox, the chat). */
  async actionsOf(principal: Principal, call: SuspendedCall): Promise<AnswerAction[]> {
    if (call.status !== 'pending') return [];
    if (this.takesAll(call)) return ['answer', 'cancel'];
    const allowed: AnswerAction[] = [];
    const probes: Record<AnswerAction, Answer> = {
      answer: { id: call.request.id, ok: true },
      cancel: { id: call.request.id, ok: false, reason: 'cancelled' },
    };
    for (const action of ['answer', 'cancel'] as const) {
      if ((await this.decide(principal, call, probes[action], action)) === 'allow') allowed.push(action);
    }
    return allowed;
  }

  /**
   * Who may answer `surfaced`, as far as the request and the policy can say (for telling them,
   * never for judging): its quorum's `from` (narrowed to those the policy lists, when it lists
   * any), else the principals the policy lists for the call that asked; then its escalation's
   * `to`. The principal the call was requested for is left out of an approval's under separation
   * of duties. Empty when nothing can say.
   */
  async answerersOf(surfaced: SuspendedCall): Promise<string[]> {
    const asking = await this.askingCall(surfaced);
    const call = 'deny' in asking ? surfaced : asking.call;
    let listed: readonly string[] | undefined;
    try {
      listed = this.settings.policy?.principalsFor?.(call);
    } catch {
      listed = undefined; // a policy that cannot list says nothing of who may answer
    }
    const from = quorumOf(call.request)?.from;
    const named = from ? from.filter((id) => listed === undefined || listed.includes(id)) : (listed ?? []);
    // The escalation's principals only once it is due: before then they may not answer, and the
    // channels' escalation notice tells them at that instant (docs/channels.md, "Escalation").
    const escalation = escalationOf(call.request);
    const due = escalation !== undefined && (await storeNow(this.settings.store, this.settings.clock)) >= escalation.at;
    const ids = new Set([...named, ...(due ? escalation.to : [])]);
    const requester = call.requestedBy ?? surfaced.requestedBy;
    if (this.settings.separationOfDuties && call.request.kind === 'approval' && requester) ids.delete(requester.id);
    return [...ids].filter((id) => typeof id === 'string');
  }

  /** The decision on `answer` by `principal`, as {@link judge} would take it, without telling anyone (a dry run). */
  async decision(principal: Principal, call: SuspendedCall, answer: Answer): Promise<AnswerDecision> {
    if (this.takesAll(call)) return 'allow';
    return this.decide(principal, call, answer, actionOf(answer));
  }

  /** True when nothing judges answers to `call`: no policy, and no quorum naming its signers (which holds with or without one). */
  private takesAll(call: SuspendedCall): boolean {
    return !this.active && quorumOf(call.request)?.from === undefined;
  }

  private async decide(principal: Principal, surfaced: SuspendedCall, answer: Answer, action: AnswerAction): Promise<AnswerDecision> {
    const asking = await this.askingCall(surfaced);
    if ('deny' in asking) return asking;
    const { call, path } = asking;
    const escalation = escalationOf(call.request);
    // Judged by the store's clock, as leases are: every process sharing the store agrees when it came due.
    const escalated =
      escalation !== undefined &&
      escalation.to.includes(principal.id) &&
      (await storeNow(this.settings.store, this.settings.clock)) >= escalation.at;
    const quorum = quorumOf(call.request);
    // An escalation due widens who may sign a quorum, never how many must: each principal it
    // names signs (and counts once) like one of `from` (docs/who-may-answer.md, "Escalation").
    if (quorum?.from && answer.ok && !quorum.from.includes(principal.id) && !escalated)
      return { deny: `${principal.id} is not one of the principals who may sign this approval` };
    const requester = call.requestedBy ?? surfaced.requestedBy;
    if (
      this.settings.separationOfDuties &&
      answer.ok &&
      call.request.kind === 'approval' &&
      requester !== undefined &&
      requester.id === principal.id
    ) {
      return { deny: `${principal.id} requested this call and may not approve it (separation of duties)` };
    }
    // Once due, an escalation lets the principals it names answer, whatever the policy says of them.
    if (escalated) return 'allow';
    const policy = this.settings.policy;
    if (policy === undefined) return 'allow';
    try {
      const decision = await policy({ principal, call, surfaced, path, answer, action });
      if (decision === 'allow') return decision;
      if (typeof decision === 'object' && decision !== null && typeof decision.deny === 'string') return decision;
      return { deny: 'the answer policy gave no decision' };
    } catch (error) {
      return { deny: `the answer policy failed: ${messageOf(error)}` };
    }
  }

  /** The call that asked (docs/design.md, "asking call"), as grants and automatic answers find it too. */
  private async askingCall(surfaced: SuspendedCall): Promise<AskingCall<SuspendedCall>> {
    return askingCallOf(this.settings.store, surfaced);
  }
}

/** A cancellation is an `ok: false` answer whose reason is `cancelled`; any other answer answers. */
function actionOf(answer: Answer): AnswerAction {
  return !answer.ok && answer.reason === 'cancelled' ? 'cancel' : 'answer';
}
