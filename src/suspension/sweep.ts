import type { Answer } from '../results/wire';
import type { Clock } from '../timing/clock';
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
}
