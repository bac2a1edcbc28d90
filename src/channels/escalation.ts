import type { Delivery } from '../deliveries/store';
import { escalationOf } from '../suspension/escalation';
import type { SuspendedCall } from '../suspension/store';

/**
 * Where a call's escalation notice goes when its escalation comes due: Chat SDK channel ids,
 * given the redacted call and the ids of the principals it escalates to (a direct message to
 * each, or their team's channel).
 */
export type EscalationRoute = (call: SuspendedCall, to: readonly string[]) => readonly string[] | Promise<readonly string[]>;

/**
 * The escalation notices of a pending call that declares an escalation (docs/channels.md,
 * "Escalation"): one delivery per target, due at the escalation's instant, recorded with the
 * call's cards. Each is recorded once (its id is the call's, the word `escalation` and the
 * target's), so two workers or a worker that died record and post it once; the outbox's tick
 * posts it when it comes due on the channel's clock, unless the call settled first.
 */
export async function escalationNotices(
  call: SuspendedCall,
  route: (call: SuspendedCall) => readonly string[] | Promise<readonly string[]>,
  escalationRoute: EscalationRoute | undefined,
): Promise<Delivery[]> {
  const escalation = escalationOf(call.request);
  if (!escalation || escalation.to.length === 0) return [];
  const targets = escalationRoute ? await escalationRoute(call, escalation.to) : await route(call);
  return [...new Set(targets)].map((target) => ({
    id: `${call.request.id} escalation ${target}`,
    callId: call.request.id,
    platform: target.slice(0, target.indexOf(':')),
    target,
    version: 1,
    done: false,
    attempts: 0,
    dueAt: escalation.at,
    escalation: true,
  }));
}
