import { StoreError } from '../errors';
import type { Answer, PendingRequest, Signature, ToolResult } from '../results/wire';
import type { Principal } from '../suspension/audit';
import { isSuspensionStatus } from '../suspension/status';
import type { AnsweredRequest, SettledPage, SuspendedCall } from '../suspension/store';
import { cursorOf } from '../suspension/pages';
import type { Grant } from '../suspension/grants';
import type { AutomaticRecord } from '../suspension/automatic';
import { toJson } from '../suspension/json';
import type { Receipt } from '../toolkit/context';

/**
 * A suspended call as the SQL stores keep it: one column per field, JSON values as text,
 * the lease in epoch milliseconds. Drivers may hand integers back as strings (`pg` does for
 * bigint), hence `number | string`.
 */
export interface SuspensionRow {
  id: string;
  kind: string;
  tool: string;
  status: string;
  request: string;
  args: string | null;
  answer: string | null;
  outcome: string | null;
  call_id: string | null;
  run_id: string | null;
  created_at: string;
  updated_at: string | null;
  lease_until_ms: number | string | null;
  fence: number | string | null;
  chain: string | null;
  next_id: string | null;
  binding: string | null;
  answered_by: string | null;
  answered_at: string | null;
  comment: string | null;
  /** Absent from rows read by a store whose schema predates it. */
  traceparent?: string | null;
  /** Absent from rows read by a store whose schema predates it. */
  requested_by?: string | null;
  /** Absent from rows read by a store whose schema predates it. */
  signatures?: string | null;
  /** Absent from rows read by a store whose schema predates it. */
  automatic?: string | null;
  /** Absent from rows read by a store whose schema predates it. */
  session_id?: string | null;
  /** Absent from rows read by a store whose schema predates it. */
  receipts?: string | null;
}

/**
 * The row a SQL store writes for `call`. JSON is serialised here, before any statement
 * runs, so a value JSON cannot carry fails the operation with nothing written.
 */
export function rowOf(call: SuspendedCall): SuspensionRow {
  const id = call.request.id;
  return {
    id,
    kind: call.request.kind,
    tool: call.tool,
    status: call.status,
    request: toJson(call.request, `the request of ${id}`),
    args: call.args === undefined ? null : toJson(call.args, `the arguments of ${id}`),
    answer: call.answer === undefined ? null : toJson(call.answer, `the answer to ${id}`),
    outcome: call.outcome === undefined ? null : toJson(call.outcome, `the outcome of ${id}`),
    call_id: call.callId ?? null,
    run_id: call.runId ?? null,
    created_at: call.createdAt,
    updated_at: call.updatedAt ?? null,
    lease_until_ms: call.leaseUntil === undefined ? null : Date.parse(call.leaseUntil),
    fence: call.fence ?? null,
    chain: call.chain === undefined ? null : toJson(call.chain, `the chain of ${id}`),
    next_id: call.next ?? null,
    binding: call.binding ?? null,
    answered_by: call.answeredBy === undefined ? null : toJson(call.answeredBy, `the principal who answered ${id}`),
    answered_at: call.answeredAt ?? null,
    comment: call.comment ?? null,
    traceparent: call.traceparent ?? null,
    requested_by: call.requestedBy === undefined ? null : toJson(call.requestedBy, `the principal ${id} was requested for`),
    signatures: call.signatures === undefined ? null : toJson(call.signatures, `the signatures of ${id}`),
    automatic: call.automatic === undefined ? null : toJson(call.automatic, `the automatic decision on ${id}`),
    session_id: call.session ?? null,
    receipts: call.receipts === undefined ? null : toJson(call.receipts, `the receipts of ${id}`),
  };
}

/**
 * How a row's JSON columns are read: their text parsed ({@link parseStored}, the default), or,
 * from a statement that returned the whole row as one JSON object (`row_to_json`, ./postgres/early.ts),
 * the values that parse already made ({@link parsedColumn}).
 */
export type JsonColumn = <T>(value: string, what: string) => T;

/** The value a row-as-JSON parse already made of a JSON column: see {@link JsonColumn}. */
export const parsedColumn: JsonColumn = <T>(value: string): T => value as unknown as T;

