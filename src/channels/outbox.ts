import { messageOf } from '../errors/message';
import type { Delivery, DeliveryStore } from '../deliveries/store';
import type { Clock } from '../timing/clock';
import type { SuspendedCall } from '../suspension/store';
import { approvalCard, EDIT_PLATFORMS, type CardBuilders } from './card';
import { EMAIL_PLATFORM, type MailSend } from './email';
import type { AdapterLike } from './peer';
import { cardViewOf, isFinal, shownKey } from './view';

/** What happened to one delivery, told to the channel's observers (`onDelivery`). */
export interface DeliveryEvent {
  /** `posted` (the card is up), `updated` (edited to the call's state), `failed` (tried, will try again at `retryAt`). */
  type: 'posted' | 'updated' | 'failed';
  callId: string;
  platform: string;
  target: string;
  /** The platform's words for a failure (never a request's values). */
  error?: string;
  /** RFC 3339: the next try of a failed delivery. */
  retryAt?: string;
  attempts: number;
  /** True for an escalation notice (docs/channels.md, "Escalation"). */
  escalation?: boolean;
}

/** How a failed delivery is tried again: `baseMs` doubled per failure, at most `maxMs`. */
export interface DeliveryRetry {
  baseMs?: number;
  maxMs?: number;
}

/** What the outbox needs of the channel: the settings of one tick. */
export interface OutboxParts {
  store: DeliveryStore;
  clock: Clock;
  chat: CardBuilders;
  adapters: ReadonlyMap<string, AdapterLike>;
  /** Sends an e-mail delivery's mail, when e-mail is configured. */
  mail?: MailSend;
  /** The call, redacted; `undefined` when no store holds it. */
  read(callId: string): Promise<SuspendedCall | undefined>;
  tell(event: DeliveryEvent): void;
  leaseMs: number;
  refreshMs: number;
  retry: Required<DeliveryRetry>;
}

/**
 * Brings one delivery to its call's state: posts the card, or edits it when what it shows
 * changed. A worker holds the row (a lease, by compare-and-set) while it talks to the
 * platform, so two workers never post one card twice; a worker that dies holding it leaves it
 * to the next once the lease lapses. Returns false when another worker holds or moved it.
 */
export async function work(parts: OutboxParts, delivery: Delivery): Promise<boolean> {
  const now = parts.clock.now();
  if (delivery.leaseUntil !== undefined && delivery.leaseUntil > now) return false;
  const call = await parts.read(delivery.callId);
  if (!call) return parts.store.saveDelivery(next(delivery, { done: true, dueAt: now, error: 'the call is no longer stored' }));
  const view = cardViewOf(call, now);
  // Edit only where the platform opens a dialog for it (Google Chat's adapter opens none).
  if (!EDIT_PLATFORMS.has(delivery.platform)) delete view.editable;
  const key = shownKey(view);
  // A mail is sent once and never edited; one not sent before its call settled is not sent.
  const once = delivery.platform === EMAIL_PLATFORM;
  if (once && (delivery.message || isFinal(view))) return parts.store.saveDelivery(next(delivery, { done: true, dueAt: now }));
  // An escalation notice for a call settled before it came due is never posted.
  if (delivery.escalation && !delivery.message && isFinal(view))
    return parts.store.saveDelivery(next(delivery, { done: true, dueAt: now }));
  if (delivery.message && delivery.shown === key) {
    return parts.store.saveDelivery(next(delivery, { done: isFinal(view), dueAt: now + parts.refreshMs }));
  }
  const adapter = parts.adapters.get(delivery.platform);
  const held = next(delivery, { leaseUntil: now + parts.leaseMs, dueAt: now + parts.leaseMs });
  if (!(await parts.store.saveDelivery(held))) return false;
  const event = {
    callId: delivery.callId,
    platform: delivery.platform,
    target: delivery.target,
    ...(delivery.escalation ? { escalation: true } : {}),
  };
  try {
    let posted = delivery.message;
    if (once) {
      if (!parts.mail) throw new Error('no e-mail is configured');
      posted = await parts.mail(delivery, view);
    } else if (!adapter) throw new Error(`no ${delivery.platform} adapter is configured`);
    else if (posted) await adapter.editMessage(posted.threadId, posted.id, approvalCard(parts.chat, view, delivery.escalation === true));
    else {
      const message = approvalCard(parts.chat, view, delivery.escalation === true);
      const sent = adapter.postChannelMessage
        ? await adapter.postChannelMessage(delivery.target, message)
        : await adapter.postMessage(delivery.target, message);
      posted = { threadId: sent.threadId, id: sent.id };
    }
    const after = parts.clock.now();
    const saved = next(held, { message: posted, shown: key, attempts: 0, done: once || isFinal(view), dueAt: after + parts.refreshMs });
    delete saved.leaseUntil;
    delete saved.error;
    // The call may have moved on while the card was being sent: then it is due again at once.
    const moved = await parts.read(delivery.callId);
    if (!once && moved && shownKey(cardViewOf(moved, after)) !== key) {
      saved.done = false;
      saved.dueAt = after;
    }
    await parts.store.saveDelivery(saved);
    parts.tell({ type: delivery.message ? 'updated' : 'posted', ...event, attempts: 0 });
  } catch (error) {
    const attempts = delivery.attempts + 1;
    const retryAt = parts.clock.now() + Math.min(parts.retry.maxMs, parts.retry.baseMs * 2 ** (attempts - 1));
    const failed = next(held, { attempts, dueAt: retryAt, error: messageOf(error).slice(0, 500) });
    delete failed.leaseUntil;
    await parts.store.saveDelivery(failed);
    parts.tell({ type: 'failed', ...event, error: failed.error, retryAt: new Date(retryAt).toISOString(), attempts });
  }
  return true;
}

/** The delivery's next version with `changes`. */
function next(delivery: Delivery, changes: Partial<Delivery>): Delivery {
  return { ...delivery, ...changes, version: delivery.version + 1 };
}
