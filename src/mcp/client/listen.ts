import type { Client, McpSubscription, SubscriptionFilter } from '@modelcontextprotocol/client';

/** Most `subscriptions/listen` attempts in a row that fail before a server's change stream is given up. */
export const MAX_LISTEN_FAILURES = 5;
/** The wait before listening again after the n-th failure in a row, in ms: n × this. */
const RELISTEN_STEP_MS = 250;

/** What one server's change stream needs of the source. */
export interface ListenHooks {
  /** Whether the stream should still be open: false once the source closed or the client was replaced. */
  wanted(): boolean;
  /**
   * Told when a stream opened again after one ended: changes made while none was open were not
   * seen, so the lists are read afresh (a stateless server may have restarted with other tools).
   */
  reopened(): void;
}

/**
 * The change stream of a 2026-07-28 server (`subscriptions/listen`): that revision tells of
 * list changes only on such a stream, never unsolicited as 2025-11-25 does. The notifications
 * it carries go to the client's own handlers (the same ones a 2025-11-25 session's
 * notifications reach), and the SDK evicts its cached lists on them. A stream the server
 * ends, or one lost with the connection, is opened again after a wait that grows with each
 * failure in a row (an ended stream counts as one) and given up after
 * {@link MAX_LISTEN_FAILURES} — until the source closes or replaces the client.
 */
export class ChangeStream {
  private subscription: McpSubscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly client: Client,
    private readonly filter: SubscriptionFilter,
    private readonly timeoutMs: number,
    private readonly hooks: ListenHooks,
  ) {}

  /**
   * The filter of what `client`'s server offers to tell of (its `listChanged` capabilities),
   * or undefined when it is not a 2026-07-28 connection or offers nothing.
   */
  static filterOf(client: Client): SubscriptionFilter | undefined {
    if (client.getProtocolEra() !== 'modern') return undefined;
    const capabilities = client.getServerCapabilities() ?? {};
    const filter: SubscriptionFilter = {
      ...(capabilities.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(capabilities.resources?.listChanged ? { resourcesListChanged: true } : {}),
      ...(capabilities.prompts?.listChanged ? { promptsListChanged: true } : {}),
    };
    return Object.keys(filter).length > 0 ? filter : undefined;
  }

  /**
   * Opens the stream; resolves once the server acknowledged it, so a change made after
   * `connect()` returned is seen, or after `waitMs` (a buffering server or proxy never
   * acknowledges; a loaded one may be slow): the stream keeps opening, and once open the lists
   * are read afresh, as for a reopened one. A server that refuses it still serves calls: the
   * failure is retried like a lost stream, not thrown.
   */
  async open(waitMs: number): Promise<void> {
    let late = false;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        late = true;
        resolve();
      }, waitMs);
      timer.unref();
    });
    await Promise.race([this.listen(() => late), waited]);
    clearTimeout(timer);
  }

  /** Closes the stream and stops opening it again. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.subscription?.close().catch(() => undefined);
  }

  /** One attempt to open the stream; `again()` says whether a change may have gone unseen before it opened. */
  private async listen(again: () => boolean): Promise<void> {
    if (this.stopped || !this.hooks.wanted()) return;
    let subscription: McpSubscription;
    try {
      subscription = await this.client.listen(this.filter, { timeout: this.timeoutMs });
    } catch {
      this.failures++;
      this.schedule();
      return;
    }
    if (this.stopped) {
      await subscription.close().catch(() => undefined);
      return;
    }
    this.failures = 0;
    this.subscription = subscription;
    if (again()) this.hooks.reopened();
    void subscription.closed.then((how) => {
      // 'local' is our own close (or the client's): nothing to open again. An ended stream counts
      // as a failure, so a server that ends every stream at once is asked at a bounded rate.
      if (how === 'local' || this.subscription !== subscription) return;
      this.failures++;
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.stopped || !this.hooks.wanted() || this.failures >= MAX_LISTEN_FAILURES) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.listen(() => true);
    }, this.failures * RELISTEN_STEP_MS);
    // A stream waiting to be opened again must not keep the host's process alive.
    this.timer.unref();
  }
}

/** The `_meta` key of a 2026-07-28 request's log level (logging per request; `logging/setLevel` is gone there). */
const LOG_LEVEL = 'io.modelcontextprotocol/logLevel';

/**
 * A 2026-07-28 request's log level: every line (`debug`), as a 2025-11-25 session sends by
 * default, when the caller's context takes log lines; none asked when nobody would read them.
 */
export function logLevelFor(ctx: { log?: unknown } | undefined): Record<string, 'debug'> {
  return ctx?.log ? { [LOG_LEVEL]: 'debug' } : {};
}
