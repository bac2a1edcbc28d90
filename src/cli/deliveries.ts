import type { Delivery } from '../deliveries/store';
export { deliveryStoreOf } from '../deliveries/view';
import { table } from './format';

/** Where one request went, as `pending show` gives it (docs/channels.md, "What is stored"): no lease, version or card key. */
export interface DeliveryShown {
  /** The channel's adapter: `slack`, `teams`, `gchat`. */
  platform: string;
  /** Where the card went: a Chat SDK channel id (`slack:C0FINANCE`). */
  target: string;
  /** Whether the card is up (its message id was recorded). */
  posted: boolean;
  /** Whether it shows a settled call: nothing more is done with it. */
  final: boolean;
  /** Failed tries since the last success. */
  failures: number;
  /** RFC 3339: when the outbox next tries it (after a failure) or checks it against its call; absent once final. */
  next?: string;
  /** The platform's words for the last failure. */
  error?: string;
  /** True for an escalation notice, due when the request's escalation comes due. */
  escalation?: true;
}

export function deliveryShown(delivery: Delivery): DeliveryShown {
  return {
    platform: delivery.platform,
    target: delivery.target,
    posted: delivery.message !== undefined,
    final: delivery.done,
    failures: delivery.attempts,
    ...(delivery.done ? {} : { next: new Date(delivery.dueAt).toISOString() }),
    ...(delivery.error === undefined ? {} : { error: delivery.error }),
    ...(delivery.escalation ? { escalation: true as const } : {}),
  };
}

/** The deliveries table under `pending show`'s fields. */
export function deliveriesText(deliveries: readonly DeliveryShown[]): string {
  if (deliveries.length === 0) return 'deliveries:   (none)';
  const rows = deliveries.map((d) => [
    d.platform,
    d.target,
    `${d.escalation ? 'escalation, ' : ''}${d.posted ? 'posted' : 'not posted'}${d.final ? ', final' : ''}`,
    String(d.failures),
    d.next === undefined ? '' : `${d.failures > 0 ? 'try' : 'check'} ${d.next}`,
    d.error ?? '',
  ]);
  const shown = table(['PLATFORM', 'TARGET', 'STATE', 'FAILURES', 'NEXT', 'ERROR'], rows, [10, 40, 32, 8, 32, 80]);
  return `deliveries:\n${shown
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')}`;
}
