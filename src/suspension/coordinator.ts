import {
  AlreadyResolvedError,
  InvalidAnswerError,
  InvalidArgumentError,
  PendingStoreError,
  ToolnexusError,
  UnknownSuspensionError,
  UnregisteredToolError,
} from '../errors';
import { failure, pendingOf } from '../results/helpers';
import type { Answer, PendingRequest, ToolResult } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import type { Toolkit } from '../toolkit/toolkit';
import { answerInline, answerProblem, declined, isExpired, replayOnce, type WaitFor } from './answers';
import { isSettled, isSuspensionStatus } from './status';
import type { Claim, PendingStore, SettledStatus, SuspendedCall, SuspensionFilter } from './store';
import { MemoryPendingStore } from './stores/memory';
import { messageOf } from '../errors/message';

export type { WaitFor } from './answers';

/** Options of a {@link ResumeCoordinator}. */
export interface ResumeCoordinatorOptions {
  /** The tools calls run through; a resolving process must register the same tools. */
  toolkit: Toolkit;
  /** Where suspended calls are kept. Default: a {@link MemoryPendingStore}. */
  store?: PendingStore;
  /**
   * In-process posture: when set, `execute` awaits the answer and replays inline, and
   * nothing is recorded. When absent (durable posture), suspensions are recorded and
   * `execute` returns the pending result at once.
   */
  waitFor?: WaitFor;
  /**
   * How long a claim is held while its replay runs; another process may take the call
   * over once it lapses (its holder presumably died). Longer than your slowest replay.
   * Default 60 000 ms.
   */
  leaseMs?: number;
}

/** Where a call sits in a run; recorded with its suspension. */
export interface ExecuteOptions {
  /** The provider's tool-call id, stable across resume. */
  callId?: string;
  /** The agent run the call belongs to. */
  runId?: string;
}

/** Default claim lease. */
export const DEFAULT_LEASE_MS = 60_000;

const FIRST_POLL_MS = 2;
const MAX_POLL_MS = 50;

/**
 * Tracks suspended tool calls and replays each exactly once when its answer arrives
 * (CONTRACT §5): seconds later in the same process with `waitFor`, or days later in any
 * process that shares the store and registers the same tools.
 *
 * @example
 * ```ts
 * const coordinator = new ResumeCoordinator({ toolkit, store: new SqlitePendingStore({ filename: 'app.db' }) })
 * const first = await coordinator.execute('transfer', args)      // pending: recorded, returned at once
 * // ... later, in any process:
 * const result = await coordinator.resolve({ id: pendingOf(first)!.id, ok: true })
 * ```
 */
export class ResumeCoordinator {
  /** Where this coordinator keeps suspended calls. */
  readonly store: PendingStore;
  /** The tools calls run through. */
  readonly toolkit: Toolkit;
  private readonly waitFor?: WaitFor;
  private readonly leaseMs: number;

  constructor(options: ResumeCoordinatorOptions) {
    if (!options || typeof options.toolkit?.execute !== 'function') throw new InvalidArgumentError('ResumeCoordinator needs a toolkit');
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new InvalidArgumentError(`leaseMs must be a positive number of milliseconds, got ${String(options.leaseMs)}`);
    if (options.waitFor !== undefined && typeof options.waitFor !== 'function') throw new InvalidArgumentError('waitFor must be a function');
    this.toolkit = options.toolkit;
    this.store = options.store ?? new MemoryPendingStore();
    this.waitFor = options.waitFor;
    this.leaseMs = leaseMs;
  }

  /**
   * Runs a call through the toolkit. A suspension is answered inline (with `waitFor`) or
   * recorded durably before this returns it (without). Any other result passes through.
   *
   * Rejects only when a suspension cannot be recorded ({@link PendingStoreError}): the
   * caller must not believe a call is pending that no store holds.
   */
  async execute<TState extends object>(name: string, args?: unknown, ctx?: ToolContext<TState>, options: ExecuteOptions = {}): Promise<ToolResult> {
    const result = await (ctx === undefined ? this.toolkit.execute(name, args) : this.toolkit.execute(name, args, ctx));
    const request = pendingOf(result);
    if (!request) return result;
    const badExpiry = expiryProblem(request);
    if (badExpiry) return failure(badExpiry);
    if (this.waitFor) return answerInline(this.toolkit, this.waitFor, name, args, ctx, request);
    await this.record({ request, tool: name, args: args ?? {}, callId: options.callId, runId: options.runId, status: 'pending', createdAt: new Date().toISOString() });
    return result;
  }

