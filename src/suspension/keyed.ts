import { createHash } from 'node:crypto';
import { InvalidArgumentError, ToolnexusError } from '../errors';
import { messageOf } from '../errors/message';
import { failure } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import { withLatch } from '../timing/abort-latch';
import { systemClock, type Clock } from '../timing/clock';
import type { ToolContext } from '../toolkit/context';
import type { Principal } from './audit';
import type { ExecuteOptions } from './coordinator-options';
import { storable } from './json';
import { HeldLease } from './lease';
import type { SuspensionStore } from './store';

/**
 * What {@link KeyedCallStore.beginKeyed} found for a key: this caller runs the call (`started`,
 * under the fencing number that finishes it), another holds it (`running`), or it ran and its
 * first outcome is kept (`done`).
 */
export type KeyedStart = { state: 'started'; fence: number } | { state: 'running' } | { state: 'done'; outcome: ToolResult };

/**
 * Where a served call's incoming idempotency key is kept with its first outcome, so a second call
 * with the same key (another connection, another process) runs nothing and gets that outcome
 * (docs/tools.md, "Idempotency keys and receipts"). Every built-in store is one; time is the
 * store's own, as for leases.
 */
export interface KeyedCallStore {
  /**
   * Atomically: a key never seen, or one whose holder's lease of `leaseMs` lapsed, or whose
   * outcome is older than `retentionMs`, is `started` (a new fencing number, the lease from the
   * store's now); a key held by a live lease is `running`; otherwise `done` with its outcome.
   */
  beginKeyed(key: string, leaseMs: number, retentionMs: number): Promise<KeyedStart>;
  /** Keeps `outcome` for the key, when `fence` still holds it; false (and nothing changes) otherwise. */
  finishKeyed(key: string, fence: number, outcome: ToolResult): Promise<boolean>;
  /**
   * Extends the lease of a key `fence` still holds (no outcome yet, no newer holder) to `leaseMs`
   * from the store's now: what keeps a call that runs longer than one lease its key. False (and
   * nothing changes) once another caller started the key under a newer fence, or it finished.
   */
  renewKeyed(key: string, fence: number, leaseMs: number): Promise<boolean>;
}

/**
 * A served call lost its idempotency key while it ran: no renewal of its lease got through for a
 * whole lease (its process paused or its store was unreachable that long), and a repeat of the key
 * may have started the call again. The call's `ctx.signal` aborts with this error (its caller is
 * told it was cancelled); nothing it returns is kept for the key: repeats get the newer holder's outcome.
 */
export class KeyLostError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_KEY_LOST';
  constructor(readonly tool: string) {
    super(`the idempotency key of this call of ${tool} lapsed while it ran and may have been taken by a repeat: its outcome is not kept`);
  }
}

/** How long a served call's outcome answers a repeated key by default: a day, as Stripe keeps its keys. */
export const DEFAULT_KEY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * How long a served call holds its key without a renewal before a repeat may run it again (its
 * process died): ten minutes. A running call renews it every third of it, however long it runs.
 */
export const DEFAULT_KEY_LEASE_MS = 10 * 60 * 1000;
/** The longest incoming key taken: a client's key past it is refused, as a header too long would be. */
export const MAX_INCOMING_KEY_LENGTH = 255;

/** Refuses a key lease that is not a positive number of milliseconds, where a door is made. */
export function checkKeyLease(what: string, leaseMs: number | undefined): void {
  if (leaseMs === undefined) return;
  if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs <= 0)
    throw new InvalidArgumentError(`${what} must be a positive number of milliseconds, got ${String(leaseMs)}`);
}

/** Refuses a key retention that is not a non-negative number of milliseconds, where a door is made. */
export function checkRetention(what: string, retentionMs: number | undefined): void {
  if (retentionMs === undefined) return;
  if (typeof retentionMs !== 'number' || !Number.isFinite(retentionMs) || retentionMs < 0)
    throw new InvalidArgumentError(`${what} must be a non-negative number of milliseconds, got ${String(retentionMs)}`);
}

/** The options of {@link executeOnce}: the incoming key and how long it holds. */
export interface KeyedExecution {
  /** The key the caller sent; `undefined` runs the call as it is. */
  key: string | undefined;
  /** Whose key it is: a key is never shared between principals. */
  principal: Principal | undefined;
  retentionMs?: number;
  /** The key's lease, renewed every third of it while the call runs. Default {@link DEFAULT_KEY_LEASE_MS}. */
  leaseMs?: number;
}