/** The call a stored row holds; an absent (NULL) column stays an absent field. */
export function callOf(row: SuspensionRow): SuspendedCall {
  return callRead(row, parseStored);
}

/**
 * {@link callOf}, its JSON columns read by `json`. `args` is always text to parse: JSON `null`
 * arguments and a NULL column must stay apart, which a row-as-JSON cannot tell. No other column
 * can hold JSON `null`: the store writes NULL for what is absent (`rowOf`), and the types allow
 * no `null` there, so a refused claim's restore of this read puts back the row as it was.
 */
export function callRead(row: SuspensionRow, json: JsonColumn): SuspendedCall {
  const { id, status } = row;
  if (!isSuspensionStatus(status)) throw new StoreError(`stored suspension ${id} has unknown status ${JSON.stringify(status)}`);
  const call: SuspendedCall = {
    request: json<PendingRequest>(row.request, `the request of ${id}`),
    tool: row.tool,
    args: row.args === null ? undefined : parseStored<unknown>(row.args, `the arguments of ${id}`),
    status,
    createdAt: row.created_at,
  };
  if (row.call_id !== null) call.callId = row.call_id;
  if (row.run_id !== null) call.runId = row.run_id;
  if (row.updated_at !== null) call.updatedAt = row.updated_at;
  if (row.answer !== null) call.answer = json<Answer>(row.answer, `the answer to ${id}`);
  if (row.outcome !== null) call.outcome = json<ToolResult>(row.outcome, `the outcome of ${id}`);
  if (row.lease_until_ms !== null) call.leaseUntil = new Date(Number(row.lease_until_ms)).toISOString();
  if (row.fence !== null) call.fence = Number(row.fence);
  if (row.chain !== null) call.chain = json<AnsweredRequest[]>(row.chain, `the chain of ${id}`);
  if (row.next_id !== null) call.next = row.next_id;
  if (row.binding !== null) call.binding = row.binding;
  if (row.answered_by !== null) call.answeredBy = json<Principal>(row.answered_by, `the principal who answered ${id}`);
  if (row.answered_at !== null) call.answeredAt = row.answered_at;
  if (row.comment !== null) call.comment = row.comment;
  // The columns a store whose schema predates them lacks: absent (undefined) or NULL.
  if (typeof row.traceparent === 'string') call.traceparent = row.traceparent;
  if (typeof row.session_id === 'string') call.session = row.session_id;
  if (row.automatic != null) call.automatic = json<AutomaticRecord>(row.automatic, `the automatic decision on ${id}`);
  if (row.signatures != null) call.signatures = json<Signature[]>(row.signatures, `the signatures of ${id}`);
  if (row.receipts != null) call.receipts = json<Receipt[]>(row.receipts, `the receipts of ${id}`);
  if (row.requested_by != null) call.requestedBy = json<Principal>(row.requested_by, `the principal ${id} was requested for`);
  return call;
}

/**
 * Parses a stored JSON column; `what` names it in the error, so a corrupt row can be found and
 * repaired. The parser's own words stay out of the message (kept as its cause): they quote the
 * text around the fault, which may be a tool's `@Sensitive` argument.
 */
export function parseStored<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new StoreError(`the stored JSON of ${what} is corrupt`, { cause: error });
  }
}

/** A grant as a SQL store keeps it: its JSON, and the instant it was revoked (by the database's clock). */
export function grantOf(json: string, revokedAt: string | null): Grant {
  const grant = parseStored<Grant>(json, 'a stored grant');
  return revokedAt === null ? grant : { ...grant, revokedAt };
}

/**
 * The page a SQL store's settled-page statement read: it asks for one row more than `limit`,
 * and that row's presence is what says a next page exists (its cursor is the last kept row's key).
 */
export function settledPageOf(rows: ReadonlyArray<SuspensionRow & { seq: number | string }>, limit: number): SettledPage {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    calls: page.map(callOf),
    ...(last !== undefined && rows.length > limit ? { next: cursorOf({ at: last.updated_at ?? '', seq: Number(last.seq) }) } : {}),
  };
}

/** A run checkpoint as the SQL stores keep it (drivers may hand `version` back as a string). */
export interface RunRow {
  run_id: string;
  version: number;
  state: string;
  updated_at: string;
}
