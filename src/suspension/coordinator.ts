import { ContentBound } from './content';
import { InvalidAnswerError, InvalidArgumentError } from '../errors';
import { failure, pending, pendingOf, type PendingRequestInit } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import { countSuspension } from '../telemetry/suspension';
import { Telemetry } from '../telemetry/telemetry';
import type { Clock } from '../timing/clock';
import type { ToolContext } from '../toolkit/context';
import { hasIdempotencyKey, withIdempotencyKey } from './idempotency';
import type { Preparation } from '../toolkit/prepared';
import type { Toolkit } from '../toolkit/toolkit';
import {
  assertStorableId,
  checkAnswer,
  isAnswerWithCall,
  requestProblem,
  shownId,
  suspensionIdProblem,
  withStoredCall,
  type AnswerWithCall,
  type CheckedAnswer,
  type FormatRefusal,
  type WaitFor,
} from './answers';
import {
  checkedAudit,
  DEFAULT_HISTORY_LIMIT,
  MAX_COMMENT_LENGTH,
  MAX_HISTORY_LIMIT,
  withCommentAsReason,
  type HistoryFilter,
  type Audit,
  type Principal,
} from './audit';
import type { AnswerAction, AnswerDecision } from './policy';
import { Authority, keepSystemMark } from './authority';
import type { Grant, GrantInit, GrantOptions } from './grants';
import { StandingAnswers } from './standing';
import { Sweeper, type LapsedTakeover, type RecoverLapsedOptions, type SweepResult } from './sweep';
import { Binding } from './binding';
import type { ExecuteOptions, ResumeCoordinatorOptions } from './coordinator-options';
import { coordinatorParts } from './coordinator-parts';
import { answerInline } from './inline';
import { Resolution, type ExpectedCall, type ResolveOptions } from './resolution';
import { checkedAnswerOf } from './stages/read';
import { Observers, type SuspensionObserver } from './observer';
import { Recorder } from './recorder';
import { isSuspensionStatus } from './status';
import type { SuspendedCall, SuspensionFilter, SuspensionStore } from './store';
import { checkHistoryFilter } from './validate';

export type { AnswerWithCall, CheckedAnswer, WaitFor } from './answers';
export type { ExpectedCall, IfClaimed, ResolveOptions } from './resolution';
export { DEFAULT_LEASE_MS } from './coordinator-options';
export type { ExecuteOptions, ResumeCoordinatorOptions } from './coordinator-options';

/**
 * Tracks suspended tool calls and replays each exactly once when its answer arrives
 * (docs/design.md, "the path of an answer"): seconds later in the same process with
 * `waitFor`, or days later in any process that shares the store and registers the same tools.
 *
 * @example
 * ```ts
 * const coordinator = new ResumeCoordinator({ toolkit, store: new SqliteStore({ filename: 'app.db' }) })
 * const first = await coordinator.execute('transfer', args)      // pending: recorded, returned at once
 * // ... later, in any process:
 * const result = await coordinator.resolve({ id: pendingOf(first)!.id, ok: true })
 * ```
 */
export class ResumeCoordinator {
  /** Where this coordinator keeps suspended calls. */
  readonly store: SuspensionStore;
  /** The tools calls run through. */
  readonly toolkit: Toolkit;
  /** The bound for stored results (the `content` option): what a runner applies to the results it keeps, and how it loads media kept by reference. */
  readonly content: ContentBound;
  private readonly waitFor?: WaitFor;
  private readonly maxChain: number;
  private readonly formatRefusal: FormatRefusal;
  private readonly binding: Binding;
  private readonly resolution: Resolution;
  private readonly recorder: Recorder;
  /** Where this coordinator reads the time and waits from (the `clock` option); a served keyed call renews its key on it. */
  readonly clock: Clock;
  private readonly maxAnswerBytes: number;
  private readonly observers: Observers;
  private readonly telemetry: Telemetry;
  private readonly authority: Authority;
  private readonly standing: StandingAnswers;
  private readonly sweeper: Sweeper;

