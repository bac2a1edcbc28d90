import type { SqliteConnection } from './driver';

/** What a `SqliteStore` hands each part of it kept in a file of its own. */
export interface SqliteHost {
  /** The store's open file. */
  db: SqliteConnection;
  /** Runs one statement, translating a driver error into the store's own. */
  run: <T>(work: () => T, what: string) => T;
  /** The store's check that it is still open, made before anything else. */
  assertOpen: () => void;
}

/**
 * A part of a `SqliteStore` kept in a file of its own (its sessions, A2A tasks, MCP tasks,
 * deliveries): the store's file, statement runner and open check, which every method calls
 * first. A part on the hot path prepares its statements as fields, once, when the store opens (a
 * field's initialiser runs after this constructor); the deliveries prepare theirs as they run.
 */
export abstract class SqlitePart {
  protected readonly db: SqliteConnection;
  protected readonly run: SqliteHost['run'];
  protected readonly assertOpen: () => void;

  constructor(host: SqliteHost) {
    this.db = host.db;
    this.run = host.run;
    this.assertOpen = host.assertOpen;
  }
}
