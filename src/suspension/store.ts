import type { Answer, AnsweredRequest, PendingRequest, Signature, ToolResult } from '../results/wire';
import type { Audit, HistoryFilter, Principal } from './audit';
import type { AutomaticRecord } from './automatic';
import type { Receipt } from '../toolkit/context';

export type { AnsweredRequest } from '../results/wire';

/**
 * Where a suspended call is in its life:
 * `pending` → (`resolving` while a process holds the claim) → `resolved` | `declined` | `expired` | `cancelled`.
 */
export type SuspensionStatus = 'pending' | 'resolving' | 'resolved' | 'declined' | 'expired' | 'cancelled';

/** The settled statuses: a call in one of them never runs again. */
export type SettledStatus = Exclude<SuspensionStatus, 'pending' | 'resolving'>;

/** One suspended tool call as a store keeps it. Everything round-trips as JSON. */
export interface SuspendedCall {
  request: PendingRequest;
  tool: string;
  args: unknown;
  callId?: string;
  runId?: string;
  status: SuspensionStatus;
  /** RFC 3339. */
  createdAt: string;
  /** RFC 3339; the last status change. */
  updatedAt?: string;
  /** The answer that claimed or settled the call. */
  answer?: Answer;
  /** The stored outcome: what every later `resolve` of this id returns. */
  outcome?: ToolResult;
  /** RFC 3339, by the store's clock; while `resolving`, the claim is held until this instant. */
  leaseUntil?: string;
  /**
   * The fencing number of the latest claim: 1 for the first, one more for every claim
   * after it (a takeover). Absent before the first claim.
   */
  fence?: number;
  /**
   * The links of this call's chain before this one, oldest first: every earlier request of
   * the same call with the answer that replayed it. Absent on the first link.
   */
  chain?: AnsweredRequest[];
  /** Set when this link's replay asked something new: the id of the next link. */
  next?: string;
  /**
   * Digest of what the call was (tool, args, callId, runId, request, chain), written by the
   * coordinator when it records the call and checked before anything replays it.
   */
  binding?: string;
  /**
   * On whose behalf the call was made (the agent run's `principal`), recorded with the call:
   * separation of duties refuses their own approval (docs/who-may-answer.md).
   */
  requestedBy?: Principal;
  /** The chat session the call's run belongs to, when it has one: the conversation of its spans. */
  session?: string;
  /** What automatic answers decided of this approval request when it was recorded (docs/who-may-answer.md). */
  automatic?: AutomaticRecord;
  /** The approvals recorded so far of a quorum request, oldest first, one per principal. */
  signatures?: Signature[];
  /** Who gave the answer that claimed the call (`Audit.by`), recorded with the claim. */
  answeredBy?: Principal;
  /** RFC 3339, by the store's clock: when the answer that claimed the call was recorded. */
  answeredAt?: string;
  /** The answerer's own words (`Audit.comment`), recorded with the claim. */
  comment?: string;
  /**
   * The W3C `traceparent` of the `execute_tool` span that suspended (when a tracer recorded
   * it): the span that resolves the call, maybe in another process, links to it.
   */
  traceparent?: string;
  /**
   * What downstream systems answered this call's replays (`ctx.receipt`), oldest first, each
   * with the attempt (claim) that recorded it: kept across takeovers and passed on to the next
   * link of the chain, so a `recovery` request and the replay after it see them.
   */
  receipts?: Receipt[];
}

/** Filter of {@link SuspensionStore.list}; all fields optional and combined with AND. */
export interface SuspensionFilter {
  status?: SuspensionStatus;
  runId?: string;
  kind?: string;
}

/**
 * What {@link SuspensionStore.settledPage} reads: settled calls whose settlement (`updatedAt`)
 * falls in `[since, until)`, oldest settlement first, at most `limit` of them, after the page
 * whose `next` is `after`. Evaluation data is exported this way (docs/operating.md,
 * "Decisions as evaluation data"), a page at a time, so the table is never loaded whole.
 */
export interface SettledPageQuery {
  /** RFC 3339: the earliest settlement included. */
  since: string;
  /** RFC 3339: settlements at or after it are left out. Absent: up to now. */
  until?: string;
  /** Only calls of these tools (`SuspendedCall.tool`); absent: every tool. */
  tools?: readonly string[];
  /** The `next` of the page before, as the store returned it; absent for the first page. */
  after?: string;
  /** At most this many calls, a positive whole number. */
  limit: number;
}

