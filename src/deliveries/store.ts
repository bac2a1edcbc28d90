/**
 * What a store keeps of a request's **deliveries** (docs/channels.md, "What is stored"): one row
 * per card a channel posts for a pending call, so a crash between "suspended" and "posted"
 * still posts once, and a card is brought to the call's outcome wherever it settled.
 */

/** One card of one call in one place: where it went, what it shows, when it is tried next. */
export interface Delivery {
  /** `<callId> <target>`: one card per call and place, so two processes posting race on the insert. */
  id: string;
  /** The suspension the card asks about. */
  callId: string;
  /** The Chat SDK adapter's name (`slack`, `teams`, `gchat`). */
  platform: string;
  /** Where it is posted: a Chat SDK channel or thread id (`slack:C0FINANCE`). */
  target: string;
  /** Bumped by every save: the compare-and-set of {@link DeliveryStore.saveDelivery}. */
  version: number;
  /** The posted message, once posted: the thread it is in and its id there (Slack's `ts`). */
  message?: { threadId: string; id: string };
  /** The key of what the card shows now (its state and quorum progress); absent until posted. */
  shown?: string;
  /** True once the card shows a settled call: nothing more to do. */
  done: boolean;
  /** Failed tries since the last success. */
  attempts: number;
  /** Epoch milliseconds (the channel's clock): not tried before then. */
  dueAt: number;
  /** Epoch milliseconds: a worker holds it (is posting or editing) until then. */
  leaseUntil?: number;
  /** The last failure, as the platform said it (never a request's values). */
  error?: string;
  /**
   * True for an escalation notice: the card that tells the escalation principals a request is
   * theirs to answer too, due when the escalation comes due (docs/channels.md, "Escalation").
   */
  escalation?: boolean;
}

/** Filter of {@link DeliveryStore.listDeliveries}: one call's deliveries, or those not done and due by an instant. */
export interface DeliveryFilter {
  callId?: string;
  /** Epoch milliseconds: only deliveries not done whose `dueAt` is at or before it, earliest first. */
  dueBy?: number;
  /** At most this many (default 100). */
  limit?: number;
}

/**
 * Where a channel keeps its deliveries: each built-in store has one (`store.deliveries`), in
 * the same database as the suspensions, so two workers on one PostgreSQL share it.
 */
export interface DeliveryStore {
  /** Records a new delivery (its `version` 1); false when one of that id is there already. */
  insertDelivery(delivery: Delivery): Promise<boolean>;
  /** Replaces the delivery whose version is `delivery.version - 1`; false when another save came first. */
  saveDelivery(delivery: Delivery): Promise<boolean>;
  getDelivery(id: string): Promise<Delivery | undefined>;
  listDeliveries(filter: DeliveryFilter): Promise<Delivery[]>;
}

/** The most deliveries one list returns. */
export const MAX_DELIVERY_LIST = 1000;

/** The limit a filter asks for, bounded. */
export function deliveryLimit(filter: DeliveryFilter): number {
  const limit = filter.limit ?? 100;
  return Number.isSafeInteger(limit) && limit > 0 ? Math.min(limit, MAX_DELIVERY_LIST) : 100;
}

/** A delivery read back from a row's JSON, checked, so an edited row is refused rather than acted on. */
export function deliveryOf(json: string): Delivery {
  const value = JSON.parse(json) as Partial<Delivery>;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof value.id !== 'string' ||
    typeof value.callId !== 'string' ||
    typeof value.platform !== 'string' ||
    typeof value.target !== 'string' ||
    !Number.isSafeInteger(value.version) ||
    typeof value.done !== 'boolean' ||
    !Number.isSafeInteger(value.attempts) ||
    typeof value.dueAt !== 'number'
  ) {
    throw new TypeError('a stored delivery is malformed');
  }
  return value as Delivery;
}
