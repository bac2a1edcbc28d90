import {
  checkAppend,
  checkOpen,
  checkRead,
  packParts,
  partsFrom,
  type StreamLogStore,
  type StreamPartsRow,
  type StreamSlice,
} from '../../sessions/stream-log';
import type { StreamLogRow } from '../streams';
import { NOW_TEXT } from './clock';
import { immediate, type SqliteConnection, type SqliteStatement } from './driver';

/**
 * Schema step 4 of the SQLite store, stream logs' block (docs/chat.md, "Reconnecting"): a
 * row per run's log (its session, the next cursor, whether a response still writes it) and
 * a row per write, keyed by run and the cursor of its first part, its parts packed
 * (`packParts`). A rowid table, not `WITHOUT ROWID`: a row of a few kB keeps most of itself in its
 * table page, where an index page keeps about 1 kB and spills the rest to overflow pages (half
 * the insert's time, measured; docs/performance.md). A prune walks the closed logs by their last write.
 */
export const STREAMS_SQLITE_DDL = `
    CREATE TABLE stream_logs (
      run_id     TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      next       INTEGER NOT NULL,
      open       INTEGER NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX stream_logs_closed ON stream_logs (updated_at) WHERE open = 0;
    CREATE TABLE stream_parts (
      run_id TEXT NOT NULL,
      seq    INTEGER NOT NULL,
      parts  TEXT NOT NULL,
      PRIMARY KEY (run_id, seq)
    );
`;

/** The stream logs of a `SqliteStore`, in the same file. */
export class SqliteStreamLog implements StreamLogStore {
  private readonly open: SqliteStatement;
  private readonly insertPart: SqliteStatement;
  private readonly update: SqliteStatement;
  private readonly readLog: SqliteStatement;
  private readonly readParts: SqliteStatement;

  constructor(
    private readonly db: SqliteConnection,
    /** Runs one statement, translating a driver error into the store's own. */
    private readonly run: <T>(work: () => T, what: string) => T,
    /** The store's check that it is still open, made before anything else. */
    private readonly assertOpen: () => void,
  ) {
    this.open = db.prepare(`
      INSERT INTO stream_logs (run_id, session_id, next, open, updated_at) VALUES (@run_id, @session_id, 0, 1, ${NOW_TEXT})
      ON CONFLICT (run_id) DO UPDATE SET open = 1, updated_at = ${NOW_TEXT}
      RETURNING next`);
    this.insertPart = db.prepare('INSERT INTO stream_parts (run_id, seq, parts) VALUES (@run_id, @seq, @parts) ON CONFLICT DO NOTHING');
    this.update = db.prepare(`
      UPDATE stream_logs SET next = MAX(next, @next), open = @open, updated_at = ${NOW_TEXT} WHERE run_id = @run_id`);
    this.readLog = db.prepare('SELECT run_id, session_id, next, open FROM stream_logs WHERE run_id = ?');
    // From the row that holds `from` (the last one starting at or before it) on.
    this.readParts = db.prepare(`
      SELECT seq, parts FROM stream_parts
      WHERE run_id = @run_id AND seq >= COALESCE((SELECT MAX(seq) FROM stream_parts WHERE run_id = @run_id AND seq <= @from), 0)
      ORDER BY seq LIMIT @limit`);
  }

  async openStream(runId: string, sessionId: string): Promise<number> {
    this.assertOpen();
    checkOpen(runId, sessionId);
    const row = this.run(
      () => this.open.get({ run_id: runId, session_id: sessionId }) as { next: number },
      `open the stream log of ${runId}`,
    );
    return Number(row.next);
  }

  async appendStream(runId: string, at: number, parts: readonly string[], next: number, end: boolean): Promise<void> {
    this.assertOpen();
    checkAppend(runId, at, parts, next);
    // One transaction: a reader that sees the log closed sees every part of it.
    this.run(
      () =>
        immediate(this.db, () => {
          if (parts.length > 0) this.insertPart.run({ run_id: runId, seq: at, parts: packParts(parts) });
          this.update.run({ run_id: runId, next, open: end ? 0 : 1 });
        }),
      `append to the stream log of ${runId}`,
    );
  }

  async readStream(runId: string, from: number, limit: number): Promise<StreamSlice | undefined> {
    this.assertOpen();
    checkRead(runId, from, limit);
    // The log first, then its parts: a log read closed has all its parts in.
    const log = this.run(() => this.readLog.get(runId) as StreamLogRow | undefined, `read the stream log of ${runId}`);
    if (!log) return undefined;
    const rows = this.run(() => this.readParts.all({ run_id: runId, from, limit }) as StreamPartsRow[], `read the stream log of ${runId}`);
    return { sessionId: log.session_id, parts: partsFrom(rows, from, limit), next: Number(log.next), open: Number(log.open) === 1 };
  }
}
