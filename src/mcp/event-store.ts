import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * The events of a Streamable HTTP server's SSE streams, kept so a client that lost a stream
 * can resume it with `Last-Event-ID`. Bounded: past `maxEvents` the oldest are dropped, and a
 * resume from a dropped event replays nothing.
 */
export class BoundedEventStore implements EventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  private counter = 0;

  constructor(private readonly maxEvents: number) {}

  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}_${(++this.counter).toString(36).padStart(8, '0')}`;
    this.events.set(id, { streamId, message });
    if (this.events.size > this.maxEvents) {
      const oldest = this.events.keys().next().value as string;
      this.events.delete(oldest);
    }
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
    for (const [id, event] of this.events) {
      if (id === lastEventId) {
        after = true;
        continue;
      }
      if (after && event.streamId === from.streamId) await send(id, event.message);
    }
    return from.streamId;
  }
}
