import { randomUUID } from 'node:crypto';
import { AnswerRefusedError, InvalidArgumentError, StoreError, UnknownSuspensionError } from '../errors';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import type { Clock } from '../timing/clock';
import type { ToolContext } from '../toolkit/context';
import { withCommentAsReason } from './audit';
import { askingCallOf } from './asking';
import { systemAudit, type Authority } from './authority';
import { automaticDecision, type AutomaticAnswers, type AutomaticQuestion, type AutomaticRecord } from './automatic';
import type { ExecuteOptions } from './coordinator-options';
import {
  checkedGrant,
  covers,
  isGrantStore,
  type Grant,
  type GrantInit,
  type GrantOptions,
  type GrantPlace,
  type GrantStore,
} from './grants';
import { quorumOf } from './quorum';
import type { Resolution } from './resolution';
import type { SuspendedCall, SuspensionStore } from './store';

/** What {@link StandingAnswers} works with: the coordinator's store, clock and answer path. */
export interface StandingSettings {
  store: SuspensionStore;
  clock: Clock;
  resolution: Resolution;
  /** Judges a grant given in answer to a request. */
  authority: Authority;
  automatic?: AutomaticAnswers;
  /** Told of every grant given, after the store kept it. */
  onGranted?: (grant: Grant) => void;
  /** Told of every grant revoked, as revoked, after the store kept it. */
  onRevoked?: (grant: Grant) => void;
}

/** An approval with no quorum: what a grant or an automatic answer may settle. */
function isPlainApproval(request: PendingRequest): boolean {
  return request.kind === 'approval' && !quorumOf(request);
}

/** The comment a call settled by a standing grant is audited with: this, then the grant's id. */
export const GRANT_COMMENT = 'standing grant ';

/**
 * Whether a call was settled when it was recorded, by a standing grant or an automatic
 * answer, rather than by someone answering it: what an adapter's framework never asked about.
 */
export function settledAtOnce(call: SuspendedCall): boolean {
  if (call.status === 'pending' || call.status === 'resolving') return false;
  return answeredAtOnce(call);
}

/** Whether a call's answer was given without anyone answering it: an automatic answer acting on its rule, or a standing grant. */
export function answeredAtOnce(call: SuspendedCall): boolean {
  const automatic = call.automatic;
  if (automatic && !automatic.shadow && (automatic.decision === 'approved' || automatic.decision === 'denied')) return true;
  return call.comment?.startsWith(GRANT_COMMENT) === true && call.answeredBy !== undefined;
}

/**
 * Answers given before anyone is asked (docs/who-may-answer.md): the host's automatic answers
 * and the standing grants people gave. A just-recorded approval request one of them covers is
 * settled at once, on the same answer path as any answer.
 */
export class StandingAnswers {
  constructor(private readonly settings: StandingSettings) {}

  /**
   * What the automatic answers decide of an approval request about to be recorded; `undefined`
   * when none are set or it is not one. Asked about the asking call (a sub-agent's request by
   * the tool that raised it), as the answer policy judges it.
   */
  async automaticOf(
    request: PendingRequest,
    tool: string,
    args: unknown,
    options: ExecuteOptions,
    ctx: ToolContext | undefined,
  ): Promise<AutomaticRecord | undefined> {
    const automatic = this.settings.automatic;
    if (!automatic) return undefined;
    const surfaced = {
      request,
      tool,
      args,
      ...(options.runId === undefined ? {} : { runId: options.runId }),
      ...(options.callId === undefined ? {} : { callId: options.callId }),
    };
    const asking = await askingCallOf(this.settings.store, surfaced);
    // A path that cannot be trusted is never settled by rule: a person is asked (and the policy refuses it there).
    if ('deny' in asking || !isPlainApproval(asking.call.request)) return undefined;
    const { call, path } = asking;
    const question: AutomaticQuestion = { tool: call.tool, args: call.args, request: call.request, path };
    const requestedBy = ('requestedBy' in call ? call.requestedBy : undefined) ?? options.principal;
    if (requestedBy !== undefined) question.requestedBy = { ...requestedBy };
    const { decision, timedOut } = await automaticDecision(automatic, question, ctx, this.settings.clock);
    return { policy: automatic.name, decision, shadow: automatic.shadow === true, ...(timedOut ? { timedOut } : {}) };
  }