  constructor(options: ResumeCoordinatorOptions) {
    ({
      store: this.store,
      toolkit: this.toolkit,
      content: this.content,
      waitFor: this.waitFor,
      maxChain: this.maxChain,
      formatRefusal: this.formatRefusal,
      binding: this.binding,
      resolution: this.resolution,
      recorder: this.recorder,
      clock: this.clock,
      maxAnswerBytes: this.maxAnswerBytes,
      observers: this.observers,
      telemetry: this.telemetry,
      authority: this.authority,
      standing: this.standing,
      sweeper: this.sweeper,
    } = coordinatorParts(options));
    for (const observer of options.observers ?? []) this.observe(observer);
  }

  /**
   * Runs a call through the toolkit: {@link Toolkit.prepare}, then {@link run}. A suspension is
   * answered inline (with `waitFor`) or recorded durably before this returns it (without). Any
   * other result passes through. `args` may be the model's raw JSON text: the toolkit parses
   * it (and says so when it is not an object).
   *
   * Rejects only when a suspension cannot be recorded ({@link StoreError}): the
   * caller must not believe a call is pending that no store holds.
   */
  async execute<TState extends object>(
    name: string,
    args?: unknown,
    ctx?: ToolContext<TState>,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    return this.run(await this.toolkit.prepare(name, args), ctx, options);
  }

  /**
   * Runs a call the toolkit prepared ({@link Toolkit.prepare}) as {@link execute} does: its
   * arguments are not parsed again, and the parse the tool runs with is what the store keeps
   * if it suspends. A refused call's error result is returned as {@link Toolkit.run} reports it.
   *
   * @throws {@link StoreError} a suspension cannot be recorded.
   */
  async run<TState extends object>(call: Preparation, ctx?: ToolContext<TState>, options: ExecuteOptions = {}): Promise<ToolResult> {
    // An unknown tool or invalid arguments: the Toolkit's own error result (and hooks), as always.
    if (!call.ok) return this.toolkit.run(call, ctx);
    // Taken before the tool runs, which may change the object it is given.
    const stored = call.stored;
    // Read without computing it: a runner's context computes its key on first read.
    if (!hasIdempotencyKey(ctx) && options.runId !== undefined && options.callId !== undefined)
      ctx = withIdempotencyKey({ ...ctx } as ToolContext<TState>, options);
    const { result, traceparent } = await this.toolkit.runTraced(call, ctx);
    const request = pendingOf(result);
    if (!request) return result;
    const badRequest = requestProblem(request);
    if (badRequest) return failure(badRequest);
    const badId = suspensionIdProblem(request.id);
    if (badId) return failure(`the suspension id ${shownId(request.id)} cannot be stored: it ${badId}`);
    if (!stored.ok) return failure(`${call.name} suspended, but its arguments cannot be stored: ${stored.problem}`);
    const value = JSON.parse(stored.json) as unknown;
    const waitFor = options.waitFor ?? this.waitFor;
    if (waitFor) {
      // The replay starts from the stored form, as a durable one would: the Toolkit prepares it once.
      return answerInline(request, ctx, {
        replay: (replayCtx) => this.toolkit.execute(call.name, value, replayCtx),
        waitFor,
        onPending: options.onPending,
        maxChain: this.maxChain,
        formatRefusal: this.formatRefusal,
        clock: this.clock,
      });
    }
    const automatic = await this.standing.automaticOf(request, call.name, value, options, ctx);
    const sealed = await this.recorder.record(request, call.name, value, {
      callId: options.callId,
      runId: options.runId,
      traceparent,
      requestedBy: options.principal,
      automatic,
      session: options.session,
    });
    countSuspension(this.telemetry.active(), 'pending', call.name, true, request.kind);
    this.observers.pending(sealed);
    // An automatic answer or a standing grant may settle it at once (docs/who-may-answer.md).
    return (await this.standing.settle(sealed, automatic, options, ctx)) ?? result;
  }

  /**
   * Records a standing approval (docs/who-may-answer.md, "Grants"): from now until `until` (or
   * until revoked), every approval request of `tool` raised in the scope is settled at once as
   * approved by `by`, audited with the grant's id, without asking; the answer policy judges `by`
   * as it judges any answer (a refused grant asks a person). Not for quorum requests. With
   * `answering` (an "always approve" of that request), `by` is judged at once as its approver.
   * @throws {@link InvalidArgumentError} a malformed grant, or `answering` is no pending approval request of `tool`.
   * @throws {@link AnswerRefusedError} `by` may not approve the request it answers (nothing stored; observers told).
   * @throws {@link UnknownSuspensionError} `answering` names no stored request. {@link StoreError}: the store keeps no grants.
   */
  async grant(init: GrantInit, options: GrantOptions = {}): Promise<Grant> {
    return this.standing.grant(init, options);
  }

