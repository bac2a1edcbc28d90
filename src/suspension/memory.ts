import { DuplicateSuspensionError, InvalidArgumentError, StoreError } from '../errors';
import { systemClock, type Clock } from '../timing/clock';
import type { Answer } from '../results/wire';
import type { Receipt } from '../toolkit/context';
import type { Audit, HistoryFilter, Principal } from './audit';
import { jsonCopy } from './json';
import { isSettled } from './status';
import type { Claim, Settlement, SettledPage, SettledPageQuery, SuspendedCall, SuspensionFilter, SuspensionStore } from './store';
import { cursorOf, pageStart } from './pages';
import type { Grant, GrantFilter } from './grants';
import type { KeyedCallStore, KeyedStart } from './keyed';
import type { ToolResult } from '../results/wire';

/** A served call's key in the memory store: its holder's fence and lease, then its outcome. */
interface KeyedEntry {
  fence: number;
  leaseUntil: number;
  outcome?: ToolResult;
  finishedAt?: number;
}

interface Entry {
  call: SuspendedCall;
  seq: number;
  /** The lease as a number, so judging it needs no parsing. */
  leaseUntilMs?: number;
}

/** Options of {@link MemorySuspensionStore} (and of `MemoryStore`, which builds on it). */
export interface MemorySuspensionStoreOptions {
  /** Where leases and claim instants take their time from. Default: the system clock. */
  clock?: Clock;
}

/**
 * Keeps suspended calls in this process's memory: a `ResumeCoordinator`'s default store, for
 * hosts that resolve in the same process and tests. Nothing survives a restart; use
 * `SqliteStore` (or `PostgresStore`) for that. `MemoryStore` (`toolnexus-ts/memory`) keeps
 * run checkpoints and sessions beside them, for a runner.
 *
 * Values are stored as JSON copies, so it behaves exactly like a durable store: what
 * comes back is what JSON can carry, and callers cannot mutate what is stored. Leases, and
 * the claim's instant that expiry is judged by, are read from `options.clock` (the system
 * clock by default), the only clock its callers share; tests pass a fake one.
 */
export class MemorySuspensionStore implements SuspensionStore, KeyedCallStore {
  protected readonly clock: Clock;
  private readonly calls = new Map<string, Entry>();
  /** Served calls' incoming idempotency keys (keyed.ts): their holder or first outcome. */
  private readonly keyed = new Map<string, KeyedEntry>();
  private readonly grants = new Map<string, Grant>();
  private nextSeq = 0;
  private closed = false;

  constructor(options: MemorySuspensionStoreOptions = {}) {
    const clock = options.clock ?? systemClock;
    // Named by the class built, so a MemoryStore's refusal names MemoryStore.
    if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function')
      throw new InvalidArgumentError(`${new.target.name}: clock must be a Clock { now, setTimeout, clearTimeout }`);
    this.clock = clock;
  }

  async insert(call: SuspendedCall): Promise<void> {
    this.assertOpen();
    this.add(jsonCopy(call, `suspension ${call.request.id}`));
  }

