/** A stream log's row as the SQL stores keep it (docs/chat.md, "Reconnecting"). Drivers may hand integers back as strings. */
export interface StreamLogRow {
  run_id: string;
  session_id: string;
  next: number | string;
  open: number | boolean;
}
