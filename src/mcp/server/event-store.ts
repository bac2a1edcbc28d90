import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

/** The bytes every session's event store holds together, and the most they may hold. */
export class EventBudget {
  used = 0;

  constructor(readonly maxBytes: number) {}
}

/** How much one session's {@link BoundedEventStore} keeps. */
export interface EventStoreLimits {
  /** Most events kept. */
  maxEvents: number;
  /** Most bytes (of the events' JSON) kept. */
  maxBytes: number;
  /** The budget shared with the other sessions' stores. */
  budget: EventBudget;
}

interface StoredEvent {
  streamId: string;
  message: JSONRPCMessage;
  bytes: number;
}

/**
 * The events of a Streamable HTTP server's SSE streams, kept so a client that lost a stream
 * can resume it with `Last-Event-ID`. Bounded by count and by bytes, for this session and for
 * all sessions together: past a bound the oldest events of this session are dropped (a session
 * that sends much only loses its own), an event larger than what is left is not kept, and a
 * resume from a dropped event replays nothing.
 */
export class BoundedEventStore implements EventStore {
  private readonly events = new Map<string, StoredEvent>();
  private counter = 0;
  private bytes = 0;

  constructor(private readonly limits: EventStoreLimits) {}

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${(++this.counter).toString(36).padStart(8, '0')}`;
    const bytes = Buffer.byteLength(JSON.stringify(message), 'utf8');
    const { maxEvents, maxBytes, budget } = this.limits;
    if (bytes > maxBytes || bytes > budget.maxBytes) return Promise.resolve(id);
    while (
      this.events.size > 0 &&
      (this.events.size >= maxEvents || this.bytes + bytes > maxBytes || budget.used + bytes > budget.maxBytes)
    )
      this.dropOldest();
    // Other sessions may hold the whole shared budget: then this event is not kept.
    if (budget.used + bytes > budget.maxBytes) return Promise.resolve(id);
    this.events.set(id, { streamId, message, bytes });
    this.bytes += bytes;
    budget.used += bytes;
    return Promise.resolve(id);
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.events.get(eventId)?.streamId);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const from = this.events.get(lastEventId);
    if (!from) return '';
    let after = false;
    for (const [id, event] of [...this.events]) {
      if (id === lastEventId) {
        after = true;
        continue;
      }
      if (after && event.streamId === from.streamId) await send(id, event.message);
    }
    return from.streamId;
  }

  /** The bytes this store holds. */
  size(): number {
    return this.bytes;
  }

  /** Drops every event and gives their bytes back to the shared budget (the session ended). */
  clear(): void {
    this.limits.budget.used -= this.bytes;
    this.bytes = 0;
    this.events.clear();
  }

  private dropOldest(): void {
    const [id, oldest] = this.events.entries().next().value as [string, StoredEvent];
    this.events.delete(id);
    this.bytes -= oldest.bytes;
    this.limits.budget.used -= oldest.bytes;
  }
}