  async get(id: string): Promise<SuspendedCall | undefined> {
    this.assertOpen();
    const entry = this.calls.get(id);
    return entry ? structuredClone(entry.call) : undefined;
  }

  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    this.assertOpen();
    const matches = [...this.calls.values()].filter(
      ({ call }) =>
        (filter.status === undefined || call.status === filter.status) &&
        (filter.runId === undefined || call.runId === filter.runId) &&
        (filter.kind === undefined || call.request.kind === filter.kind),
    );
    matches.sort((a, b) => (a.call.createdAt < b.call.createdAt ? -1 : a.call.createdAt > b.call.createdAt ? 1 : a.seq - b.seq));
    return matches.map(({ call }) => structuredClone(call));
  }

  async history(filter: HistoryFilter = {}): Promise<SuspendedCall[]> {
    this.assertOpen();
    const matches = [...this.calls.values()].filter(
      ({ call }) =>
        isSettled(call.status) &&
        (filter.status === undefined || call.status === filter.status) &&
        (filter.kind === undefined || call.request.kind === filter.kind) &&
        (filter.runId === undefined || call.runId === filter.runId) &&
        (filter.tool === undefined || call.tool === filter.tool),
    );
    // A settled call without updatedAt (inserted so) sorts last, as NULL does in the SQL stores.
    const at = (entry: Entry) => entry.call.updatedAt ?? '';
    matches.sort((a, b) => (at(a) > at(b) ? -1 : at(a) < at(b) ? 1 : b.seq - a.seq));
    return matches.slice(0, filter.limit ?? matches.length).map(({ call }) => structuredClone(call));
  }

  async settledPage(query: SettledPageQuery): Promise<SettledPage> {
    this.assertOpen();
    const start = pageStart(query);
    const after = (entry: Entry, at: string) => at > start.at || (at === start.at && entry.seq > start.seq);
    const matches = [...this.calls.values()].filter((entry) => {
      const at = entry.call.updatedAt;
      return (
        at !== undefined &&
        isSettled(entry.call.status) &&
        at >= query.since &&
        (query.until === undefined || at < query.until) &&
        after(entry, at) &&
        (query.tools === undefined || query.tools.includes(entry.call.tool))
      );
    });
    const at = (entry: Entry) => entry.call.updatedAt ?? '';
    matches.sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : a.seq - b.seq));
    const page = matches.slice(0, query.limit);
    const last = page[page.length - 1];
    return {
      calls: page.map(({ call }) => structuredClone(call)),
      ...(last !== undefined && matches.length > query.limit ? { next: cursorOf({ at: at(last), seq: last.seq }) } : {}),
    };
  }

  async claim(id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<Claim | undefined> {
    this.assertOpen();
    const storedAnswer = jsonCopy(answer, `the answer to ${id}`);
    const entry = this.calls.get(id);
    if (!entry) return undefined;
    const now = this.clock.now();
    const claimable = entry.call.status === 'pending' || (entry.call.status === 'resolving' && (entry.leaseUntilMs ?? 0) < now);
    if (!claimable) return undefined;
    const at = new Date(now).toISOString();
    const fence = (entry.call.fence ?? 0) + 1;
    entry.leaseUntilMs = now + leaseMs;
    const { answeredBy: _by, comment: _comment, ...unaudited } = entry.call;
    entry.call = {
      ...unaudited,
      status: 'resolving',
      answer: storedAnswer,
      leaseUntil: new Date(entry.leaseUntilMs).toISOString(),
      fence,
      updatedAt: at,
      answeredAt: at,
      ...(audit?.by ? { answeredBy: audit.by } : {}),
      ...(audit?.comment !== undefined ? { comment: audit.comment } : {}),
    };
    return { id, fence, call: structuredClone(entry.call), at };
  }

  async sign(id: string, by: Principal, comment?: string, declined?: boolean): Promise<SuspendedCall | undefined> {
    this.assertOpen();
    const entry = this.calls.get(id);
    if (!entry) return undefined;
    const signatures = entry.call.signatures ?? [];
    if (entry.call.status === 'pending' && !signatures.some((s) => s.by.id === by.id)) {
      const at = new Date(this.clock.now()).toISOString();
      const signature = {
        by: jsonCopy(by, `the principal signing ${id}`),
        at,
        ...(comment === undefined ? {} : { comment }),
        ...(declined === true ? { declined: true as const } : {}),
      };
      entry.call = { ...entry.call, signatures: [...signatures, signature], updatedAt: at };
    }
    return structuredClone(entry.call);
  }

  async now(): Promise<number> {
    this.assertOpen();
    return this.clock.now();
  }

  async insertGrant(grant: Grant): Promise<void> {
    this.assertOpen();
    if (this.grants.has(grant.id)) throw new StoreError(`grant ${grant.id} is already recorded`);
    this.grants.set(grant.id, jsonCopy(grant, `grant ${grant.id}`));
  }

  async revokeGrant(id: string): Promise<Grant | undefined> {
    this.assertOpen();
    const grant = this.grants.get(id);
    if (!grant || grant.revokedAt !== undefined) return undefined;
    const revoked = { ...grant, revokedAt: new Date(this.clock.now()).toISOString() };
    this.grants.set(id, revoked);
    return structuredClone(revoked);
  }

  async listGrants(filter?: GrantFilter): Promise<Grant[]> {
    this.assertOpen();
    const grants = [...this.grants.values()];
    const kept = filter ? grants.filter((g) => g.tool === filter.tool && g.revokedAt === undefined) : grants;
    return kept.map((grant) => structuredClone(grant));
  }

  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    this.assertOpen();
    const entry = this.held(claim);
    if (!entry) return false;
    entry.leaseUntilMs = this.clock.now() + leaseMs;
    entry.call = { ...entry.call, leaseUntil: new Date(entry.leaseUntilMs).toISOString() };
    return true;
  }

  async complete(claim: Claim, settlement: Settlement): Promise<boolean> {
    this.assertOpen();
    const outcome = jsonCopy(settlement.outcome, `the outcome of ${claim.id}`);
    const next = settlement.next === undefined ? undefined : jsonCopy(settlement.next, `suspension ${settlement.next.request.id}`);
    const entry = this.held(claim);
    if (!entry) return false;
    // Refused before anything changes, as a SQL store's rolled-back transaction would be.
    if (next && this.calls.has(next.request.id)) throw new DuplicateSuspensionError(next.request.id);
    const { leaseUntil: _released, ...rest } = entry.call;
    entry.call = {
      ...rest,
      status: settlement.status,
      outcome,
      updatedAt: new Date(this.clock.now()).toISOString(),
      ...(next ? { next: next.request.id } : {}),
      ...(settlement.receipts ? { receipts: jsonCopy(settlement.receipts, `the receipts of ${claim.id}`) } : {}),
    };
    entry.leaseUntilMs = undefined;
    if (next) this.add(next);
    return true;
  }

  async recordReceipt(claim: Claim, receipt: Receipt): Promise<boolean> {
    this.assertOpen();
    const copy = jsonCopy(receipt, `a receipt of ${claim.id}`);
    const entry = this.held(claim);
    if (!entry) return false;
    entry.call = { ...entry.call, receipts: [...(entry.call.receipts ?? []), copy] };
    return true;
  }

  async beginKeyed(key: string, leaseMs: number, retentionMs: number): Promise<KeyedStart> {
    this.assertOpen();
    const now = this.clock.now();
    const entry = this.keyed.get(key);
    if (entry?.outcome !== undefined && now - (entry.finishedAt ?? 0) <= retentionMs)
      return { state: 'done', outcome: structuredClone(entry.outcome) };
    if (entry && entry.outcome === undefined && entry.leaseUntil >= now) return { state: 'running' };
    const fence = (entry?.fence ?? 0) + 1;
    this.keyed.set(key, { fence, leaseUntil: now + leaseMs });
    return { state: 'started', fence };
  }

  async finishKeyed(key: string, fence: number, outcome: ToolResult): Promise<boolean> {
    this.assertOpen();
    const copy = jsonCopy(outcome, `the outcome of key ${key}`);
    const entry = this.keyed.get(key);
    if (!entry || entry.fence !== fence || entry.outcome !== undefined) return false;
    this.keyed.set(key, { ...entry, outcome: copy, finishedAt: this.clock.now() });
    return true;
  }

  async renewKeyed(key: string, fence: number, leaseMs: number): Promise<boolean> {
    this.assertOpen();
    const entry = this.keyed.get(key);
    if (!entry || entry.fence !== fence || entry.outcome !== undefined) return false;
    entry.leaseUntil = this.clock.now() + leaseMs;
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /**
   * The settled calls last updated before `cutoff` (RFC 3339) whose next link does not wait,
   * oldest first, and the deletion of one of them: what `MemoryStore.prune` works through.
   */
  protected prunableCalls(cutoff: string): SuspendedCall[] {
    return [...this.calls.values()]
      .filter(({ call }) => this.prunable(call, cutoff))
      .sort((a, b) =>
        (a.call.updatedAt ?? '') < (b.call.updatedAt ?? '') ? -1 : (a.call.updatedAt ?? '') > (b.call.updatedAt ?? '') ? 1 : a.seq - b.seq,
      )
      .map(({ call }) => structuredClone(call));
  }

  protected deletePrunableCall(id: string, cutoff: string): boolean {
    const entry = this.calls.get(id);
    return entry !== undefined && this.prunable(entry.call, cutoff) && this.calls.delete(id);
  }

  /**
   * The served calls' keys whose outcome was kept before `cutoffMs` (epoch ms, this store's
   * clock), oldest first, and the deletion of one of them: a key still held is never one.
   */
  protected prunableKeyed(cutoffMs: number): Array<{ key: string; fence: number; outcome: ToolResult; finishedAt: number }> {
    return [...this.keyed.entries()]
      .flatMap(([key, entry]) =>
        keyedFinishedBefore(entry, cutoffMs)
          ? [{ key, fence: entry.fence, outcome: structuredClone(entry.outcome), finishedAt: entry.finishedAt }]
          : [],
      )
      .sort((a, b) => a.finishedAt - b.finishedAt);
  }

  protected deletePrunableKeyed(key: string, cutoffMs: number): boolean {
    const entry = this.keyed.get(key);
    return entry !== undefined && keyedFinishedBefore(entry, cutoffMs) && this.keyed.delete(key);
  }

  private prunable(call: SuspendedCall, cutoff: string): boolean {
    if (!isSettled(call.status) || call.updatedAt === undefined || call.updatedAt >= cutoff) return false;
    const next = call.next === undefined ? undefined : this.calls.get(call.next);
    return next === undefined || isSettled(next.call.status);
  }

  /** Throws once the store is closed; what a subclass keeps beside the calls checks it too, so closing closes all of it. */
  protected assertOpen(): void {
    if (this.closed) throw new StoreError('the memory store is closed');
  }

  /** The entry while `claim` still holds it: resolving, with the claim's fence. */
  private held(claim: Claim): Entry | undefined {
    const entry = this.calls.get(claim.id);
    return entry && entry.call.status === 'resolving' && entry.call.fence === claim.fence ? entry : undefined;
  }

  private add(call: SuspendedCall): void {
    const id = call.request.id;
    if (this.calls.has(id)) throw new DuplicateSuspensionError(id);
    const leaseUntilMs = call.leaseUntil === undefined ? undefined : Date.parse(call.leaseUntil);
    this.calls.set(id, { call, seq: this.nextSeq++, leaseUntilMs });
  }
}

function keyedFinishedBefore(entry: KeyedEntry, cutoffMs: number): entry is KeyedEntry & { outcome: ToolResult; finishedAt: number } {
  return entry.outcome !== undefined && entry.finishedAt !== undefined && entry.finishedAt < cutoffMs;
}
