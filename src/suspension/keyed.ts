import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors';
import { messageOf } from '../errors/message';
import { failure } from '../results/helpers';
import type { ToolResult } from '../results/wire';
import type { ToolContext } from '../toolkit/context';
import type { Principal } from './audit';
import type { ExecuteOptions } from './coordinator-options';
import { storable } from './json';
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
}

/** How long a served call's outcome answers a repeated key by default: a day, as Stripe keeps its keys. */
export const DEFAULT_KEY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How long a served call holds its key before a repeat may run it again (its process died): ten minutes. */
export const DEFAULT_KEY_LEASE_MS = 10 * 60 * 1000;
/** The longest incoming key taken: a client's key past it is refused, as a header too long would be. */
export const MAX_INCOMING_KEY_LENGTH = 255;

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
 */
export async function executeOnce(
  coordinator: {
    store: SuspensionStore;
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
  let outcome: ToolResult;
  try {
    outcome = await run({ ...ctx, idempotencyKey: slot });
  } catch (error) {
    // The tool may have run (a store failed after it): repeats are told so rather than run it again.
    await store.finishKeyed(slot, start.fence, failure(`${name} failed: ${messageOf(error)}`)).catch(() => false);
    throw error;
  }
  await store.finishKeyed(slot, start.fence, storable(outcome));
  return outcome;
}

/** `store` as a {@link KeyedCallStore} when it is one (every built-in store), else `undefined`. */
export function keyedStoreOf(store: SuspensionStore): (SuspensionStore & KeyedCallStore) | undefined {
  const keyed = store as SuspensionStore & Partial<KeyedCallStore>;
  return typeof keyed.beginKeyed === 'function' && typeof keyed.finishKeyed === 'function'
    ? (keyed as SuspensionStore & KeyedCallStore)
    : undefined;
}