  /** Revokes a grant: the next request it would have covered is asked. False when unknown or already revoked. */
  async revoke(grantId: string): Promise<boolean> {
    return this.standing.revoke(grantId);
  }

  /** Every grant the store keeps, revoked and lapsed ones included, oldest first. */
  async grants(): Promise<Grant[]> {
    return this.standing.grants();
  }

  /**
   * Adds an observer told of every suspension this coordinator records and every one it
   * settles, after the store write, with the call redacted. Returns a function that removes it.
   * Only this coordinator's own writes are seen: a call settled by another process is not.
   */
  observe(observer: SuspensionObserver): () => void {
    if (typeof observer !== 'object' || observer === null)
      throw new InvalidArgumentError('observe needs an observer { onPending?, onSettled? }');
    return this.observers.add(observer);
  }

  /**
   * Finishes a recorded suspension and returns its outcome. The first valid answer claims
   * the call and replays the tool once with `{ ...ctx, answer, replay }`; every later or
   * concurrent `resolve` of the id, in any process, gets that stored outcome. When the
   * replay asks something new, the outcome is the pending result of the chain's next link.
   *
   * The answer is checked and copied first, unless it is a {@link CheckedAnswer} this coordinator
   * (or `checkAnswer` under a cap no larger) made: `data` must be plain JSON, nested at most 32 deep,
   * without own `__proto__`/`constructor`/`prototype` keys, and at most `maxAnswerBytes` as JSON;
   * the copy, not the object given, is what the store keeps and the replay sees. The stored call
   * is read once, before the claim or with it (a store's early claim, judged right after and given
   * back as it was when refused), or not at all when the answer carries it ({@link read}).
   *
   * The `audit` (who answered, their comment) is recorded with the answer, in the same store write as the claim, with the
   * store's instant: `answeredBy`, `answeredAt` and `comment` of the call (docs/operating.md,
   * "Audit trail"). A resolve that does not win the claim records nothing; `get(id)` says who
   * answered. A decline's `comment` is also its `data.reason` when the answer carries none,
   * so the model is told why.
   *
   * @throws {@link InvalidAnswerError} the answer is not Answer-shaped, or its data is too large, too deep or not plain JSON (nothing changes).
   * @throws {@link InvalidArgumentError} the `audit` is malformed: a principal without a string `id`, a comment over 500 characters (nothing changes).
   * @throws {@link UnknownSuspensionError} no store holds the id (an id no store could hold, with NUL or over 512 characters, included).
   * @throws {@link AlreadyResolvedError} the call is settled with an outcome this answer contradicts.
   * @throws {@link UnregisteredToolError} the call's tool is not registered here (nothing changes).
   * @throws {@link SuspensionMismatchError} the stored call was changed since it was recorded (nothing runs).
   * @throws {@link ClaimLostError} this resolver's replay lost its claim and nobody holds the call now.
   * @throws {@link ClaimHeldError} with `ifClaimed: 'refuse'`: another answer holds the claim or settled the call (nothing changes).
   * @throws `ctx.signal.reason` when the signal aborts before this resolver claims the call
   *   (nothing changes; a wait for another resolver's outcome ends early).
   */
  async resolve<TState extends object>(
    answer: Answer,
    ctx?: ToolContext<TState>,
    audit?: Audit,
    expected?: ExpectedCall,
    options: ResolveOptions = {},
  ): Promise<ToolResult> {
    return this.resolution.resolve(answer, ctx, audit, expected, options);
  }

  /**
   * Checks an answer as {@link resolve} does and returns the copy `resolve` keeps: a
   * {@link CheckedAnswer}, which `resolve` takes as it is. A checked answer whose cap is no
   * larger than this coordinator's (one it made, say) is returned as it is. For a caller that
   * must refuse a malformed answer before anything else (the runner, before it loads a run).
   *
   * @throws {@link InvalidAnswerError} the answer is not Answer-shaped, or its data is too large, too deep or not plain JSON.
   * @throws {@link UnknownSuspensionError} its id is one no store could hold.
   */
  checkAnswer(answer: unknown): CheckedAnswer {
    return checkedAnswerOf(answer, this.maxAnswerBytes);
  }

