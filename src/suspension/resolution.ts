import type { ContentBound } from './content';
import {
  AlreadyResolvedError,
  AnswerRefusedError,
  ClaimHeldError,
  ClaimLostError,
  SuspensionMismatchError,
  UnknownSuspensionError,
  UnregisteredToolError,
} from '../errors';
import { quorumOf } from './quorum';
import { editedAnswer, declineQuorum, signQuorum } from './signing';
import type { Answer, ToolResult } from '../results/wire';
import { ATTR } from '../telemetry/conventions';
import { countSuspension, startResolution } from '../telemetry/suspension';
import { evaluateApproval } from './evaluation';
import type { Telemetry, Tracing } from '../telemetry/telemetry';
import type { OtelSpan } from '../telemetry/otel';
import { withLatch } from '../timing/abort-latch';
import { monotonicOf, type Clock } from '../timing/clock';
import { sleep } from '../timing/sleep';
import type { ToolContext } from '../toolkit/context';
import { withIdempotencyKey } from './idempotency';
import type { RanCall } from '../toolkit/prepared';
import type { Toolkit } from '../toolkit/toolkit';
import type { Audit } from './audit';
import type { Authority } from './authority';
import { isExpired, refusalOf, refused, type FormatRefusal } from './answers';
import { sameJson, type Binding } from './binding';
import { LeaseKeeper } from './lease';
import { isSettled } from './status';
import type { Claim, Settlement, SuspendedCall, SuspensionStore } from './store';
import { keptAnswer } from './consumed';
import { leaseLooksLapsed, recoveryOf, sameDecision, settlementOf, storedOutcome } from './outcome';
import { checkInsertable } from './validate';
import { storable } from './json';
import { ReceiptRecorder, withReceipts } from './receipts';
import { claimedAnswer, claimedAudit, pendingAgain, replaysOnTakeover } from './takeover';

/**
 * The call an answer is for, as the caller knows it (an agent run: its transcript's call).
 * `resolve` refuses a stored call that differs ({@link SuspensionMismatchError}) before anything runs.
 */
export interface ExpectedCall {
  tool: string;
  /** The arguments as the caller has them (the model's JSON text): compared as the Toolkit parses them. */
  args: unknown;
  callId?: string;
  runId?: string;
}

/**
 * What an answer does when another resolver holds the call's claim or settled it first:
 * `wait` for that outcome and return it (the default), or `refuse` with {@link ClaimHeldError}
 * at once, so exactly one of several answers racing for a call goes on (a chat's approval).
 */
export type IfClaimed = 'wait' | 'refuse';

/** How {@link ResumeCoordinator.resolve} meets another answer to the same call. */
export interface ResolveOptions {
  /** `refuse`: when another answer holds the claim or settled the call first, throw {@link ClaimHeldError} instead of waiting for its outcome. Default `wait`. */
  ifClaimed?: IfClaimed;
}

/** What {@link Resolution} works with; the coordinator's settings. */
export interface ResolutionSettings {
  toolkit: Toolkit;
  store: SuspensionStore;
  leaseMs: number;
  /** The coordinator's clock: lease heartbeats and the local hint that a lease lapsed. */
  clock: Clock;
  maxChain: number;
  formatRefusal: FormatRefusal;
  binding: Binding;
  /** Who may answer: judged before the claim (docs/who-may-answer.md). */
  authority: Authority;
  /** Told after a quorum approval was recorded as a signature and the call still waits. */
  onSigned?: (call: SuspendedCall) => void;
  /** Told after a settlement is stored (never when this resolver's claim was lost). */
  onSettled?: (claim: Claim, settlement: Settlement) => void;
  /** Spans and counters of resolutions (docs/observability.md). */
  telemetry?: Telemetry;
  /** The bound for stored results: an outcome's media past it are kept by reference or described. */
  content: ContentBound;
}

/** One answer's attempt at a call: what the claim records and the replay is given, and the call as read. */
interface Attempt {
  answer: Answer;
  ctx: ToolContext | undefined;
  audit: Audit | undefined;
  read: SuspendedCall;
}

const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 50;

/**
 * The durable path of an answer: check it against the stored call, claim the call, replay
 * it under a renewed lease, store the outcome (or the chain's next link); or wait for
 * whoever holds the claim and return their outcome.
 */
export class Resolution {
  constructor(private readonly settings: ResolutionSettings) {}

