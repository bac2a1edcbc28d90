import { InvalidAnswerError, InvalidArgumentError, StoreError, ToolnexusError, UnknownSuspensionError } from '../errors';
import { messageOf } from '../errors/message';
import { failure, pending, pendingOf, type PendingRequestInit } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import { countSuspension } from '../telemetry/suspension';
import type { TelemetryOption } from '../telemetry/options';
import { Telemetry } from '../telemetry/telemetry';
import { systemClock, type Clock } from '../timing/clock';
import type { ToolContext } from '../toolkit/context';
import type { Toolkit } from '../toolkit/toolkit';
import {
  checkAnswer,
  DEFAULT_MAX_ANSWER_BYTES,
  DEFAULT_MAX_CHAIN,
  requestProblem,
  formatRefusal,
  suspensionIdProblem,
  type FormatRefusal,
  type WaitFor,
} from './answers';
import { checkedAudit, DEFAULT_HISTORY_LIMIT, MAX_COMMENT_LENGTH, MAX_HISTORY_LIMIT, type HistoryFilter, type Audit } from './audit';
import { Binding } from './binding';
import { answerInline } from './inline';
import { Resolution, type ExpectedCall } from './resolution';
import { Observers, type SuspensionObserver } from './observer';
import { isSuspensionStatus } from './status';
import type { Claim, Settlement, SuspendedCall, SuspensionFilter, SuspensionStore } from './store';
import { MemorySuspensionStore } from './memory';
import { checkHistoryFilter, checkInsertable } from './validate';

export type { WaitFor } from './answers';
export type { ExpectedCall } from './resolution';

/** Options of a {@link ResumeCoordinator}. */
export interface ResumeCoordinatorOptions {
  /** The tools calls run through; a resolving process must register the same tools. */
  toolkit: Toolkit;
  /**
   * Where suspended calls are kept. Default: a {@link MemorySuspensionStore}. The coordinator
   * checks everything it hands the store; the store keeps it (docs/design.md, "Stores").
   */
  store?: SuspensionStore;
  /**
   * In-process posture: when set, `execute` awaits the answer and replays inline, and
   * nothing is recorded. When absent (durable posture), suspensions are recorded and
   * `execute` returns the pending result at once.
   */
  waitFor?: WaitFor;
  /**
   * How long a claim holds without renewal. The holder renews it every third of this while
   * its replay runs, so it bounds how long a call stays stuck after its holder died, not how
   * long a replay may take. Default 60 000 ms.
   */
  leaseMs?: number;
  /**
   * Where the coordinator reads the time and runs its timers: a replay's lease heartbeat, the
   * hint that another holder's lease lapsed, an inline answer's expiry and the timestamps of the
   * calls it records. Default: the system clock; tests pass a fake one to step through renewals
   * and expiry. The stores judge leases by their own clock (docs/design.md, glossary: "clock").
   */
  clock?: Clock;
  /** How many requests one call may chain (login, then approval, ...) before it ends `unresolved`. Default 4. */
  maxChain?: number;
  /** Words the text fed back for a declined, expired or cancelled suspension. */
  formatRefusal?: FormatRefusal;
  /**
   * A secret that makes every stored call's binding digest an HMAC, so a call edited in the
   * store cannot be made to pass. Keep it out of the database; every process needs the same.
   */
  bindingKey?: string | Uint8Array;
  /**
   * Largest `data` an answer to `resolve` may carry, in bytes of its JSON; a larger one is an
   * {@link InvalidAnswerError} and nothing is stored. Default 64 KiB (65 536).
   */
  maxAnswerBytes?: number;
  /**
   * Told of every recorded suspension and every settlement, after the store write, with the
   * call redacted (e.g. a {@link Webhooks}); more can be added with {@link ResumeCoordinator.observe}.
   */
  observers?: SuspensionObserver[];
  /**
   * OpenTelemetry: a `resolve_suspension {tool}` span per answer that wins its claim, linked to
   * the span that suspended, and the suspension counter; by the global providers unless this
   * picks others or turns them off (docs/observability.md).
   */
  telemetry?: TelemetryOption;
}

/** Where a call sits in a run, and how this one call is answered inline. */
export interface ExecuteOptions {
  /** The provider's tool-call id, stable across resume. */
  callId?: string;
  /** The agent run the call belongs to. */
  runId?: string;
  /** Answer this call's suspensions inline with this function instead of the coordinator's posture. */
  waitFor?: WaitFor;
  /** Told of every request before `waitFor` is asked for it. */
  onPending?: (request: PendingRequest) => void;
}