  /**
   * Finishes a recorded suspension and returns its outcome. The first valid answer
   * replays the tool once with `{ ...ctx, answer }`; every later or concurrent `resolve`
   * of the id, in any process, gets that stored outcome.
   *
   * @throws {@link InvalidAnswerError} the answer is not Answer-shaped (nothing changes).
   * @throws {@link UnknownSuspensionError} no store holds the id.
   * @throws {@link AlreadyResolvedError} the call is settled with an outcome this answer contradicts.
   * @throws {@link UnregisteredToolError} the call's tool is not registered here (nothing changes).
   * @throws `ctx.signal.reason` when the signal aborts before this resolver claims the call
   *   (nothing changes; a wait for another resolver's outcome ends early).
   */
  async resolve<TState extends object>(answer: Answer, ctx?: ToolContext<TState>): Promise<ToolResult> {
    assertAnswer(answer);
    return this.settle(answer, ctx);
  }

  /** The recorded call, or `undefined`. */
  async get(id: string): Promise<SuspendedCall | undefined> {
    return this.store.get(id);
  }

  /** Recorded calls, oldest first, filtered by status, run and request kind. */
  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    if (typeof filter !== 'object' || filter === null) throw new InvalidArgumentError('list takes a filter object { status?, runId?, kind? }');
    if (filter.status !== undefined && !isSuspensionStatus(filter.status)) {
      throw new InvalidArgumentError(`unknown suspension status: ${String(filter.status)}`);
    }
    for (const key of ['runId', 'kind'] as const) {
      if (filter[key] !== undefined && typeof filter[key] !== 'string') throw new InvalidArgumentError(`list filter ${key} must be a string`);
    }
    return this.store.list(filter);
  }

  /**
   * Settles a pending call as `cancelled` without running the tool, as an answer
   * `{ ok: false, reason: "cancelled" }` would; `reason` is kept on the stored answer's `data`.
   * Returns the stored outcome; cancelling a cancelled, declined or expired call returns it again.
   *
   * @throws {@link UnknownSuspensionError} no store holds the id.
   * @throws {@link AlreadyResolvedError} the call was already resolved (its tool ran).
   */
  async cancel(id: string, reason?: string): Promise<ToolResult> {
    if (typeof id !== 'string') throw new InvalidArgumentError('cancel needs a suspension id');
    const answer: Answer = reason === undefined ? { id, ok: false, reason: 'cancelled' } : { id, ok: false, reason: 'cancelled', data: { reason } };
    return this.settle(answer, undefined);
  }

  private async record(call: SuspendedCall): Promise<void> {
    try {
      await this.store.insert(call);
    } catch (error) {
      if (error instanceof ToolnexusError) throw error;
      throw new PendingStoreError(`could not record suspension ${call.request.id}: ${messageOf(error)}`, { cause: error });
    }
  }

  /** The shared path of `resolve` and `cancel`: claim, settle, or wait for whoever holds the claim. */
  private async settle<TState extends object>(answer: Answer, ctx: ToolContext<TState> | undefined): Promise<ToolResult> {
    // An aborted caller must not spend the answer: the call stays as it is for a later resolve.
    const signal = ctx?.signal;
    signal?.throwIfAborted();
    let call = await this.store.get(answer.id);
    if (!call) throw new UnknownSuspensionError(answer.id);
    let pause = FIRST_POLL_MS;
    for (;;) {
      if (isSettled(call.status)) return storedOutcome(call, answer);
      const now = new Date();
      if (call.status === 'pending' || leaseLapsed(call, now)) {
        if (answer.ok && !isExpired(call.request, now) && !this.toolkit.has(call.tool)) throw new UnregisteredToolError(answer.id, call.tool);
        signal?.throwIfAborted();
        const claim = await this.store.claim(answer.id, answer, this.leaseMs, now);
        if (claim) {
          const settled = await this.finish(claim, answer, ctx);
          if (settled) return settled;
        } else {
          // Someone else won the claim (or judges the lease live): give them time to settle.
          await sleep(pause, signal);
          pause = Math.min(pause * 2, MAX_POLL_MS);
        }
      } else {
        // Another resolver holds a live claim: wait for its outcome, but never past its lease.
        await sleep(Math.min(pause, Math.max(1, leaseRemaining(call, now) + 1)), signal);
        pause = Math.min(pause * 2, MAX_POLL_MS);
      }
      signal?.throwIfAborted();
      const next = await this.store.get(answer.id);
      if (!next) throw new UnknownSuspensionError(answer.id);
      call = next;
    }
  }

  /** Runs what a won claim decides; `undefined` when the claim was lost meanwhile. */
  private async finish<TState extends object>(claim: Claim, answer: Answer, ctx: ToolContext<TState> | undefined): Promise<ToolResult | undefined> {
    const { call } = claim;
    let status: SettledStatus;
    let outcome: ToolResult;
    if (isExpired(call.request, new Date())) {
      status = 'expired';
      outcome = declined(call.request);
    } else if (!answer.ok) {
      status = answer.reason === 'cancelled' ? 'cancelled' : answer.reason === 'expired' ? 'expired' : 'declined';
      outcome = declined(call.request);
    } else {
      status = 'resolved';
      outcome = await replayOnce(this.toolkit, call.tool, call.args, ctx, answer);
    }
    const stored = storable(outcome);
    const kept = await this.store.complete(claim, status, stored, new Date());
    return kept ? stored : undefined;
  }
}

