/** A stream log's row as the SQL stores keep it (docs/chat.md, "Reconnecting"). Drivers may hand integers back as strings. */
export interface StreamLogRow {
  run_id: string;
  session_id: string;
  next: number | string;
  open: number | boolean;
}

/**
 * The parts read from cursor `from`, up to the first gap: a part is only ever given at its own
 * cursor, so a follower never takes a later part for an earlier one.
 */
export function contiguous(rows: ReadonlyArray<{ seq: number | string; part: string }>, from: number): string[] {
  const parts: string[] = [];
  for (const row of rows) {
    if (Number(row.seq) !== from + parts.length) break;
    parts.push(row.part);
  }
  return parts;
}