  /**
   * The shared path of `resolve` and `cancel`, from the stored call as read once before the
   * claim (`undefined`: no store holds it): checks it (binding, expected call), claims it and
   * replays it, or returns the outcome it settled with, or waits for whoever holds it.
   * `audit` is recorded by the claim that wins, with the answer.
   */
  async checkAndClaim(
    answer: Answer,
    read: SuspendedCall | undefined,
    ctx: ToolContext | undefined,
    audit?: Audit,
    expected?: ExpectedCall,
    { ifClaimed = 'wait' }: ResolveOptions = {},
  ): Promise<ToolResult> {
    if (!read) throw new UnknownSuspensionError(answer.id);
    let call = read;
    await this.check(read, expected);
    // Before anything else: a refused answer changes nothing and learns nothing of the outcome.
    await this.settings.authority.judge(read, answer, audit);
    // Edited arguments are checked by the tool's DTO now: a bad edit is refused, nothing stored.
    if (answer.args !== undefined) answer = await editedAnswer(this.settings.toolkit, read, answer);
    // A quorum approval is a signature until the last one needed: that one claims and replays.
    // So is a decline of a quorum that takes several declines: the last one needed settles it.
    const quorum = read.status === 'pending' ? quorumOf(read.request) : undefined;
    const declines = quorum?.declines ?? 1;
    if (quorum && (answer.ok || (answer.reason === 'declined' && declines > 1))) {
      const { store, onSigned } = this.settings;
      const signed = answer.ok
        ? await signQuorum(store, read, quorum, audit, onSigned)
        : await declineQuorum(store, read, { ...quorum, declines }, audit, onSigned);
      if ('waiting' in signed) return signed.waiting;
      call = signed.call;
    }
    const attempt: Attempt = { answer, ctx, audit, read };
    return ifClaimed === 'refuse' ? this.claimOrRefuse(attempt, call) : this.claimLoop(attempt, call);
  }

  /**
   * `resolve`'s path when the answer carries no read. With a store that claims early, the read
   * and the claim are one statement (one round trip fewer: docs/performance.md), the checks of
   * {@link checkAndClaim} judge the call as read right after, and the claim of an answer they
   * refuse is given back as it was read: a refused answer changes nothing (docs/who-may-answer.md).
   * Otherwise, and for an edit (checked by the tool's DTO before anything is written), the call is
   * read, then checked and claimed.
   */
  async readAndClaim(
    answer: Answer,
    ctx: ToolContext | undefined,
    audit?: Audit,
    expected?: ExpectedCall,
    options: ResolveOptions = {},
  ): Promise<ToolResult> {
    const { store, leaseMs } = this.settings;
    if (answer.args !== undefined || !store.claimEarly || !store.restoreClaim)
      return this.checkAndClaim(answer, await store.get(answer.id), ctx, audit, expected, options);
    const early = await store.claimEarly(answer.id, answer, leaseMs, audit);
    if (!early?.claim) return this.checkAndClaim(answer, early?.read, ctx, audit, expected, options);
    const { read, claim } = early;
    try {
      // What checkAndClaim checks before a claim of a pending call (no edit, no quorum: the store claimed neither).
      await this.check(read, expected);
      await this.settings.authority.judge(read, answer, audit);
      this.assertRunnable(answer, read);
      ctx?.signal?.throwIfAborted();
    } catch (error) {
      await store.restoreClaim(claim, read);
      throw error;
    }
    // An early claim only claims a pending call: never a takeover, so expiry is judged at this claim.
    const settled = await this.finish(claim, answer, ctx, read, undefined);
    if (settled) return settled;
    const lost = new ClaimLostError(claim.id, claim.fence);
    if (options.ifClaimed === 'refuse') throw lost;
    return this.claimLoop({ answer, ctx, audit, read }, claim.call, lost);
  }

