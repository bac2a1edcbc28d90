import type { Answer, ToolResult } from '../results/wire';
import type { Clock } from '../timing/clock';
import { InvalidArgumentError } from '../errors';
import { messageOf } from '../errors/message';
import { systemAudit } from './authority';
import { escalationOf, storeNow } from './escalation';
import type { Observers } from './observer';
import type { Resolution } from './resolution';
import type { SuspensionStore } from './store';

/** What a sweep did: the calls it settled `expired`, and those whose escalation it told of. */
export interface SweepResult {
  expired: string[];
  escalated: string[];
}

/** What {@link Sweeper.recoverLapsed} did with one call whose claim lapsed. */
export type LapsedTakeover =
  /** Taken over here under the takeover rule: its outcome (an idempotent tool's replay, or the `recovery` request's pending result). */
  | { id: string; runId?: string; status: 'taken'; outcome: ToolResult }
  /** The takeover failed (the row does not match its binding, the store failed: the call stays as it was; or, on a store that claims early, the recorded answer was refused when judged again: the call is `pending` again, nothing ran). */
  | { id: string; runId?: string; status: 'failed'; error: Error };

/** Options of `ResumeCoordinator.recoverLapsed`. */
export interface RecoverLapsedOptions {
  /** At most this many takeovers (1 to 1000; default 10): the work of one tick is bounded. */
  limit?: number;
  /** The host's context an idempotent tool's replay runs with (never stored). */
  context?: object;
  /** Only the calls of this run. */
  runId?: string;
}

/** Settles what time alone decides (see `ResumeCoordinator.sweep`); remembers when it last swept. */
export class Sweeper {
  /** The store's instant of the last sweep: escalations due before it were told. */
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: SuspensionStore,
    private readonly clock: Clock,
    private readonly resolution: Resolution,
    private readonly observers: Observers,
  ) {}

  async sweep(): Promise<SweepResult> {
    // The store's clock, as leases and the claim's expiry are judged by.
    const now = await storeNow(this.store, this.clock);
    const since = this.last;
    this.last = now;
    const result: SweepResult = { expired: [], escalated: [] };
    for (const call of await this.store.list({ status: 'pending' })) {
      const id = call.request.id;
      const deadline = call.request.expiresAt === undefined ? Number.NaN : Date.parse(call.request.expiresAt);
      if (deadline <= now) {
        try {
          const answer: Answer = { id, ok: false, reason: 'expired' };
          await this.resolution.checkAndClaim(answer, call, undefined, systemAudit('expired'));
          result.expired.push(id);
        } catch {
          // Settled or taken meanwhile: whoever holds it decides.
        }
        continue;
      }
      const escalation = escalationOf(call.request);
      if (escalation && escalation.at <= now && escalation.at > since) {
        this.observers.escalated(call);
        result.escalated.push(id);
      }
    }
    return result;
  }

  /** Takes over the calls whose claim lapsed, oldest first (see `ResumeCoordinator.recoverLapsed`). */
  async recoverLapsed({ limit = 10, context, runId }: RecoverLapsedOptions = {}): Promise<LapsedTakeover[]> {
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new InvalidArgumentError(`recoverLapsed: limit must be an integer from 1 to 1000, got ${String(limit)}`);
    // The store's clock hints which leases lapsed; the store's claim decides who takes each.
    const now = await storeNow(this.store, this.clock);
    const lapsed = (await this.store.list({ status: 'resolving', ...(runId === undefined ? {} : { runId }) })).filter(
      (call) => call.leaseUntil === undefined || Date.parse(call.leaseUntil) < now,
    );
    const taken: LapsedTakeover[] = [];
    for (const call of lapsed) {
      if (taken.length >= limit) break;
      const place = { id: call.request.id, ...(call.runId === undefined ? {} : { runId: call.runId }) };
      try {
        const outcome = await this.resolution.takeOver(call, context);
        if (outcome) taken.push({ ...place, status: 'taken', outcome });
      } catch (error) {
        taken.push({ ...place, status: 'failed', error: error instanceof Error ? error : new Error(messageOf(error)) });
      }
    }
    return taken;
  }
}
