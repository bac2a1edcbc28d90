/**
 * Retention: what a store may delete, by age, so tables stay the size of the work in flight
 * (docs/deploying.md, "Retention"). Each cut-off is its own: the audit trail lives in the
 * settled suspensions, so `settledBefore` is as old as the trail must be kept, while finished
 * runs and idle sessions may go much sooner.
 */
export interface PruneOptions {
  /**
   * Deletes suspensions settled (resolved, declined, expired, cancelled) before this instant:
   * their audit trail goes with them. A settled link whose next request still waits is kept.
   */
  settledBefore?: Date;
  /**
   * Deletes run checkpoints of finished runs (neither running nor halted) last written before
   * this instant, and the stream logs (docs/chat.md, "Reconnecting") no response writes any
   * more, last written before it.
   */
  finishedBefore?: Date;
  /** Deletes sessions with no active run, last saved before this instant. */
  idleBefore?: Date;
  /**
   * Rows per batch (1 to 10 000; default 1 000). Each batch is one short statement that
   * locks only its own rows, so answers, runs and chats go on while a prune works through
   * millions of rows.
   */
  batchSize?: number;
  /** Stops after this many batches (default: until nothing older is left). */
  maxBatches?: number;
  /**
   * Given each batch's rows (as the store keeps them) before they are deleted, to copy them
   * elsewhere; when it throws, the prune stops and that batch is not deleted.
   */
  archive?: (batch: PrunedBatch) => void | Promise<void>;
  /** Stops the prune between batches. */
  signal?: AbortSignal;
}

/** One batch of rows about to be deleted, for {@link PruneOptions.archive}. */
export interface PrunedBatch {
  table: 'suspensions' | 'runs' | 'sessions' | 'streams';
  /** The rows, each column by its name, JSON columns parsed. */
  rows: Array<Record<string, unknown>>;
}

/** What a prune deleted. */
export interface PruneReport {
  suspensions: number;
  runs: number;
  sessions: number;
  /** Stream logs (each with its parts). */
  streams: number;
  /** Statements run that deleted something. */
  batches: number;
}

/** A store that can delete old rows in batches: the three built-in stores. */
export interface PrunableStore {
  prune(options: PruneOptions): Promise<PruneReport>;
}