  /**
   * Claims the call and replays it, or returns the outcome it settled with, or waits for whoever
   * holds it. `lost`: this resolver's claim was lost during its replay, so it only waits (from a
   * fresh read) for an outcome another holder stores.
   */
  private async claimLoop(attempt: Attempt, call: SuspendedCall, lost?: ClaimLostError): Promise<ToolResult> {
    const { answer, ctx } = attempt;
    const { store, leaseMs, clock } = this.settings;
    const elapsed = monotonicOf(clock);
    const signal = ctx?.signal;
    let pause = FIRST_POLL_MS;
    let lastTry = Number.NEGATIVE_INFINITY;
    // A lost claim's row is stale: the loop then reads it again before it decides anything.
    for (let stale = lost !== undefined; ; stale = true) {
      if (stale) {
        // Polls on real time, whatever the clock: it waits for another holder's real I/O.
        await sleep(pause, signal).catch(() => undefined);
        pause = Math.min(pause * 2, MAX_POLL_MS);
        signal?.throwIfAborted();
        const next = await store.get(answer.id);
        if (!next) throw new UnknownSuspensionError(answer.id);
        call = next;
      }
      if (isSettled(call.status)) return storedOutcome(call, answer);
      // The local clock only hints that a lease lapsed; the store's claim decides. A process
      // whose clock runs behind still tries twice a lease, so it never waits forever on a dead holder.
      const mayClaim = call.status === 'pending' || leaseLooksLapsed(call, clock) || elapsed() - lastTry >= leaseMs / 2;
      if (mayClaim && lost) {
        // This resolver's replay lost the claim; it never claims again, and nobody holds it now.
        if (call.status === 'pending' || leaseLooksLapsed(call, clock)) throw lost;
      } else if (mayClaim) {
        this.assertRunnable(answer, call);
        signal?.throwIfAborted();
        lastTry = elapsed();
        const won = await this.claimFor(attempt, call);
        if (won && 'settled' in won) return won.settled;
        if (won) lost = won.lost;
      }
    }
  }

  /**
   * One claim, and the store decides: a pending call, or one whose lease lapsed by the store's
   * clock, is this answer's; any other is refused without waiting (nothing is applied).
   */
  private async claimOrRefuse(attempt: Attempt, call: SuspendedCall): Promise<ToolResult> {
    const { answer, ctx } = attempt;
    if (isSettled(call.status)) throw new ClaimHeldError(answer.id);
    this.assertRunnable(answer, call);
    ctx?.signal?.throwIfAborted();
    const won = await this.claimFor(attempt, call);
    if (!won) throw new ClaimHeldError(answer.id);
    if ('lost' in won) throw won.lost;
    return won.settled;
  }

  /**
   * Claims `call` for `answer` and runs what the claim decides. A call still `resolving` (its
   * holder's lease lapsed) is taken over with the answer its holder's claim recorded, never
   * this one (docs/suspension.md, "After a crash: the takeover rule"): that decision may have
   * taken effect, so every door continues it the same way, and an answer that contradicts it
   * is refused once it is settled. A recorded answer the takeover's judgement refuses is given
   * back instead ({@link refusedTakeover}), and this answer, judged already, claims the call.
   * `undefined`: the store gave the claim to nobody here.
   */
  private async claimFor(attempt: Attempt, call: SuspendedCall): Promise<{ settled: ToolResult } | { lost: ClaimLostError } | undefined> {
    const { answer, ctx, audit, read } = attempt;
    const { store, leaseMs } = this.settings;
    const claimed = claimedAnswer(call);
    // The store keeps the answer without what the replay consumes (a login's code): see consumed.ts.
    const kept = keptAnswer(call.request, answer);
    const claim = claimed
      ? await store.claim(answer.id, claimed, leaseMs, claimedAudit(call))
      : await store.claim(answer.id, kept, leaseMs, audit);
    if (!claim) return undefined;
    if (claimed && (await this.refusedTakeover(claim, claimed))) return this.claimFor(attempt, pendingAgain(claim.call));
    // The given answer carries what the store does not keep (consumed fields): it runs when it is the same decision.
    const agrees = !claimed || sameDecision(kept, claimed);
    const settled = await this.finish(claim, agrees ? answer : claimed, ctx, read, claimed?.ok ? call.answeredAt : undefined);
    if (!settled) return { lost: new ClaimLostError(claim.id, claim.fence) };
    if (!agrees) throw new AlreadyResolvedError(answer.id, claimed.ok ? 'approved' : 'declined', call.runId);
    return { settled };
  }

  /**
   * The recovery loop's step for one call (`ResumeCoordinator.recoverLapsed`): a `resolving`
   * call whose holder's lease lapsed is taken over with the answer that holder's claim recorded,
   * under the takeover rule, with no new answer. `undefined` when the store gives the claim to
   * nobody here (a live holder, or another process took it first), or this process does not
   * register the tool.
   * @throws {@link AnswerRefusedError} the recorded answer is refused by its judgement at the
   * takeover ({@link refusedTakeover}): the call is `pending` again, and nothing ran.
   */
  async takeOver(read: SuspendedCall, ctx: ToolContext | undefined): Promise<ToolResult | undefined> {
    const claimed = claimedAnswer(read);
    if (!claimed || !this.settings.toolkit.has(read.tool)) return undefined;
    const problem = this.settings.binding.problem(read);
    if (problem) throw new SuspensionMismatchError(read.request.id, problem);
    const claim = await this.settings.store.claim(read.request.id, claimed, this.settings.leaseMs, claimedAudit(read));
    if (!claim) return undefined;
    const refusal = await this.refusedTakeover(claim, claimed);
    if (refusal) throw refusal;
    return this.finish(claim, claimed, ctx, read, claimed.ok ? read.answeredAt : undefined);
  }

