import { quoteIdentifier } from './resolve';
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
import { NOW_TEXT } from './columns';
import type { PostgresQuery } from './sessions';

/** The qualified, quoted names of a store's stream log tables. */
export interface StreamTables {
  logs: string;
  parts: string;
}

export function streamTables(schema: string, prefix: string): StreamTables {
  const table = (suffix: string) => `${quoteIdentifier(schema)}.${quoteIdentifier(prefix + suffix)}`;
  return { logs: table('stream_logs'), parts: table('stream_parts') };
}

/**
 * Layout step 4 of the PostgreSQL store, stream logs' block (docs/chat.md, "Reconnecting"):
 * as in SQLite, a row per run's log and a row per write, its parts one a line.
 */
export function streamsPostgresDdl(schema: string, prefix: string): string[] {
  const { logs, parts } = streamTables(schema, prefix);
  const index = (name: string): string => quoteIdentifier(`${prefix}${name}`);
  return [
    `CREATE TABLE ${logs} (
       run_id     text PRIMARY KEY,
       session_id text NOT NULL,
       next       bigint NOT NULL CHECK (next >= 0),
       open       boolean NOT NULL,
       updated_at text NOT NULL)`,
    `CREATE INDEX ${index('stream_logs_closed_idx')} ON ${logs} (updated_at COLLATE "C") WHERE NOT open`,
    `CREATE TABLE ${parts} (
       run_id text NOT NULL,
       seq    bigint NOT NULL,
       parts  text NOT NULL,
       PRIMARY KEY (run_id, seq))`,
  ];
}

/** The stream logs of a `PostgresStore`, in its schema. */
export class PostgresStreamLog implements StreamLogStore {
  constructor(
    private readonly tables: StreamTables,
    private readonly query: PostgresQuery,
  ) {}

  async openStream(runId: string, sessionId: string): Promise<number> {
    checkOpen(runId, sessionId);
    const result = await this.query<{ next: string }>(
      `open of the stream log of ${runId}`,
      `INSERT INTO ${this.tables.logs} (run_id, session_id, next, open, updated_at) VALUES ($1, $2, 0, true, ${NOW_TEXT})
       ON CONFLICT (run_id) DO UPDATE SET open = true, updated_at = ${NOW_TEXT} RETURNING next`,
      [runId, sessionId],
    );
    return Number(result.rows[0]?.next ?? 0);
  }

  async appendStream(runId: string, at: number, parts: readonly string[], next: number, end: boolean): Promise<void> {
    checkAppend(runId, at, parts, next);
    // One statement, so one transaction: a reader that sees the log closed sees every part of it.
    await this.query(
      `append to the stream log of ${runId}`,
      `WITH kept AS (
         INSERT INTO ${this.tables.parts} (run_id, seq, parts) SELECT $1, $2, $3 WHERE $3 <> '' ON CONFLICT DO NOTHING)
       UPDATE ${this.tables.logs} SET next = GREATEST(next, $4::bigint), open = $5, updated_at = ${NOW_TEXT} WHERE run_id = $1`,
      [runId, at, packParts(parts), next, !end],
    );
  }

  async readStream(runId: string, from: number, limit: number): Promise<StreamSlice | undefined> {
    checkRead(runId, from, limit);
    // The log first, then its parts: a log read closed has all its parts in.
    const log = await this.query<StreamLogRow>(
      `read of the stream log of ${runId}`,
      `SELECT run_id, session_id, next, open FROM ${this.tables.logs} WHERE run_id = $1`,
      [runId],
    );
    const row = log.rows[0];
    if (!row) return undefined;
    // From the row that holds `from` (the last one starting at or before it) on.
    const parts = await this.query<StreamPartsRow>(
      `read of the stream log of ${runId}`,
      `SELECT seq, parts FROM ${this.tables.parts}
        WHERE run_id = $1 AND seq >= COALESCE((SELECT max(seq) FROM ${this.tables.parts} WHERE run_id = $1 AND seq <= $2), 0)
        ORDER BY seq LIMIT $3`,
      [runId, from, limit],
    );
    return { sessionId: row.session_id, parts: partsFrom(parts.rows, from, limit), next: Number(row.next), open: row.open === true };
  }
}
