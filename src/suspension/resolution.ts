import type { ContentBound } from './content';
import { ClaimHeldError, ClaimLostError, SuspensionMismatchError, UnknownSuspensionError, UnregisteredToolError } from '../errors';
import { pending, pendingOf } from '../results/helpers';
import { quorumOf } from './quorum';
import { editedAnswer, declineQuorum, signQuorum } from './signing';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import { ATTR } from '../telemetry/conventions';
import { countSuspension, startResolution } from '../telemetry/suspension';
import type { Telemetry, Tracing } from '../telemetry/telemetry';
import type { OtelSpan } from '../telemetry/otel';
import { withLatch } from '../timing/abort-latch';
import { monotonicOf, type Clock } from '../timing/clock';
import { sleep } from '../timing/sleep';
import type { ToolContext } from '../toolkit/context';
import { idempotencyKeyOf } from './idempotency';
import type { RanCall } from '../toolkit/prepared';
import type { Toolkit } from '../toolkit/toolkit';
import type { Audit } from './audit';
import type { Authority } from './authority';
import { chainStop, isExpired, requestProblem, refusalOf, refused, type FormatRefusal } from './answers';
import { sameJson, type Binding } from './binding';
import { LeaseKeeper } from './lease';
import { isSettled } from './status';
import type { Claim, Settlement, SuspendedCall, SuspensionStore } from './store';
import { keptAnswer } from './consumed';
import { leaseLooksLapsed, storable, storedOutcome } from './outcome';
import { checkInsertable } from './validate';

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

/**
 * What a takeover replays (a claim with fence > 1: an earlier holder began the replay and
 * stored nothing, so the tool may have taken effect): `replay` runs the tool again (the
 * default); `recover` follows the runner's rule for a crashed durable step: an `idempotent`
 * tool runs again, any other is settled with a `recovery` request as the chain's next link.
 */
export type Takeover = 'replay' | 'recover';

