import type { ServerResponse } from 'node:http';
import type { SuspensionStore } from '../suspension/store';

/**
 * Tells connected pages when the open suspensions change, over server-sent events. One timer
 * per inbox polls the store while at least one page listens, so a change made by another
 * process (a CLI, another replica, a run resuming elsewhere) shows up within `pollMs`; a change
 * made through this inbox is announced at once. The event carries no data: the page refetches
 * what it shows, through the same authorization as any request.
 */
export class ChangeFeed {
  private readonly streams = new Set<ServerResponse>();
  private timer?: NodeJS.Timeout;
  /** The open calls as last read; `undefined` until the first read, which is what a new page saw. */
  private last?: string;
  private polling = false;
  private ticks = 0;
  private closed = false;
  private failing = false;

  constructor(
    private readonly store: SuspensionStore,
    private readonly pollMs: number,
    private readonly maxStreams: number,
    /** Told when the store cannot be read, once per run of failed reads (not once a poll). */
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Takes over `response` as an event stream; false when the inbox already serves `maxStreams` of them. */
  open(response: ServerResponse): boolean {
    if (this.closed || this.streams.size >= this.maxStreams) return false;
    response.statusCode = 200;
    response.setHeader('content-type', 'text/event-stream; charset=utf-8');
    response.setHeader('cache-control', 'no-store');
    response.setHeader('x-content-type-options', 'nosniff');
    // Tells nginx-like proxies not to buffer the stream.
    response.setHeader('x-accel-buffering', 'no');
    response.flushHeaders();
    response.write('retry: 2000\n: connected\n\n');
    this.streams.add(response);
    response.on('close', () => this.drop(response));
    if (!this.timer) {
      this.timer = setInterval(() => void this.poll(), this.pollMs);
      this.timer.unref();
      void this.poll();
    }
    return true;
  }

  /** Announces a change made in this process, without waiting for the next poll. */
  changed(): void {
    void this.poll(true);
  }

  /** Ends every stream and stops polling. */
  close(): void {
    this.closed = true;
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    this.stop();
  }

  private drop(response: ServerResponse): void {
    this.streams.delete(response);
    if (this.streams.size === 0) {
      this.stop();
      this.last = undefined;
    }
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(force = false): Promise<void> {
    if (this.polling || this.streams.size === 0) return;
    this.polling = true;
    try {
      // Only open calls are read: a call settles by leaving this set, and every settled call was open first.
      const [pending, resolving] = await Promise.all([this.store.list({ status: 'pending' }), this.store.list({ status: 'resolving' })]);
      const print = [...pending, ...resolving].map((call) => `${call.request.id}:${call.status}:${call.updatedAt ?? ''}`).join('|');
      this.failing = false;
      const first = this.last === undefined;
      if (print !== this.last || force) {
        this.last = print;
        if (!first || force) this.broadcast('event: change\ndata: {}\n\n');
      } else if (++this.ticks % 15 === 0) {
        this.broadcast(': keep-alive\n\n');
      }
    } catch (error) {
      // A store that cannot be read now is read again at the next tick; the pages keep what they show.
      if (!this.failing) {
        this.failing = true;
        try {
          this.onError(error);
        } catch {
          // A failing logger changes nothing here.
        }
      }
    } finally {
      this.polling = false;
    }
  }

  private broadcast(text: string): void {
    for (const stream of this.streams) stream.write(text);
  }
}