  /**
   * A takeover's judgement of the answer it would continue (docs/who-may-answer.md, "A crash
   * under an early claim"). On a store that claims early, a claim may record an answer before it
   * is judged: a holder that died before giving a refused answer's claim back left that answer
   * recorded. So the recorded answer is judged again, with the recorded audit, on the row this
   * takeover claimed; refused, the call is given back `pending` ({@link pendingAgain}) and the
   * refusal returned: nothing runs on it. Stores without an early claim record only judged answers.
   */
  private async refusedTakeover(claim: Claim, claimed: Answer): Promise<AnswerRefusedError | undefined> {
    const { store, authority } = this.settings;
    if (!store.restoreClaim) return undefined;
    try {
      await authority.judge(claim.call, claimed, claimedAudit(claim.call));
      return undefined;
    } catch (error) {
      if (!(error instanceof AnswerRefusedError)) throw error;
      // A crash before this restore leaves the claim to the next takeover, which judges it again.
      await store.restoreClaim(claim, pendingAgain(claim.call));
      return error;
    }
  }

  /** An approval of a call whose tool this process lacks is refused before the claim (nothing changes). */
  private assertRunnable(answer: Answer, call: SuspendedCall): void {
    const { toolkit, clock } = this.settings;
    if (answer.ok && !isExpired(call.request, new Date(clock.now())) && !toolkit.has(call.tool))
      throw new UnregisteredToolError(answer.id, call.tool);
  }

  /**
   * The one check of a stored call before an answer claims it: it is the call that was
   * recorded (its binding), and, when the caller knows which call it answers (an agent run's
   * transcript), that call: same tool, call id, run and arguments as the Toolkit parses them.
   * @throws {@link SuspensionMismatchError} on any difference (nothing is claimed).
   */
  private async check(call: SuspendedCall, expected: ExpectedCall | undefined): Promise<void> {
    const problem = this.settings.binding.problem(call);
    if (problem) throw new SuspensionMismatchError(call.request.id, problem);
    if (!expected) return;
    const differs: string[] = [];
    if (call.tool !== expected.tool) differs.push(`tool ${JSON.stringify(call.tool)} ≠ ${JSON.stringify(expected.tool)}`);
    if (call.callId !== expected.callId) differs.push(`callId ${JSON.stringify(call.callId)} ≠ ${JSON.stringify(expected.callId)}`);
    if (call.runId !== expected.runId) differs.push(`runId ${JSON.stringify(call.runId)} ≠ ${JSON.stringify(expected.runId)}`);
    if (differs.length === 0 && !(await this.sameArguments(call, expected))) differs.push('arguments differ from the transcript');
    if (differs.length > 0)
      throw new SuspensionMismatchError(call.request.id, `the run's transcript has another call (${differs.join('; ')})`);
  }

  /**
   * The stored arguments are the Toolkit's parse of the expected ones: the value `execute`
   * stored. A call recorded before the coordinator stored that parse is parsed the same way
   * first. A tool not registered here cannot run, so only its other parts are compared.
   */
  private async sameArguments(call: SuspendedCall, expected: ExpectedCall): Promise<boolean> {
    const { toolkit } = this.settings;
    if (!toolkit.has(expected.tool)) return true;
    const parsed = await toolkit.prepare(expected.tool, expected.args);
    if (!parsed.ok) return false;
    if (sameJson(call.args, parsed.args)) return true;
    const stored = await toolkit.prepare(call.tool, call.args);
    return stored.ok && sameJson(stored.args, parsed.args);
  }

  /** Runs what a won claim decides and stores it; `undefined` when the claim was lost meanwhile. */
  private async finish(
    claim: Claim,
    answer: Answer,
    ctx: ToolContext | undefined,
    read: SuspendedCall,
    answeredAt: string | undefined,
  ): Promise<ToolResult | undefined> {
    const { call } = claim;
    // The row as claimed is what replays: it may have changed since it was checked.
    const problem = this.settings.binding.problem(call);
    if (problem) throw new SuspensionMismatchError(call.request.id, problem);
    if (call.tool !== read.tool || call.callId !== read.callId || call.runId !== read.runId || !sameJson(call.args, read.args))
      throw new SuspensionMismatchError(call.request.id, 'the call changed between the check and the claim');
    const tracing = this.settings.telemetry?.active();
    if (!tracing) return this.replay(claim, answer, ctx, answeredAt, undefined, undefined);
    const { span, context } = startResolution(tracing, call);
    try {
      const settled = await tracing.within(context, () => this.replay(claim, answer, ctx, answeredAt, tracing, span));
      if (settled === undefined) tracing.fail(span, 'claim_lost');
      else span?.end();
      return settled;
    } catch (error) {
      tracing.fail(span, 'exception');
      throw error;
    }
  }