/** How {@link ResumeCoordinator.resolve} meets another answer to the same call, and a dead one's replay. */
export interface ResolveOptions {
  /** `refuse`: when another answer holds the claim or settled the call first, throw {@link ClaimHeldError} instead of waiting for its outcome. Default `wait`. */
  ifClaimed?: IfClaimed;
  /** What this answer does when its claim takes the call over from a holder that died: see {@link Takeover}. Default `replay`. */
  takeover?: Takeover;
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
  takeover: Takeover;
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
    { ifClaimed = 'wait', takeover = 'replay' }: ResolveOptions = {},
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
    const attempt: Attempt = { answer, ctx, audit, read, takeover };
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
    const takeover = options.takeover ?? 'replay';
    const settled = await this.finish(claim, answer, ctx, read, takeover);
    if (settled) return settled;
    const lost = new ClaimLostError(claim.id, claim.fence);
    if (options.ifClaimed === 'refuse') throw lost;
    return this.claimLoop({ answer, ctx, audit, read, takeover }, claim.call, lost);
  }

  /**
   * Claims the call and replays it, or returns the outcome it settled with, or waits for whoever
   * holds it. `lost`: this resolver's claim was lost during its replay, so it only waits (from a
   * fresh read) for an outcome another holder stores.
   */
  private async claimLoop(attempt: Attempt, call: SuspendedCall, lost?: ClaimLostError): Promise<ToolResult> {
    const { answer, ctx, audit, read, takeover } = attempt;
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
        // The store keeps the answer without what the replay consumes (a login's code): see consumed.ts.
        const claim = await store.claim(answer.id, keptAnswer(call.request, answer), leaseMs, audit);
        if (claim) {
          const settled = await this.finish(claim, answer, ctx, read, takeover);
          if (settled) return settled;
          lost = new ClaimLostError(claim.id, claim.fence);
        }
      }
    }
  }

  /**
   * One claim, and the store decides: a pending call, or one whose lease lapsed by the store's
   * clock, is this answer's; any other is refused without waiting (nothing is applied).
   */
  private async claimOrRefuse(attempt: Attempt, call: SuspendedCall): Promise<ToolResult> {
    const { answer, ctx, audit, read, takeover } = attempt;
    const { store, leaseMs } = this.settings;
    if (isSettled(call.status)) throw new ClaimHeldError(answer.id);
    this.assertRunnable(answer, call);
    ctx?.signal?.throwIfAborted();
    const claim = await store.claim(answer.id, keptAnswer(call.request, answer), leaseMs, audit);
    if (!claim) throw new ClaimHeldError(answer.id);
    const settled = await this.finish(claim, answer, ctx, read, takeover);
    if (!settled) throw new ClaimLostError(claim.id, claim.fence);
    return settled;
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
    takeover: Takeover,
  ): Promise<ToolResult | undefined> {
    const { call } = claim;
    // The row as claimed is what replays: it may have changed since it was checked.
    const problem = this.settings.binding.problem(call);
    if (problem) throw new SuspensionMismatchError(call.request.id, problem);
    if (call.tool !== read.tool || call.callId !== read.callId || call.runId !== read.runId || !sameJson(call.args, read.args))
      throw new SuspensionMismatchError(call.request.id, 'the call changed between the check and the claim');
    const tracing = this.settings.telemetry?.active();
    if (!tracing) return this.replay(claim, answer, ctx, takeover, undefined, undefined);
    const { span, context } = startResolution(tracing, call);
    try {
      const settled = await tracing.within(context, () => this.replay(claim, answer, ctx, takeover, tracing, span));
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
    takeover: Takeover,
    tracing: Tracing | undefined,
    span: OtelSpan | undefined,
  ): Promise<ToolResult | undefined> {
    const { call } = claim;
    const at = new Date(claim.at);
    if (isExpired(call.request, at) || !answer.ok) {
      const refusal = refusalOf(call.request, answer, at);
      return this.complete(claim, { status: refusal.status, outcome: refused(refusal, this.settings.formatRefusal) }, tracing, span);
    }
    // The tool sees who answered, whichever front end recorded them (docs/suspension.md).
    let answered: Answer = call.answeredBy === undefined ? answer : { ...answer, answeredBy: { ...call.answeredBy } };
    // A quorum's replay sees every approval (ctx.approval.signatures).
    if (call.signatures !== undefined) answered = { ...answered, signatures: call.signatures.map((s) => ({ ...s, by: { ...s.by } })) };
    // A takeover (fence > 1): an earlier holder began this replay and stored nothing, so the
    // tool may have taken effect. Under `recover`, the rule of a crashed durable step: an
    // idempotent tool runs again; any other is put to an operator (docs/agents.md).
    if (claim.fence > 1 && takeover === 'recover' && this.settings.toolkit.get(call.tool)?.idempotent !== true)
      return this.complete(claim, this.recoveryOf(call, answered), tracing, span);
    const keeper = new LeaseKeeper(this.settings.store, claim, this.settings.leaseMs, ctx?.signal, this.settings.clock);
    let ran: RanCall;
    try {
      const chain = call.chain ?? [];
      // The call's own ids, whichever front end answered: a tool keys its side effect on
      // `callId`, so the replay must see what the first run saw (and `runner.resume` passes).
      const ids = {
        ...(call.callId !== undefined ? { callId: call.callId } : {}),
        ...(call.runId !== undefined ? { runId: call.runId } : {}),
      };
      const replay: ToolContext = { ...ctx, ...ids, answer: answered, replay: { request: call.request, chain, fence: claim.fence } };
      // The same key the first execution had: of the call's run and call id.
      const idempotencyKey = idempotencyKeyOf(ids);
      if (idempotencyKey !== undefined) replay.idempotencyKey = idempotencyKey;
      // The replay runs from the stored call, prepared once (a tool changed since refuses it here).
      // An approver's edit, as the claim recorded it, is what runs.
      const prepared = await this.settings.toolkit.prepare(call.tool, call.answer?.args ?? call.args);
      ran = await this.settings.toolkit.runTraced(prepared, withLatch(replay, keeper.cancellation));
    } finally {
      keeper.stop();
    }
    if (keeper.lost) return undefined;
    return this.complete(claim, this.settlementOf(call, answered, ran), tracing, span);
  }

  /**
   * The taken-over link settled with a `recovery` question as its chain's next link, worded as
   * a durable step's: approving it replays the tool (the chain still holds the approval), a
   * refusal tells the model it did not run again.
   */
  private recoveryOf(call: SuspendedCall, answer: Answer): Settlement {
    const data: Record<string, string> = { tool: call.tool };
    if (call.runId !== undefined) data.runId = call.runId;
    if (call.callId !== undefined) data.callId = call.callId;
    const outcome = pending({
      kind: 'recovery',
      prompt: `The process running ${call.tool} (call ${call.callId ?? '-'} of run ${call.runId ?? '-'}) stopped before its result was recorded: it may or may not have taken effect. Run it again?`,
      data,
    });
    return { status: 'resolved', outcome, next: this.nextLink(call, answer, pendingOf(outcome) as PendingRequest, undefined) };
  }

  /** A replay's outcome as the store keeps it: a final result, or the next link of the chain. */
  private settlementOf(call: SuspendedCall, answer: Answer, { result, traceparent }: RanCall): Settlement {
    const edits = call.answer?.args;
    const request = pendingOf(result);
    // The model is told which arguments ran when they are not the ones it gave (sensitive values redacted).
    const outcome =
      edits === undefined || request
        ? result
        : {
            ...result,
            output: `The approver edited the arguments; the call ran with ${JSON.stringify(this.settings.toolkit.redact(call.tool, edits))}.\n${result.output}`,
          };
    if (!request) return { status: 'resolved', outcome };
    const chain = call.chain ?? [];
    // Before anything walks it: a request with a cycle is a failure, not a stack overflow.
    const bad = requestProblem(request);
    if (bad) return { status: 'resolved', outcome: { output: bad, isError: true } };
    const stop = chainStop(call.request, request, chain.length + 1, this.settings.maxChain);
    if (stop) return { status: 'resolved', outcome: stop };
    return { status: 'resolved', outcome, next: this.nextLink(call, answer, request, traceparent) };
  }

  /** The chain's next link after `call`, answered by `answer`: a new pending call asking `request`. */
  private nextLink(call: SuspendedCall, answer: Answer, request: PendingRequest, traceparent: string | undefined): SuspendedCall {
    const chain = call.chain ?? [];
    const next: SuspendedCall = {
      request,
      tool: call.tool,
      args: call.answer?.args ?? call.args,
      status: 'pending',
      createdAt: new Date(this.settings.clock.now()).toISOString(),
      chain: [...chain, { request: call.request, answer: keptAnswer(call.request, answer) }],
    };
    if (call.callId !== undefined) next.callId = call.callId;
    if (call.runId !== undefined) next.runId = call.runId;
    if (call.requestedBy !== undefined) next.requestedBy = { ...call.requestedBy };
    if (call.session !== undefined) next.session = call.session;
    // The next link's resolution links to the replay that asked it.
    if (traceparent !== undefined) next.traceparent = traceparent;
    return this.settings.binding.seal(next);
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
      if (settlement.next) countSuspension(tracing, 'pending', call.tool, registered, settlement.next.request.kind);
    }
    this.settings.onSettled?.(claim, stored);
    return stored.outcome;
  }
}