  /**
   * The answer checked as {@link checkAnswer} checks it, bound to the stored call its id names
   * (`undefined` inside when there is none): `resolve` of the value returned claims that call
   * without reading it again, so a front end that needs the call first (which run is it?) reads
   * it once for the whole path of the answer (docs/design.md). `call`, when given, is that call
   * as the caller just read it from this coordinator; an answer already bound is returned as it is.
   *
   * @throws {@link InvalidAnswerError} the answer is malformed (see {@link checkAnswer}).
   * @throws {@link InvalidArgumentError} `call` is not the call the answer names.
   */
  async read(answer: unknown, call?: SuspendedCall): Promise<AnswerWithCall> {
    const checked = this.checkAnswer(answer);
    if (call === undefined && isAnswerWithCall(checked, this.store)) return checked;
    if (call !== undefined && call.request?.id !== checked.id)
      throw new InvalidArgumentError(`read: the call given is not suspension ${shownId(checked.id)}`);
    return withStoredCall(checked, this.store, call ?? (await this.store.get(checked.id)));
  }

  /**
   * Settled calls, newest settlement first, with who answered them, when, and why
   * (`answeredBy`, `answeredAt`, `comment`), their status and outcome: the audit trail
   * (docs/operating.md). Filter by settled `status`, `kind`, `runId` and `tool`; at most
   * `limit` calls (default 100, at most 1000).
   *
   * @throws {@link InvalidArgumentError} a malformed filter (an unsettled status, a limit out of range).
   */
  async history(filter: HistoryFilter = {}): Promise<SuspendedCall[]> {
    checkHistoryFilter(filter);
    const limit = filter.limit ?? DEFAULT_HISTORY_LIMIT;
    if (limit > MAX_HISTORY_LIMIT) throw new InvalidArgumentError(`history: limit must be at most ${MAX_HISTORY_LIMIT}, got ${limit}`);
    return this.store.history({ ...filter, limit });
  }

  /** The recorded call, or `undefined` (also for an id no store could hold). */
  async get(id: string): Promise<SuspendedCall | undefined> {
    if (typeof id === 'string' && suspensionIdProblem(id) !== undefined) return undefined;
    return this.store.get(id);
  }

