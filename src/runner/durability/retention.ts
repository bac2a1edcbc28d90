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
   * this instant, and with the same cut-off what served and delivered work leaves behind: the
   * stream logs (docs/chat.md, "Reconnecting") no response writes any more, last written before
   * it; served calls' idempotency keys (keyed calls) whose outcome was kept before it, never
   * one still held; A2A task records whose run ended before it (or was never kept) and whose
   * push outbox is empty; channel deliveries done (the card shows a settled call) and last
   * saved before it. Keep it older than the longest `idempotencyRetentionMs` of your doors: a
   * repeated key whose outcome was pruned runs again.
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
  table: 'suspensions' | 'runs' | 'sessions' | 'streams' | 'keyedCalls' | 'a2aTasks' | 'deliveries';
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
  /** Served calls' idempotency keys, with their kept outcomes. */
  keyedCalls: number;
  /** A2A task records (owner, push configs, empty outbox). */
  a2aTasks: number;
  /** Channel deliveries (cards) of settled calls. */
  deliveries: number;
  /** Statements run that deleted something. */
  batches: number;
}

/** A store that can delete old rows in batches: the three built-in stores. */
export interface PrunableStore {
  prune(options: PruneOptions): Promise<PruneReport>;
}