/** The outcome a settled call gives `answer`, or an AlreadyResolvedError when the answer would have produced another. */
function storedOutcome(call: SuspendedCall, answer: Answer): ToolResult {
  const outcome = call.outcome;
  if (!outcome) throw new PendingStoreError(`suspension ${call.request.id} is ${call.status} but has no stored outcome`);
  if (call.status === 'expired') return outcome; // any answer meets the same expiry
  const ranTool = call.status === 'resolved';
  if (answer.ok !== ranTool) throw new AlreadyResolvedError(call.request.id, call.status);
  if (ranTool && !sameJson(answer.data, call.answer?.data)) throw new AlreadyResolvedError(call.request.id, call.status);
  return outcome;
}

/**
 * The outcome as every store can keep it. Metadata JSON cannot carry (a BigInt, a cycle)
 * is dropped rather than fail the settle: a failed settle would leave the call claimed and
 * replay it again after every lease, forever.
 */
function storable(outcome: ToolResult): ToolResult {
  try {
    return JSON.parse(JSON.stringify(outcome)) as ToolResult;
  } catch (error) {
    return { output: outcome.output, isError: outcome.isError, metadata: { metadataDropped: `the result metadata cannot be stored as JSON: ${messageOf(error)}` } };
  }
}

function expiryProblem(request: PendingRequest): string | undefined {
  if (request.expiresAt === undefined) return undefined;
  if (typeof request.expiresAt === 'string' && !Number.isNaN(Date.parse(request.expiresAt))) return undefined;
  return `suspension ${request.id} has an invalid expiresAt ${JSON.stringify(request.expiresAt)}: expected an RFC 3339 instant`;
}

function leaseRemaining(call: SuspendedCall, now: Date): number {
  // A store that reports no lease leaves the judgement to its own claim.
  return call.leaseUntil === undefined ? -1 : Date.parse(call.leaseUntil) - now.getTime();
}

function leaseLapsed(call: SuspendedCall, now: Date): boolean {
  return call.status === 'resolving' && leaseRemaining(call, now) < 0;
}

function assertAnswer(answer: unknown): asserts answer is Answer {
  const problem = answerProblem(answer);
  if (problem) throw new InvalidAnswerError(`invalid answer: ${problem}`);
}

/** Equality of two JSON values, whatever their key order. */
function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}

/** Waits `ms`, or less if `signal` aborts first. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