  /**
   * Settles a just-recorded call as its automatic decision or a live grant says; `undefined` when
   * neither does (or the grant's giver may not answer it), and a person is asked.
   */
  async settle(
    call: SuspendedCall,
    automatic: AutomaticRecord | undefined,
    options: ExecuteOptions,
    ctx: ToolContext | undefined,
  ): Promise<ToolResult | undefined> {
    const { resolution } = this.settings;
    const id = call.request.id;
    // Automatic answers settle what their rule decided, as `policy:<name>` (unless only shadowing).
    if (automatic && !automatic.shadow && (automatic.decision === 'approved' || automatic.decision === 'denied')) {
      const audit = systemAudit(`automatic answer by ${automatic.policy}`);
      audit.by = { id: `policy:${automatic.policy}` };
      const answer: Answer = automatic.decision === 'approved' ? { id, ok: true } : { id, ok: false, reason: 'declined' };
      return resolution.checkAndClaim(withCommentAsReason(answer, audit.comment), call, ctx, audit);
    }
    const granted = await this.grantFor(call, options);
    if (!granted) return undefined;
    try {
      return await resolution.checkAndClaim({ id, ok: true }, call, ctx, {
        by: { ...granted.by },
        comment: `${GRANT_COMMENT}${granted.id}`,
      });
    } catch (error) {
      // The granter may no longer answer it (the policy changed, or they asked it): a person is asked.
      if (error instanceof AnswerRefusedError) return undefined;
      throw error;
    }
  }

  /** Records a grant; see `ResumeCoordinator.grant`. */
  async grant(init: GrantInit, options: GrantOptions = {}): Promise<Grant> {
    const grant = checkedGrant(init, `grant-${randomUUID()}`, this.settings.clock.now());
    const store = this.grantStore();
    if (options.answering !== undefined) {
      const answered = await this.settings.store.get(options.answering);
      if (!answered) throw new UnknownSuspensionError(options.answering);
      await this.settings.authority.judgeGrant(answered, grant.by, grant.tool);
    }
    await store.insertGrant(grant);
    this.settings.onGranted?.(grant);
    return grant;
  }

  /** Revokes a grant; see `ResumeCoordinator.revoke`. */
  async revoke(grantId: string): Promise<boolean> {
    if (typeof grantId !== 'string' || grantId === '') throw new InvalidArgumentError('revoke needs a grant id');
    const revoked = await this.grantStore().revokeGrant(grantId);
    if (revoked) this.settings.onRevoked?.(revoked);
    return revoked !== undefined;
  }

  /** Every grant the store keeps. */
  async grants(): Promise<Grant[]> {
    return this.grantStore().listGrants();
  }

  /**
   * The live grant that covers this just-recorded approval request, if the store keeps grants
   * and one does: a grant of the asking call's tool (a sub-agent's request by the tool that
   * raised it, as the answer policy judges it), never of a sub-agent tool's name.
   */
  private async grantFor(call: SuspendedCall, options: ExecuteOptions): Promise<Grant | undefined> {
    const { store, clock } = this.settings;
    if (!isGrantStore(store)) return undefined;
    const asking = await askingCallOf(store, call);
    if ('deny' in asking || !isPlainApproval(asking.call.request)) return undefined;
    const tool = asking.call.tool;
    const place: GrantPlace = { tool };
    if (options.runId !== undefined) place.runId = options.runId;
    if (options.session !== undefined) place.session = options.session;
    if (options.principal !== undefined) place.requestedBy = options.principal.id;
    const now = clock.now();
    // Only this tool's unrevoked grants are read: the lookup stays small however many grants were given.
    return (await store.listGrants({ tool })).find((grant) => covers(grant, place, now));
  }

  private grantStore(): GrantStore {
    const { store } = this.settings;
    if (!isGrantStore(store)) throw new StoreError('this store keeps no grants (insertGrant, revokeGrant, listGrants)');
    return store;
  }
}