/** One page of {@link SuspensionStore.settledPage}. */
export interface SettledPage {
  calls: SuspendedCall[];
  /**
   * Where the next page starts (opaque: the store's own key of the last call, its settlement
   * instant and insertion order); absent when this page is the last.
   */
  next?: string;
}

/** Proof that this process holds a call's claim; needed to renew and to settle it. */
export interface Claim {
  id: string;
  /** The claim's fencing number (the call's `fence` after this claim). Only the current one may renew or settle. */
  fence: number;
  /** The call as this claim left it (`resolving`, with the answer and the lease). */
  call: SuspendedCall;
  /** RFC 3339: the store's clock when it granted the claim. Expiry is judged by it. */
  at: string;
}

/**
 * What {@link SuspensionStore.claimEarly} found: the call as it was before this statement, and
 * the claim when it made one (docs/design.md, glossary: "early claim").
 */
export interface EarlyClaim {
  /** The call as read, before any claim: what the checks and the answer policy judge. */
  read: SuspendedCall;
  /** The claim, when the call was `pending` and its request is one an early claim may take. */
  claim?: Claim;
}

/** How a claimed call ends: its status and outcome, and, when its replay asked something new, the next link. */
export interface Settlement {
  status: SettledStatus;
  outcome: ToolResult;
  /** A new `pending` call (the next link of the chain), inserted in the same atomic step. */
  next?: SuspendedCall;
  /** Every receipt of the call (earlier attempts' and this one's), written with the outcome. */
  receipts?: Receipt[];
}

/**
 * The durable side of suspend/resume: where a `ResumeCoordinator` keeps suspended
 * calls. Implement it to keep them anywhere; every implementation must pass the shared
 * conformance suite (`runSuspensionStoreConformance`, or `runStoreConformance` for a store
 * that is a `RunStore` too, from `toolnexus-ts/testing`).
 *
 * Rules every store follows:
 * - What it is given round-trips as JSON: `get` returns copies, never the objects passed in,
 *   and mutating a returned value changes nothing stored.
 * - Atomicity is the store's job: `claim` must let exactly one caller win for an id, even
 *   across processes, and `complete` must only succeed for the holder of the claim.
 * - Time is the store's own: leases are granted and judged by one clock (the database
 *   server's for PostgreSQL; the process clock for stores on one host), never by each
 *   caller's, so a caller whose clock is off cannot take a live claim.
 * - Arguments are checked once, by the coordinator, before they reach a store: a store may
 *   take what it is given as well-formed (a call shaped like {@link SuspendedCall}, a claim it
 *   returned, a settled status, a positive lease). What it reads back from its own storage it
 *   still checks, since a row may have been edited.
 * - Errors are told apart by their `code` (`TOOLNEXUS_DUPLICATE_SUSPENSION`,
 *   `TOOLNEXUS_STORE`...), never by their message.
 * - After `close`, every method rejects with `StoreError`.
 */