/**
 * The slot of an incoming key: a digest of the door, the principal, the tool and the key, so one
 * principal never reads another's outcome and a key reused for another tool is another call. It
 * is also the `ctx.idempotencyKey` the served tool runs with, stable across repeats, so the
 * systems it calls deduplicate in turn.
 */
export function keyedSlot(door: string, principal: Principal | undefined, tool: string, key: string): string {
  return `tnx_${createHash('sha256')
    .update(JSON.stringify([door, principal?.id ?? null, tool, key]))
    .digest('base64url')}`;
}

/**
 * Runs a served call once per incoming idempotency key (an MCP `_meta` key, an A2A message's
 * metadata): the first call with a key runs through `coordinator.execute` and its outcome is
 * kept; a repeat with the same key from the same principal within the retention gets that
 * outcome and runs nothing; a repeat while the first still runs is told to try again. A store
 * that is not a {@link KeyedCallStore}, or a call without a key, runs as it is.
 *
 * The key's lease is renewed every third of it (on the coordinator's clock) for as long as the
 * call runs, so a call longer than one lease keeps its key; only a holder that stopped renewing
 * (its process died, or paused or lost its store for a whole lease) can be taken over. Such a
 * holder's call is aborted ({@link KeyLostError} on `ctx.signal`; its caller is told it was
 * cancelled) and its outcome is never kept: the key's fence refuses it, the newer holder's stands.
 */
export async function executeOnce(
  coordinator: {
    store: SuspensionStore;
    /** Where the lease's renewals are timed from (the coordinator's `clock`); default the system clock. */
    clock?: Clock;
    execute(name: string, args: unknown, ctx?: ToolContext, options?: ExecuteOptions): Promise<ToolResult>;
  },
  door: string,
  name: string,
  args: unknown,
  ctx: ToolContext,
  options: ExecuteOptions & KeyedExecution,
): Promise<ToolResult> {
  const { key, principal, retentionMs = DEFAULT_KEY_RETENTION_MS, leaseMs = DEFAULT_KEY_LEASE_MS, ...execute } = options;
  const store = keyedStoreOf(coordinator.store);
  const run = (withKey: ToolContext) => coordinator.execute(name, args, withKey, { ...execute, ...(principal ? { principal } : {}) });
  if (key === undefined || store === undefined) return run(ctx);
  if (key === '' || key.length > MAX_INCOMING_KEY_LENGTH)
    return failure(`the idempotency key must be 1 to ${MAX_INCOMING_KEY_LENGTH} characters: ${name} did not run`);
  const slot = keyedSlot(door, principal, name, key);
  const start = await store.beginKeyed(slot, leaseMs, retentionMs);
  if (start.state === 'done') return start.outcome;
  if (start.state === 'running')
    return failure(`a call of ${name} with this idempotency key is still running: try again later for its outcome`);
  const { fence } = start;
  const held = new HeldLease(
    () => store.renewKeyed(slot, fence, leaseMs),
    () => new KeyLostError(name),
    leaseMs,
    ctx.signal,
    coordinator.clock ?? systemClock,
  );
  let outcome: ToolResult;
  try {
    outcome = await run(withLatch({ ...ctx, idempotencyKey: slot }, held.cancellation));
  } catch (error) {
    held.stop();
    // The tool may have run (a store failed after it): repeats are told so rather than run it again.
    if (!held.lost) await store.finishKeyed(slot, fence, failure(`${name} failed: ${messageOf(error)}`)).catch(() => false);
    throw error;
  }
  held.stop();
  // A holder that lost its key keeps nothing (its fence would be refused anyway): the newer holder's outcome stands.
  if (!held.lost) await store.finishKeyed(slot, fence, storable(outcome));
  return outcome;
}

/** `store` as a {@link KeyedCallStore} when it is one (every built-in store), else `undefined`. */
export function keyedStoreOf(store: SuspensionStore): (SuspensionStore & KeyedCallStore) | undefined {
  const keyed = store as SuspensionStore & Partial<KeyedCallStore>;
  return typeof keyed.beginKeyed === 'function' && typeof keyed.finishKeyed === 'function' && typeof keyed.renewKeyed === 'function'
    ? (keyed as SuspensionStore & KeyedCallStore)
    : undefined;
}
