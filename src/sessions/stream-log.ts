import { InvalidArgumentError } from '../errors';
import { hasMethods } from './checks';
import { checkSessionId } from './validate';

/**
 * What {@link StreamLogStore.readStream} returns: up to `limit` parts from the cursor asked,
 * with the log's state as it was before they were read (so a log read `open: false` has all
 * its parts in already).
 */
export interface StreamSlice {
  /** The session the run belongs to: a reconnect is served only to that session's principal. */
  sessionId: string;
  /** The parts, each the JSON text of one UI message stream part, as the live stream wrote it. */
  parts: string[];
  /**
   * The cursor after the last part written so far. Past the log's cap it keeps counting
   * while no more parts are kept: a cursor below `next` with no part there is a log that
   * was full.
   */
  next: number;
  /** A response is still writing this run's log (a segment was opened and not yet closed). */
  open: boolean;
}

/**
 * A run's **stream log** (docs/chat.md, "Reconnecting"): the UI message stream parts every
 * chat response of the run wrote, in order, each at its **cursor** (0, 1, 2...), so a page
 * that lost its connection reattaches from any process on the same store. Kept beside the
 * sessions by the three stores; pruned with the run's retention (`finishedBefore`), once
 * no response writes it.
 */
export interface StreamLogStore {
  /**
   * Opens a segment (one response's parts) of `runId`'s log, creating the log for
   * `sessionId` when there is none: returns the cursor the segment's first part will have.
   */
  openStream(runId: string, sessionId: string): Promise<number>;
  /**
   * Keeps `parts` at cursors `at`, `at + 1`...; the log's `next` becomes `next` (at least
   * `at + parts.length`; more when parts past the cap were left out); `end` closes the segment.
   * Parts are appended where the kept ones end: a batch at a cursor already kept (a retried
   * write) is not kept again.
   */
  appendStream(runId: string, at: number, parts: readonly string[], next: number, end: boolean): Promise<void>;
  /** Up to `limit` parts from cursor `from`, or `undefined` when the run has no log. */
  readStream(runId: string, from: number, limit: number): Promise<StreamSlice | undefined>;
}

const STREAM_LOG_METHODS: ReadonlyArray<keyof StreamLogStore> = ['openStream', 'appendStream', 'readStream'];

/** True when `value` keeps stream logs (the three built-in stores do). */
export function isStreamLogStore(value: unknown): value is StreamLogStore {
  return hasMethods<StreamLogStore>(value, STREAM_LOG_METHODS);
}

/** Run ids: as session ids, printable and bounded (they name rows). */
export function checkRunId(runId: unknown, operation: string): asserts runId is string {
  if (typeof runId !== 'string' || !/^[\x21-\x7e]{1,200}$/.test(runId))
    throw new InvalidArgumentError(`${operation}: a run id is 1 to 200 printable ASCII characters without spaces`);
}

function checkCursor(value: unknown, name: string, operation: string): asserts value is number {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new InvalidArgumentError(`${operation}: ${name} must be a whole number from 0, got ${String(value)}`);
}

/** Checks the arguments of {@link StreamLogStore.openStream}, as every store does before anything. */
export function checkOpen(runId: unknown, sessionId: unknown): void {
  checkRunId(runId, 'openStream');
  checkSessionId(sessionId, 'openStream');
}

/** Checks the arguments of {@link StreamLogStore.appendStream}. */
export function checkAppend(runId: unknown, at: unknown, parts: unknown, next: unknown): void {
  checkRunId(runId, 'appendStream');
  checkCursor(at, 'at', 'appendStream');
  checkCursor(next, 'next', 'appendStream');
  if (!Array.isArray(parts) || parts.some((part) => typeof part !== 'string' || part === '' || part.includes('\n')))
    throw new InvalidArgumentError('appendStream: parts must be an array of JSON texts, each on one line');
  // A stored line that starts with `+` continues the last whole part (see `packParts`), so a part written so would read back changed.
  if (parts.some((part: string) => part.startsWith('+')))
    throw new InvalidArgumentError('appendStream: a part must not start with "+" (a part is JSON text, which never does)');
  if (next < at + parts.length) throw new InvalidArgumentError('appendStream: next is below the parts given');
}

/** Checks the arguments of {@link StreamLogStore.readStream}. */
export function checkRead(runId: unknown, from: unknown, limit: unknown): void {
  checkRunId(runId, 'readStream');
  checkCursor(from, 'from', 'readStream');
  if (!Number.isSafeInteger(limit) || (limit as number) < 1)
    throw new InvalidArgumentError('readStream: limit must be a positive whole number');
}

/**
 * A row of a store's stream log parts (SQL: `stream_parts`): one write's parts, from cursor `seq`, so a run's
 * stream costs a row per write, not per part: its parts one a line (JSON text has no raw line
 * break), packed by {@link packParts}.
 */
export interface StreamPartsRow {
  seq: number | string;
  parts: string;
}

/** What starts a line that continues the row's last prefix: no JSON text starts with it. */
const MORE = '+';