  /** Recorded calls, oldest first, filtered by status, run and request kind. */
  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    if (typeof filter !== 'object' || filter === null)
      throw new InvalidArgumentError('list takes a filter object { status?, runId?, kind? }');
    if (filter.status !== undefined && !isSuspensionStatus(filter.status)) {
      throw new InvalidArgumentError(`unknown suspension status: ${String(filter.status)}`);
    }
    for (const key of ['runId', 'kind'] as const) {
      if (filter[key] !== undefined && typeof filter[key] !== 'string')
        throw new InvalidArgumentError(`list filter ${key} must be a string`);
    }
    return this.store.list(filter);
  }

  /**
   * Settles a pending call as `cancelled` without running the tool, as an answer
   * `{ ok: false, reason: "cancelled" }` would; `reason` is kept on the stored answer's `data`.
   * Returns the stored outcome; cancelling a cancelled, declined or expired call returns it again.
   * `audit.by` is recorded as who cancelled; the recorded comment is `audit.comment`, else `reason`
   * (cut to 500 characters).
   *
   * @throws {@link UnknownSuspensionError} no store holds the id.
   * @throws {@link AlreadyResolvedError} the call was already resolved (its tool ran).
   */
  async cancel(id: string, reason?: string, audit?: Audit): Promise<ToolResult> {
    if (typeof id !== 'string') throw new InvalidArgumentError('cancel needs a suspension id');
    assertStorableId(id);
    const answer: Answer =
      reason === undefined ? { id, ok: false, reason: 'cancelled' } : { id, ok: false, reason: 'cancelled', data: { reason } };
    const checked = checkAnswer(answer, this.maxAnswerBytes);
    if (!checked.ok) throw new InvalidAnswerError(`invalid cancellation: ${checked.problem}`);
    const given = checkedAudit(audit, 'cancel');
    const comment = given?.comment ?? (typeof reason === 'string' ? reason.slice(0, MAX_COMMENT_LENGTH) : undefined);
    const recorded = keepSystemMark(
      audit,
      given?.by === undefined && comment === undefined ? undefined : { ...given, ...(comment === undefined ? {} : { comment }) },
    );
    const call = await this.store.get(id);
    return this.resolution.checkAndClaim(withCommentAsReason(checked.answer, recorded?.comment), call, undefined, recorded);
  }

  /**
   * Records a suspension of a call that its tool did not raise: a question about the call
   * put by the host (an agent run that lost its driver while the call ran asks an operator
   * whether to run it again: kind `recovery`). Answered like any other on the answer path:
   * an ok answer replays the tool with the arguments (the replay sees `ctx.answer` for this
   * request, so an approval the tool requires is still asked), a refusal settles it unrun.
   * Returns the pending result. `args` are parsed by the Toolkit as `execute` parses them.
   *
   * @throws {@link InvalidArgumentError} the tool is not registered, or the arguments do not parse (nothing is recorded).
   * @throws {@link StoreError} the store cannot record it.
   */
  async suspend(
    name: string,
    args: unknown,
    init: PendingRequestInit,
    options: Pick<ExecuteOptions, 'callId' | 'runId' | 'principal'> = {},
  ): Promise<ToolResult> {
    const call = await this.toolkit.prepare(name, args);
    if (!call.ok)
      throw new InvalidArgumentError(
        `cannot suspend a call of ${JSON.stringify(name)}: ${this.toolkit.has(name) ? 'its arguments do not parse' : 'no such tool'}`,
      );
    const stored = call.stored;
    if (!stored.ok) throw new InvalidArgumentError(`cannot suspend a call of ${name}: its arguments cannot be stored: ${stored.problem}`);
    const result = pending(init);
    const request = pendingOf(result) as PendingRequest;
    const sealed = await this.recorder.record(request, name, JSON.parse(stored.json) as unknown, {
      callId: options.callId,
      runId: options.runId,
      requestedBy: options.principal,
    });
    this.observers.pending(sealed);
    return result;
  }

  /**
   * What `principal` may do to `call` now under this coordinator's answer policy: `answer`,
   * `cancel`, both (no policy), or none (settled, or refused). For front ends that show the
   * actions; the answer itself is judged again when it is given (docs/who-may-answer.md).
   */
  async actionsOf(principal: Principal, call: SuspendedCall): Promise<AnswerAction[]> {
    return this.authority.actionsOf(principal, call);
  }

  /** Who may answer `call`, as far as its request and the answer policy can say: for routing it to them (docs/channels.md, "Routing"). */
  async answerersOf(call: SuspendedCall): Promise<string[]> {
    return this.authority.answerersOf(call);
  }

  /**
   * The answer policy's decision on `answer` to `call` by `principal`, taken as `resolve` would
   * take it but changing and telling nothing: for a front end that refuses a batch of answers
   * before applying any (the chat), or a policy's dry run. `resolve` judges again.
   */
  async decide(principal: Principal, call: SuspendedCall, answer: Answer): Promise<AnswerDecision> {
    return this.authority.decision(principal, call, answer);
  }

  /**
   * Settles what time alone decides, and tells of it (docs/who-may-answer.md, "Escalation"):
   * every pending call past its `expiresAt` is settled `expired` (never `declined`: the model
   * is told it expired), and every escalation that came due since this coordinator's last sweep
   * is told to the observers (`onEscalated`, the webhook `suspension.escalated`). Time is the
   * store's clock (`SuspensionStore.now`), as for leases; this coordinator's for a store without
   * one. Run it on a timer in one process or several: a call is settled once.
   * Returns the ids of each.
   */
  async sweep(): Promise<SweepResult> {
    return this.sweeper.sweep();
  }

  /**
   * The takeover rule (docs/suspension.md) for calls whose holder died mid-replay: each `resolving` call whose lease lapsed
   * by the store's clock, oldest first, at most `limit`, goes on with the answer its holder recorded. Safe from many processes.
   */
  async recoverLapsed(options: RecoverLapsedOptions = {}): Promise<LapsedTakeover[]> {
    return this.sweeper.recoverLapsed(options);
  }

  /** Whether an answer policy judges this coordinator's answers. */
  get hasPolicy(): boolean {
    return this.authority.active;
  }
}