export interface SuspensionStore {
  /**
   * Durably records a new call (normally with status `pending`). Resolves only once it is
   * stored. Rejects with `DuplicateSuspensionError` when the id is already recorded and with
   * `StoreError` for a value JSON cannot carry; a refused insert stores nothing.
   */
  insert(call: SuspendedCall): Promise<void>;
  get(id: string): Promise<SuspendedCall | undefined>;
  /** Oldest first (by `createdAt`, then insertion order). */
  list(filter?: SuspensionFilter): Promise<SuspendedCall[]>;
  /**
   * Atomically moves a call from `pending` (or from `resolving` whose lease has run out by
   * the store's clock) to `resolving`, recording `answer`, a lease of `leaseMs` from the
   * store's now, and the next fencing number. Returns the claim, or `undefined` when the
   * call is unknown, settled, or held by a live lease.
   *
   * In the same write it records the audit of the answer: `answeredAt` (the claim's instant
   * by the store's clock), and `answeredBy` and `comment` from `audit` (each cleared when
   * `audit` lacks it, so they always belong to the recorded answer). A claim that loses
   * records nothing.
   */
  claim(id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<Claim | undefined>;
  /**
   * Reads a call and, in the same atomic step, claims it as {@link claim} would (recording the
   * answer and the audit) when it is `pending` and its request is one whose answer is kept as
   * given and claims alone: not of kind `authorization`, and without `data.schema` or
   * `data.quorum` (an answer to those may carry consumed fields or be a signature, so the
   * coordinator reads and judges first). Never takes over a lapsed lease. `undefined` when the
   * call is unknown. The coordinator judges the read call right after, and gives back a claim
   * it refuses with {@link restoreClaim}: one round trip fewer for an answer (docs/performance.md).
   * A store may also leave a call it cannot judge in the same step unclaimed (PostgreSQL: a
   * request holding `\u0000`): the coordinator then takes the read-first path with the call read.
   * Optional, with `restoreClaim`: without them the coordinator reads, judges, then claims.
   */
  claimEarly?(id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<EarlyClaim | undefined>;
  /**
   * Puts a call an early claim took back as `read` had it (status, answer, fencing number, lease,
   * `updatedAt` and the audit fields), so a refused answer leaves it as it was. Returns false (and
   * changes nothing) when `claim` no longer holds the call.
   */
  restoreClaim?(claim: Claim, read: SuspendedCall): Promise<boolean>;
  /**
   * Extends the claim's lease to `leaseMs` from the store's now. Returns false (and changes
   * nothing) when the claim's fencing number is no longer the call's, or the call is no
   * longer `resolving`. A holder whose lease ran out but whom nobody displaced still renews.
   */
  renew(claim: Claim, leaseMs: number): Promise<boolean>;
  /**
   * Settles a claimed call with its outcome, and inserts `settlement.next` (the next link of
   * its chain) in the same atomic step. Returns false (and changes nothing) when the claim's
   * fencing number is no longer the call's (another process took it over). A holder whose
   * lease ran out but whom nobody displaced still completes.
   */
  complete(claim: Claim, settlement: Settlement): Promise<boolean>;
  /**
   * Appends a receipt (`ctx.receipt`) to a claimed call's `receipts` the moment the replay
   * records it, so it survives a crash before {@link complete}. Returns false (and changes
   * nothing) when the claim's fencing number is no longer the call's or the call is no longer
   * `resolving`. Optional: without it receipts are kept with the outcome only.
   */
  recordReceipt?(claim: Claim, receipt: Receipt): Promise<boolean>;
  /**
   * Settled calls (resolved, declined, expired, cancelled), newest settlement first (by
   * `updatedAt`, then latest insertion), filtered by `status`, `kind`, `runId` and `tool`, at
   * most `filter.limit` of them (all when absent).
   */
  history(filter?: HistoryFilter): Promise<SuspendedCall[]>;
  /**
   * A page of settled calls, oldest settlement first (by `updatedAt`, then insertion order),
   * read by a bounded statement over the settled index: what `exportDecisions` walks
   * (docs/operating.md, "Decisions as evaluation data"). A call settled while pages are read
   * is in a later page when its settlement is after the cursor. Optional: without it a store's
   * decisions cannot be exported.
   */
  settledPage?(query: SettledPageQuery): Promise<SettledPage>;
  /**
   * Atomically adds an approval to a `pending` call's `signatures` (docs/who-may-answer.md,
   * "Quorum"), stamped with the store's clock, unless `by.id` already signed (a principal counts
   * once). Returns the call afterwards (unchanged when it was not pending or already signed),
   * or `undefined` when unknown. Concurrent signers, in any process, each see their own
   * signature and every one recorded before it. Optional: a store without it cannot keep quorums.
   * With `declined`, the signature is a decline (`declined: true`) toward `quorum.declines`.
   */
  sign?(id: string, by: Principal, comment?: string, declined?: boolean): Promise<SuspendedCall | undefined>;
  /**
   * The store's clock now, in epoch milliseconds: the one leases and claim instants are judged
   * by (the database server's for PostgreSQL, SQLite's, the memory store's injected clock).
   * Escalations and expiries are judged by it too (docs/who-may-answer.md, "Escalation"), so a
   * process whose own clock is off neither hands a request over early nor settles it late.
   * Optional: without it the coordinator's clock judges them.
   */
  now?(): Promise<number>;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}