/** Where the prefix a part given whole lends the parts after it ends: after its last `":` (a member's name), or 0 for none. */
function prefixEnd(part: string): number {
  const at = part.lastIndexOf('":');
  return at > 0 ? at + 2 : 0;
}

/** The prefix a part given whole lends the parts after it ({@link prefixEnd}), or none. */
function prefixOf(part: string): string {
  return part.slice(0, prefixEnd(part));
}

/**
 * One write's parts as the SQL stores keep them, one a line: a part whose prefix ({@link prefixOf})
 * is the one the last part given whole lends, as `+` and the rest of it; any other part whole,
 * lending its own prefix to the parts after it. A stream's parts are mostly text deltas alike up
 * to their words (`{"type":"text-delta","id":"…","delta":` then the words), so a row is a
 * fraction of the parts' bytes, and the write a reconnecting page depends on costs SQLite a page
 * or two instead of a run of overflow pages (docs/performance.md, "The stream log"). A part is
 * packed only when its prefix is the lent one, not merely when it starts with it: after a part
 * as short as `{"type":"start-step"}` (prefix `{"type":`) every part would start so, and the
 * deltas after it would keep their ids whole (a chat's 413 parts made a 37 kB row so, against
 * 6 kB now). The prefix ends on ASCII, so no character is split. {@link partsFrom} gives each part
 * back as written.
 */
export function packParts(parts: readonly string[]): string {
  const lines = new Array<string>(parts.length);
  let prefix = '';
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index] as string;
    const cut = prefixEnd(part);
    // A slice compared, not `startsWith`: several times faster on V8 here (the prefix is itself a slice).
    if (cut !== 0 && cut === prefix.length && part.slice(0, cut) === prefix) lines[index] = MORE + part.slice(cut);
    else {
      lines[index] = part;
      prefix = part.slice(0, cut);
    }
  }
  return lines.join('\n');
}

/** The parts of a row, as they were written (a row of whole parts, one a line, reads the same). */
function unpack(row: string): string[] {
  const lines = row.split('\n');
  let prefix = '';
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.startsWith(MORE)) lines[index] = prefix + line.slice(MORE.length);
    else prefix = prefixOf(line);
  }
  return lines;
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
    const lines = unpack(row.parts);
    for (let i = cursor - seq; i < lines.length && parts.length < limit; i++) {
      parts.push(lines[i] as string);
      cursor++;
    }
  }
  return parts;
}

interface MemoryLog {
  sessionId: string;
  /** One row per write, as the SQL stores keep them: a few strings per run, not one per part. */
  rows: StreamPartsRow[];
  /** How many parts the rows hold. */
  kept: number;
  next: number;
  open: boolean;
  updatedAt: string;
}

/** Stream logs in this process's memory: the `MemoryStore`'s and a `MemorySessionStore`'s. */
export class MemoryStreamLog implements StreamLogStore {
  private readonly logs = new Map<string, MemoryLog>();

  /** `now`: the store's clock, as RFC 3339 (what a prune's cut-off is compared with). */
  constructor(private readonly now: () => string = () => new Date().toISOString()) {}

  async openStream(runId: string, sessionId: string): Promise<number> {
    checkOpen(runId, sessionId);
    const log = this.logs.get(runId) ?? { sessionId, rows: [], kept: 0, next: 0, open: true, updatedAt: this.now() };
    log.open = true;
    log.updatedAt = this.now();
    this.logs.set(runId, log);
    return log.next;
  }

  async appendStream(runId: string, at: number, parts: readonly string[], next: number, end: boolean): Promise<void> {
    checkAppend(runId, at, parts, next);
    const log = this.logs.get(runId);
    if (!log) return;
    // Kept where the kept ones end: a retried batch is not kept twice, and a gap (parts left out past the cap) is never filled.
    if (at === log.kept && parts.length > 0) {
      log.rows.push({ seq: at, parts: parts.join('\n') });
      log.kept += parts.length;
    }
    log.next = Math.max(log.next, next);
    log.open = !end;
    log.updatedAt = this.now();
  }

  async readStream(runId: string, from: number, limit: number): Promise<StreamSlice | undefined> {
    checkRead(runId, from, limit);
    const log = this.logs.get(runId);
    if (!log) return undefined;
    let first = log.rows.length - 1;
    while (first > 0 && Number(log.rows[first]?.seq) > from) first--;
    return { sessionId: log.sessionId, parts: partsFrom(log.rows.slice(Math.max(0, first)), from, limit), next: log.next, open: log.open };
  }

  /** Closed logs last written before `cutoff`, oldest first, and the deletion of one: what a prune works through. */
  prunableStreams(cutoff: string): Array<{ runId: string; sessionId: string; next: number; updatedAt: string }> {
    return [...this.logs.entries()]
      .filter(([, log]) => !log.open && log.updatedAt < cutoff)
      .sort(([, a], [, b]) => (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0))
      .map(([runId, log]) => ({ runId, sessionId: log.sessionId, next: log.next, updatedAt: log.updatedAt }));
  }

  deletePrunableStream(runId: string, cutoff: string): boolean {
    const log = this.logs.get(runId);
    return log !== undefined && !log.open && log.updatedAt < cutoff && this.logs.delete(runId);
  }
}