  private async replay(
    claim: Claim,
    answer: Answer,
    ctx: ToolContext | undefined,
    answeredAt: string | undefined,
    tracing: Tracing | undefined,
    span: OtelSpan | undefined,
  ): Promise<ToolResult | undefined> {
    const { call } = claim;
    // Expiry is judged when the answer was first claimed: a taken-over approval was given in time.
    const at = new Date(answeredAt ?? claim.at);
    if (isExpired(call.request, at) || !answer.ok) {
      const refusal = refusalOf(call.request, answer, at);
      return this.complete(claim, { status: refusal.status, outcome: refused(refusal, this.settings.formatRefusal) }, tracing, span);
    }
    // The tool sees who answered, whichever front end recorded them (docs/suspension.md).
    let answered: Answer = call.answeredBy === undefined ? answer : { ...answer, answeredBy: { ...call.answeredBy } };
    // A quorum's replay sees every approval (ctx.approval.signatures).
    if (call.signatures !== undefined) answered = { ...answered, signatures: call.signatures.map((s) => ({ ...s, by: { ...s.by } })) };
    // A takeover (fence > 1): an earlier holder began this replay and stored nothing, so the
    // tool may have taken effect. The takeover rule (takeover.ts): an idempotent tool runs
    // again with the same idempotency key; any other becomes a `recovery` request.
    if (claim.fence > 1 && !replaysOnTakeover(this.settings.toolkit, call.tool))
      return this.complete(claim, withReceipts(recoveryOf(this.settings, call, answered), call.receipts), tracing, span);
    const keeper = new LeaseKeeper(this.settings.store, claim, this.settings.leaseMs, ctx?.signal, this.settings.clock);
    const receipts = new ReceiptRecorder(this.settings.store, claim, this.settings.clock);
    let ran: RanCall;
    try {
      const chain = call.chain ?? [];
      // The call's own ids, whichever front end answered: a tool keys its side effect on
      // `callId`, so the replay must see what the first run saw (and `runner.resume` passes).
      const ids = {
        ...(call.callId !== undefined ? { callId: call.callId } : {}),
        ...(call.runId !== undefined ? { runId: call.runId } : {}),
      };
      // Receipts are written to the claimed row when recorded, so a crash before the outcome keeps them.
      const replay: ToolContext = { ...ctx, ...ids, answer: answered, replay: { request: call.request, chain, fence: claim.fence } };
      Object.assign(replay, receipts.context());
      // The same key the first execution had: of the call's run and call id.
      withIdempotencyKey(replay, ids);
      // The replay runs from the stored call, prepared once (a tool changed since refuses it here).
      // An approver's edit, as the claim recorded it, is what runs.
      const prepared = await this.settings.toolkit.prepare(call.tool, call.answer?.args ?? call.args);
      ran = await this.settings.toolkit.runTraced(prepared, withLatch(replay, keeper.cancellation));
    } finally {
      keeper.stop();
    }
    if (keeper.lost) return undefined;
    return this.complete(claim, receipts.settle(settlementOf(this.settings, call, answered, ran)), tracing, span);
  }

  private async complete(
    claim: Claim,
    settlement: Settlement,
    tracing: Tracing | undefined,
    span: OtelSpan | undefined,
  ): Promise<ToolResult | undefined> {
    const stored = { ...settlement, outcome: storable(await this.settings.content.keep(settlement.outcome)) };
    if (stored.next) checkInsertable(stored.next, 'complete (next link)');
    if (!(await this.settings.store.complete(claim, stored))) return undefined;
    if (tracing) {
      const { call } = claim;
      const registered = this.settings.toolkit.has(call.tool);
      span?.setAttribute(ATTR.suspensionStatus, settlement.status);
      countSuspension(tracing, settlement.status, call.tool, registered, call.request.kind);
      evaluateApproval(tracing, this.settings.toolkit, call, settlement.status);
      if (settlement.next) countSuspension(tracing, 'pending', call.tool, registered, settlement.next.request.kind);
    }
    this.settings.onSettled?.(claim, stored);
    return stored.outcome;
  }
}
