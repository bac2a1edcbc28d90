import { randomUUID } from 'node:crypto';
import { DuplicateSuspensionError, PendingStoreError } from '../../errors';
import type { Answer, ToolResult } from '../../results/wire';
import type { Claim, PendingStore, RunCheckpoint, SettledStatus, SuspendedCall, SuspensionFilter } from '../store';
import { jsonCopy } from './json';
import { checkInsertable } from './validate';

/**
 * Keeps suspended calls in this process's memory: the default store, for hosts that
 * resolve in the same process and tests. Nothing survives a restart; use
 * {@link SqlitePendingStore} (or a Postgres store) for that.
 *
 * Values are stored as JSON copies, so it behaves exactly like a durable store: what
 * comes back is what JSON can carry, and callers cannot mutate what is stored.
 */
export class MemoryPendingStore implements PendingStore {
  private readonly calls = new Map<string, { call: SuspendedCall; seq: number; token?: string; leaseUntilMs?: number }>();
  private readonly runs = new Map<string, RunCheckpoint>();
  private nextSeq = 0;
  private closed = false;

  async insert(call: SuspendedCall): Promise<void> {
    this.assertOpen();
    checkInsertable(call);
    const copy = jsonCopy(call, `suspension ${call.request.id}`);
    const id = copy.request.id;
    if (this.calls.has(id)) throw new DuplicateSuspensionError(id);
    this.calls.set(id, { call: copy, seq: this.nextSeq++ });
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

  async claim(id: string, answer: Answer, leaseMs: number, now: Date): Promise<Claim | undefined> {
    this.assertOpen();
    const entry = this.calls.get(id);
    if (!entry) return undefined;
    const claimable = entry.call.status === 'pending' || (entry.call.status === 'resolving' && (entry.leaseUntilMs ?? 0) < now.getTime());
    if (!claimable) return undefined;
    const storedAnswer = jsonCopy(answer, `the answer to ${id}`);
    const leaseUntilMs = now.getTime() + leaseMs;
    const token = randomUUID();
    entry.token = token;
    entry.leaseUntilMs = leaseUntilMs;
    entry.call = {
      ...entry.call,
      status: 'resolving',
      answer: storedAnswer,
      leaseUntil: new Date(leaseUntilMs).toISOString(),
      updatedAt: now.toISOString(),
    };
    return { id, token, call: structuredClone(entry.call) };
  }

  async complete(claim: Claim, status: SettledStatus, outcome: ToolResult, now: Date): Promise<boolean> {
    this.assertOpen();
    const entry = this.calls.get(claim.id);
    if (!entry || entry.call.status !== 'resolving' || entry.token !== claim.token) return false;
    const storedOutcome = jsonCopy(outcome, `the outcome of ${claim.id}`);
    const { leaseUntil: _released, ...rest } = entry.call;
    entry.call = { ...rest, status, outcome: storedOutcome, updatedAt: now.toISOString() };
    entry.token = undefined;
    entry.leaseUntilMs = undefined;
    return true;
  }

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    this.assertOpen();
    const stored = this.runs.get(checkpoint.runId);
    const expected = stored ? stored.version + 1 : 1;
    if (checkpoint.version !== expected) return false;
    this.runs.set(checkpoint.runId, jsonCopy(checkpoint, `the checkpoint of run ${checkpoint.runId}`));
    return true;
  }

  async loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    this.assertOpen();
    const stored = this.runs.get(runId);
    return stored ? structuredClone(stored) : undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new PendingStoreError('the memory pending store is closed');
  }
}
