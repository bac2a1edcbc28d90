import type { Delivery, DeliveryStore } from './store';

/** The most characters of a delivery's error a view shows. */
export const MAX_DELIVERY_ERROR = 300;

/**
 * Where one request went, as the inbox shows it (docs/channels.md, "What is stored"): the
 * platform and the target the host's route named, never an address, a message id, a lease or a
 * card key.
 */
export interface DeliveryView {
  /** The channel's adapter: `slack`, `teams`, `gchat`, `email`. */
  platform: string;
  /** Where the card went, as the route named it: `slack:C0FINANCE`, `email:<principal id>`. */
  target: string;
  /** Whether the card is up (its message id was recorded). */
  posted: boolean;
  /** Whether it shows a settled call: nothing more is done with it. */
  final: boolean;
  /** Failed tries since the last success. */
  attempts: number;
  /** RFC 3339: when the outbox next tries it (after a failure) or checks it against its call; absent once final. */
  nextAttemptAt?: string;
  /** The platform's words for the last failure: one line, at most {@link MAX_DELIVERY_ERROR} characters. */
  error?: string;
  /** True for an escalation notice, due when the request's escalation comes due. */
  escalation?: true;
}

/** The deliveries of a store that keeps them (every built-in store does), else `undefined`. */
export function deliveryStoreOf(store: object): DeliveryStore | undefined {
  const deliveries = (store as { deliveries?: Partial<DeliveryStore> }).deliveries;
  return deliveries && typeof deliveries.listDeliveries === 'function' ? (deliveries as DeliveryStore) : undefined;
}

/** The cards first, then the escalation notices, each by target. */
export function byPlace(a: Delivery, b: Delivery): number {
  const key = (d: Delivery) => `${d.escalation ? 1 : 0} ${d.target}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/**
 * `text` on one line (control characters and line breaks become spaces, so a platform's words
 * cannot rewrite a terminal or a page's layout), cut to `max` characters.
 */
export function plainLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex -- exactly what is being removed
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One delivery as the inbox shows it. */
export function deliveryView(delivery: Delivery): DeliveryView {
  return {
    platform: delivery.platform,
    target: delivery.target,
    posted: delivery.message !== undefined,
    final: delivery.done,
    attempts: delivery.attempts,
    ...(delivery.done ? {} : { nextAttemptAt: new Date(delivery.dueAt).toISOString() }),
    ...(delivery.error === undefined ? {} : { error: plainLine(delivery.error, MAX_DELIVERY_ERROR) }),
    ...(delivery.escalation ? { escalation: true as const } : {}),
  };
}

/**
 * Where the call `callId` went, as views (cards first, then escalation notices, each by target;
 * at most `limit`), on a store that keeps deliveries; `undefined` on one that keeps none. What
 * the inbox and `pending show` both show.
 */
export async function deliveryViewsOf(store: object, callId: string, limit: number): Promise<DeliveryView[] | undefined> {
  const deliveries = deliveryStoreOf(store);
  return deliveries ? (await deliveries.listDeliveries({ callId, limit })).sort(byPlace).map(deliveryView) : undefined;
}
