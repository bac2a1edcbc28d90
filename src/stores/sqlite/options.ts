import type { SqliteDriver } from './driver';

/** Options of a `SqliteStore`. */
export interface SqliteStoreOptions {
  /** The database file; created with its schema on first open. `:memory:` works for one process. */
  filename: string;
  /** How long a write waits for another process's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * `full` (default) syncs every commit to disk, so a suspension survives power loss;
   * `normal` survives any process crash but may lose the last commits on power loss, and is faster.
   */
  synchronous?: 'full' | 'normal';
  /**
   * The driver that opens the file. Default: `'node:sqlite'` where the runtime has it (Node.js
   * 22.13 and later, nothing to install), else `'better-sqlite3'` (the optional peer), else the
   * store throws a `StoreError` naming both ways out. Either driver opens a file the other wrote.
   */
  driver?: SqliteDriver;
}