/** Default claim lease. */
export const DEFAULT_LEASE_MS = 60_000;

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
  private readonly waitFor?: WaitFor;
  private readonly maxChain: number;
  private readonly formatRefusal: FormatRefusal;
  private readonly binding: Binding;
  private readonly resolution: Resolution;
  private readonly clock: Clock;
  private readonly maxAnswerBytes: number;
  private readonly observers: Observers;
  private readonly telemetry: Telemetry;
  /** Answers this coordinator checked ({@link checkAnswer}): the next `resolve` of each takes it as it is. */
  private readonly checked = new WeakSet<Answer>();

  constructor(options: ResumeCoordinatorOptions) {
    if (!options || typeof options.toolkit?.execute !== 'function') throw new InvalidArgumentError('ResumeCoordinator needs a toolkit');
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isFinite(leaseMs) || leaseMs <= 0)
      throw new InvalidArgumentError(`leaseMs must be a positive number of milliseconds, got ${String(options.leaseMs)}`);
    const maxChain = options.maxChain ?? DEFAULT_MAX_CHAIN;
    if (!Number.isInteger(maxChain) || maxChain < 1)
      throw new InvalidArgumentError(`maxChain must be a positive integer, got ${String(options.maxChain)}`);
    const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
    if (!Number.isSafeInteger(maxAnswerBytes) || maxAnswerBytes < 1) {
      throw new InvalidArgumentError(`maxAnswerBytes must be a positive integer number of bytes, got ${String(options.maxAnswerBytes)}`);
    }
    this.maxAnswerBytes = maxAnswerBytes;
    if (options.waitFor !== undefined && typeof options.waitFor !== 'function')
      throw new InvalidArgumentError('waitFor must be a function');
    if (options.formatRefusal !== undefined && typeof options.formatRefusal !== 'function')
      throw new InvalidArgumentError('formatRefusal must be a function');
    const clock = options.clock ?? systemClock;
    if (typeof clock?.now !== 'function' || typeof clock.setTimeout !== 'function' || typeof clock.clearTimeout !== 'function')
      throw new InvalidArgumentError('clock must have now, setTimeout and clearTimeout');
    this.clock = clock;
    this.toolkit = options.toolkit;
    this.store = options.store ?? new MemorySuspensionStore();
    this.waitFor = options.waitFor;
    this.maxChain = maxChain;
    this.formatRefusal = options.formatRefusal ?? formatRefusal;
    this.binding = new Binding(options.bindingKey);
    this.observers = new Observers(this.toolkit);
    this.telemetry = new Telemetry(options.telemetry, 'ResumeCoordinator');
    for (const observer of options.observers ?? []) this.observe(observer);
    this.resolution = new Resolution({
      toolkit: this.toolkit,
      store: this.store,
      leaseMs,
      clock,
      maxChain,
      formatRefusal: this.formatRefusal,
      binding: this.binding,
      telemetry: this.telemetry,
      onSettled: (claim, settlement) => this.settledOf(claim, settlement),
    });
  }

  /**
   * Runs a call through the toolkit. A suspension is answered inline (with `waitFor`) or
   * recorded durably before this returns it (without). Any other result passes through.
   * `args` may be the model's raw JSON text: the toolkit parses it (and says so when it is not an object).
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
    // One parse: the Toolkit's, whose value the tool runs with and the store keeps.
    const parsed = await this.toolkit.parseArguments(name, args);
    // An unknown tool or invalid arguments: the Toolkit's own error result (and hooks), as always.
    if (!parsed?.ok) return ctx === undefined ? this.toolkit.execute(name, args) : this.toolkit.execute(name, args, ctx);
    // Taken before the tool runs, which may change the object it is given.
    const stored = storableArguments(parsed.value);
    const result = await (ctx === undefined ? this.toolkit.execute(name, parsed.value) : this.toolkit.execute(name, parsed.value, ctx));
    const request = pendingOf(result);
    if (!request) return result;
    const badRequest = requestProblem(request);
    if (badRequest) return failure(badRequest);
    const badId = suspensionIdProblem(request.id);
    if (badId) return failure(`the suspension id ${shownId(request.id)} cannot be stored: it ${badId}`);
    if (!stored.ok) return failure(`${name} suspended, but its arguments cannot be stored: ${stored.problem}`);
    const value = JSON.parse(stored.text) as unknown;
    const waitFor = options.waitFor ?? this.waitFor;
    if (waitFor) {
      return answerInline(request, ctx, {
        replay: (replayCtx) => this.toolkit.execute(name, value, replayCtx),
        waitFor,
        onPending: options.onPending,
        maxChain: this.maxChain,
        formatRefusal: this.formatRefusal,
        clock: this.clock,
      });
    }
    const call: SuspendedCall = {
      request,
      tool: name,
      args: value,
      status: 'pending',
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    if (options.callId !== undefined) call.callId = options.callId;
    if (options.runId !== undefined) call.runId = options.runId;
    const traceparent = this.toolkit.traceparentOf(result);
    if (traceparent !== undefined) call.traceparent = traceparent;
    const sealed = this.binding.seal(call);
    await this.record(sealed);
    countSuspension(this.telemetry.active(), 'pending', name, true, request.kind);
    this.observers.pending(sealed);
    return result;
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
   * The answer is checked and copied first: `data` must be plain JSON, nested at most 32 deep,
   * without own `__proto__`/`constructor`/`prototype` keys, and at most `maxAnswerBytes` as JSON;
   * the copy, not the object given, is what the store keeps and the replay sees.
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
   * @throws `ctx.signal.reason` when the signal aborts before this resolver claims the call
   *   (nothing changes; a wait for another resolver's outcome ends early).
   */
  async resolve<TState extends object>(
    answer: Answer,
    ctx?: ToolContext<TState>,
    audit?: Audit,
    expected?: ExpectedCall,
  ): Promise<ToolResult> {
    const checked = this.checked.delete(answer) ? answer : this.checkAnswer(answer);
    if (audit === undefined) return this.resolution.settle(checked, ctx, undefined, expected);
    const recorded = checkedAudit(audit, 'resolve');
    return this.resolution.settle(withCommentAsReason(checked, recorded?.comment), ctx, recorded, expected);
  }

  /**
   * Checks an answer as {@link resolve} does and returns the copy `resolve` keeps: given to
   * the next `resolve` as it is, that copy is not checked again. For a caller that must refuse
   * a malformed answer before anything else (the runner, before it loads a run).
   *
   * @throws {@link InvalidAnswerError} the answer is not Answer-shaped, or its data is too large, too deep or not plain JSON.
   * @throws {@link UnknownSuspensionError} its id is one no store could hold.
   */
  checkAnswer(answer: unknown): Answer {
    const checked = checkAnswer(answer, this.maxAnswerBytes);
    if (!checked.ok) throw new InvalidAnswerError(`invalid answer: ${checked.problem}`);
    assertStorableId(checked.answer.id);
    this.checked.add(checked.answer);
    return checked.answer;
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
    const recorded: Audit | undefined =
      given?.by === undefined && comment === undefined ? undefined : { ...given, ...(comment === undefined ? {} : { comment }) };
    return this.resolution.settle(withCommentAsReason(checked.answer, recorded?.comment), undefined, recorded);
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
    options: Pick<ExecuteOptions, 'callId' | 'runId'> = {},
  ): Promise<ToolResult> {
    const parsed = await this.toolkit.parseArguments(name, args);
    if (!parsed?.ok)
      throw new InvalidArgumentError(
        `cannot suspend a call of ${JSON.stringify(name)}: ${parsed ? 'its arguments do not parse' : 'no such tool'}`,
      );
    const stored = storableArguments(parsed.value);
    if (!stored.ok) throw new InvalidArgumentError(`cannot suspend a call of ${name}: its arguments cannot be stored: ${stored.problem}`);
    const result = pending(init);
    const request = pendingOf(result) as PendingRequest;
    const call: SuspendedCall = {
      request,
      tool: name,
      args: JSON.parse(stored.text) as unknown,
      status: 'pending',
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    if (options.callId !== undefined) call.callId = options.callId;
    if (options.runId !== undefined) call.runId = options.runId;
    const sealed = this.binding.seal(call);
    await this.record(sealed);
    this.observers.pending(sealed);
    return result;
  }

  /** Tells the observers of a stored settlement: the call as settled, then the chain's next link. */
  private settledOf(claim: Claim, settlement: Settlement): void {
    if (this.observers.size === 0) return;
    const { leaseUntil: _released, ...held } = claim.call;
    const settled: SuspendedCall = {
      ...held,
      status: settlement.status,
      outcome: settlement.outcome,
      updatedAt: new Date(this.clock.now()).toISOString(),
    };
    if (settlement.next) settled.next = settlement.next.request.id;
    this.observers.settled(settled);
    if (settlement.next) this.observers.pending(settlement.next);
  }

  private async record(call: SuspendedCall): Promise<void> {
    checkInsertable(call);
    try {
      await this.store.insert(call);
    } catch (error) {
      if (error instanceof ToolnexusError) throw error;
      throw new StoreError(`could not record suspension ${call.request.id}: ${messageOf(error)}`, { cause: error });
    }
  }
}

