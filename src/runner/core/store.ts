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
 * Where an agent runner keeps versioned checkpoints of its runs: the runner's side of the
 * stores, apart from `SuspensionStore` so a store may keep one job without the other.
 * The three built-in stores implement both. The runner checks nothing it gives one: a
 * checkpoint is built by the runner itself (docs/design.md, "Stores").
 *
 * Each checkpoint a store is handed is its own copy, taken when `saveRun` is called: a store
 * may read it after an `await` and still saves the run as it stood at the call.
 *
 * Rules every run store follows: checkpoints round-trip as JSON (copies in, copies out), a
 * save is a compare-and-set on `version` that exactly one of concurrent savers wins, and
 * after `close` (when it has one) every method rejects with `StoreError`.
 */
export interface RunStore {
  /**
   * Saves a run checkpoint with optimistic concurrency: `checkpoint.version` must be one
   * more than the stored version (1 for a new run). Returns false on a version conflict.
   */
  saveRun(checkpoint: RunCheckpoint): Promise<boolean>;
  loadRun(runId: string): Promise<RunCheckpoint | undefined>;
  /**
   * Runs a driver claims to be continuing (checkpoint state `phase: "running"`) whose
   * checkpoint was last written before `updatedBefore` (RFC 3339): with durable steps every
   * step and every lease renewal writes it, so these are the runs whose driver stopped
   * renewing its lease, oldest first, at most `limit` (default 100). Optional: a store
   * without it cannot list orphans (`AgentRunner.recoverOrphans`), only recover a named run.
   */
  listStaleRuns?(filter: StaleRunFilter): Promise<RunListing[]>;
  /**
   * Queues a message steered into a run another process drives (docs/agents.md, "Steering"),
   * apart from its checkpoint: the driver's version is not touched. `queued`; `held` when the
   * run holds a queued message with this id already (nothing changes); `full` when it holds
   * `max` queued messages (nothing is queued); `no-run` when it keeps no checkpoint of the run. Optional, with {@link queuedSteers} and
   * {@link dropSteers}: without them a run driven elsewhere is steered when it halts.
   */
  queueSteer?(runId: string, steer: StoredSteer, max: number): Promise<SteerQueued>;
  /** The messages queued for `runId`, in the order they were queued, at most `limit`. */
  queuedSteers?(runId: string, limit: number): Promise<StoredSteer[]>;
  /** Deletes the queued messages of `runId` with these ids (the driver took them); how many went. */
  dropSteers?(runId: string, ids: readonly string[]): Promise<number>;
}

/** The run store's steering queue (docs/agents.md, "Steering"): its three optional methods. */
export type SteeringQueue = Required<Pick<RunStore, 'queueSteer' | 'queuedSteers' | 'dropSteers'>>;

/** What {@link RunStore.queueSteer} did. */
export type SteerQueued = 'queued' | 'held' | 'full' | 'no-run';

/** A message steered into a run, as a run store queues it (its id is unique per run). */
export interface StoredSteer {
  id: string;
  content: string;
}

/** Which stale runs {@link RunStore.listStaleRuns} lists. */
export interface StaleRunFilter {
  /** RFC 3339: only checkpoints last written before this instant. */
  updatedBefore: string;
  /** At most this many (1 to 1000; default 100). */
  limit?: number;
}

/** A run checkpoint as a listing shows it (without its state). */
export interface RunListing {
  runId: string;
  version: number;
  /** RFC 3339: when the checkpoint was last written. */
  updatedAt: string;
}
