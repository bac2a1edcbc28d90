/** A stream log's row as the SQL stores keep it (docs/chat.md, "Reconnecting"). Drivers may hand integers back as strings. */
export interface StreamLogRow {
  run_id: string;
  session_id: string;
  next: number | string;
  open: number | boolean;
}

/**
 * A row of a SQL store's `stream_parts`: one write's parts, from cursor `seq`, one JSON text
 * a line (JSON text has no raw line break), so a run's stream costs a row per write, not per part.
 */
export interface StreamPartsRow {
  seq: number | string;
  parts: string;
}

/**
 * Up to `limit` parts from cursor `from`, out of the rows read from the one holding `from` on,
 * up to the first gap: a part is only ever given at its own cursor, so a follower never takes
 * a later part for an earlier one.
 */
export function partsFrom(rows: readonly StreamPartsRow[], from: number, limit: number): string[] {
  const parts: string[] = [];
  let cursor = from;
  for (const row of rows) {
    const seq = Number(row.seq);
    if (seq > cursor || parts.length >= limit) break;
    const lines = row.parts.split('\n');
    for (let i = cursor - seq; i < lines.length && parts.length < limit; i++) {
      parts.push(lines[i] as string);
      cursor++;
    }
  }
  return parts;
}