/**
 * A refusal's comment doubles as its `data.reason` (what the refusal text quotes to the
 * model) when the answer carries no reason of its own; an approval's data is left alone.
 */
function withCommentAsReason(answer: Answer, comment: string | undefined): Answer {
  if (answer.ok || comment === undefined || comment.trim() === '') return answer;
  const reason = answer.data?.reason;
  if (typeof reason === 'string' && reason.trim() !== '') return answer;
  return { ...answer, data: { ...answer.data, reason: comment } };
}

/** An id no store could hold is unknown, said before any store is asked (PostgreSQL would fail on NUL). */
function assertStorableId(id: string): void {
  if (suspensionIdProblem(id) !== undefined) throw new UnknownSuspensionError(shownId(id));
}

/** An id as messages show it: cut when long, control characters escaped. */
function shownId(id: string): string {
  const cut = id.length > 80 ? `${id.slice(0, 80)}… (${id.length} characters)` : id;
  return JSON.stringify(cut).slice(1, -1);
}

/** The parsed arguments as the JSON text a store keeps, or why JSON cannot carry them (a BigInt, a cycle). */
function storableArguments(value: object): { ok: true; text: string } | { ok: false; problem: string } {
  try {
    return { ok: true, text: JSON.stringify(value) };
  } catch (error) {
    return { ok: false, problem: messageOf(error) };
  }
}
