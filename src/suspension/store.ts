import type { Answer, PendingRequest, ToolResult } from '../results/wire';

/**
 * Where a suspended call is in its life:
 * `pending` → (`resolving` while a process holds the claim) → `resolved` | `declined` | `expired` | `cancelled`.
 */
export type SuspensionStatus = 'pending' | 'resolving' | 'resolved' | 'declined' | 'expired' | 'cancelled';

/** The settled statuses: a call in one of them never runs again. */
export type SettledStatus = Exclude<SuspensionStatus, 'pending' | 'resolving'>;

/** One suspended tool call as a store keeps it. Everything round-trips as JSON. */
export interface SuspendedCall {
  request: PendingRequest;
  tool: string;
  args: unknown;
  callId?: string;
  runId?: string;
  status: SuspensionStatus;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339; the last status change. */
  updatedAt?: string;
  /** The answer that claimed or settled the call. */
  answer?: Answer;
  /** The stored outcome: what every later `resolve` of this id returns. */
  outcome?: ToolResult;
  /** RFC 3339; while `resolving`, the claim is held until this instant. */
  leaseUntil?: string;
}

/** Filter of {@link PendingStore.list}; all fields optional and combined with AND. */
export interface SuspensionFilter {
  status?: SuspensionStatus;
  runId?: string;
  kind?: string;
}

/** Proof that this process holds a call's claim; needed to settle it. */
export interface Claim {
  id: string;
  token: string;
  call: SuspendedCall;
}

/** A versioned snapshot of a halted agent run (the runner owns the `state` shape). */
export interface RunCheckpoint {
  runId: string;
  /** Starts at 1 and grows by one with every save. */
  version: number;
  state: Record<string, unknown>;
  /** RFC 3339. */
  updatedAt: string;
}

/**
 * The durable side of suspend/resume. Implement it to keep suspended calls anywhere;
 * every implementation must pass the shared conformance suite
 * (`runStoreConformance` in `test/stores/conformance.ts`).
 *
 * Rules every store follows:
 * - What it is given round-trips as JSON: `get` returns copies, never the objects passed in,
 *   and mutating a returned value changes nothing stored.
 * - Atomicity is the store's job: `claim` must let exactly one caller win for an id, even
 *   across processes, and `complete` must only succeed for the holder of the claim.
 * - Time comes from the caller (`now`), so every process judges leases by the same rule.
 * - After `close`, every method rejects with `PendingStoreError`.
 */
export interface PendingStore {
  /**
   * Durably records a new call (normally with status `pending`). Resolves only once it is
   * stored. Rejects with `DuplicateSuspensionError` when the id is already recorded, with
   * `InvalidArgumentError` for a malformed call, and with `PendingStoreError` for a value JSON
   * cannot carry; a refused insert stores nothing.
   */
  insert(call: SuspendedCall): Promise<void>;
  get(id: string): Promise<SuspendedCall | undefined>;
  /** Oldest first (by `createdAt`, then insertion order). */
  list(filter?: SuspensionFilter): Promise<SuspendedCall[]>;
  /**
   * Atomically moves a call from `pending` (or from `resolving` whose lease ran out before
   * `now`) to `resolving`, recording `answer` and a lease until `now + leaseMs`.
   * Returns the claim, or `undefined` when the call is unknown, settled, or held by a live lease.
   */
  claim(id: string, answer: Answer, leaseMs: number, now: Date): Promise<Claim | undefined>;
  /**
   * Settles a claimed call with its outcome. Returns false (and changes nothing) when the
   * claim is no longer held by `token` (its lease ran out and another process took it).
   * A holder whose lease ran out but whom nobody displaced still completes.
   */
  complete(claim: Claim, status: SettledStatus, outcome: ToolResult, now: Date): Promise<boolean>;
  /**
   * Saves a run checkpoint with optimistic concurrency: `checkpoint.version` must be one
   * more than the stored version (1 for a new run). Returns false on a version conflict.
   */
  saveRun(checkpoint: RunCheckpoint): Promise<boolean>;
  loadRun(runId: string): Promise<RunCheckpoint | undefined>;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}
