import { ToolnexusError } from '../errors';
import type { StreamLogStore } from '../sessions/stream-log';
import type { ChatLogger } from './log';
import type { UIStreamPart } from './parts';
import type { AgentRunner } from '../runner/agent-runner';
import { isStreamLogStore } from '../sessions/stream-log';
import { STDERR_LOGGER } from './log';
import { systemClock, type Clock, type ClockTimer } from '../timing/clock';

/** Options of the stream log a chat front end writes (docs/chat.md, "Reconnecting"). */
export interface ChatStreamLogOptions {
  /**
   * The most parts one run's log keeps (default 10 000: a long answer's text deltas, its tool
   * calls and their progress). Past it the log keeps counting but keeps no more parts: a
   * reconnect that needs one it left out gets the parts it has, then an `error` part saying
   * so, and the page reads the rest from the thread once the run has ended.
   */
  maxParts?: number;
  /**
   * How often a reconnected page's response looks for new parts, in ms (default 250, at
   * least 10). A reconnect follows the run by reading the store, so it works from any
   * process on the same store, whichever drives the run.
   */
  pollMs?: number;
  /**
   * How long a followed log may stay open without a new part before the session is asked
   * whether its run is still driven (default 30 000 ms): a log whose writer died (its process
   * crashed) ends the response instead of holding it open.
   */
  staleMs?: number;
  /**
   * How long a part may wait before it is written, in ms (default 50): parts are written
   * together, at most one write per interval, so a run's stream costs the store a few writes,
   * not one per token. A reconnecting page sees a part at most this, plus `pollMs`, after the
   * live page did; a response's last parts are written before it ends.
   */
  flushMs?: number;
}

/** Each option's default, as {@link ChatStreamLogOptions} tells them: the writer's and the reconnect's. */
export const STREAM_LOG_DEFAULTS: Readonly<Required<ChatStreamLogOptions>> = {
  maxParts: 10_000,
  pollMs: 250,
  staleMs: 30_000,
  flushMs: 50,
};

/**
 * Writes one response's parts to its run's stream log: the already redacted JSON texts the
 * response writes, so the log holds exactly what the live page was sent. Writes go one at a
 * time in the background, at most one per `flushMs`, each taking every part pushed
 * meanwhile, so the response never waits on the store between its first and last part; a
 * failed write is logged once and the log is left as it is (the live stream goes on).
 */
export class StreamLogWriter {
  private buffer: string[] = [];
  /** The cursor of `buffer[0]`. */
  private at: number;
  /** The cursor after the last part pushed (counting those past the cap). */
  private next: number;
  private writing: Promise<void> | undefined;
  private broken = false;
  private ended = false;
  private timer: ClockTimer | undefined;

  private constructor(
    private readonly store: StreamLogStore,
    readonly runId: string,
    /** The cursor of this response's first part. */
    readonly from: number,
    private readonly maxParts: number,
    private readonly flushMs: number,
    private readonly clock: Clock,
    private readonly logger: ChatLogger,
  ) {
    this.at = from;
    this.next = from;
  }

  /** Opens the response's segment of `runId`'s log; `undefined` (logged) when the store fails. */
  static async open(
    store: StreamLogStore,
    runId: string,
    sessionId: string,
    options: ChatStreamLogOptions,
    clock: Clock,
    logger: ChatLogger,
  ): Promise<StreamLogWriter | undefined> {
    try {
      const from = await store.openStream(runId, sessionId);
      return new StreamLogWriter(
        store,
        runId,
        from,
        options.maxParts ?? STREAM_LOG_DEFAULTS.maxParts,
        options.flushMs ?? STREAM_LOG_DEFAULTS.flushMs,
        clock,
        logger,
      );
    } catch (error) {
      failedLog(logger, runId, error);
      return undefined;
    }
  }

  /** The SSE text of `parts`, each `data:` line's JSON also kept for the log: one `JSON.stringify` per part, as without a log. */
  sse(parts: readonly UIStreamPart[]): string {
    let text = '';
    for (const part of parts) {
      const json = JSON.stringify(part);
      text += `data: ${json}\n\n`;
      if (this.ended) continue;
      if (this.next < this.maxParts) this.buffer.push(json);
      this.next++;
    }
    this.schedule();
    return text;
  }

  /** Adds the JSON texts of parts the response writes, in order. */
  push(parts: readonly string[]): void {
    if (this.ended) return;
    for (const part of parts) {
      if (this.next < this.maxParts) this.buffer.push(part);
      this.next++;
    }
    this.schedule();
  }

  /** Writes what is left and closes the segment: awaited before the response's last part, so a page that saw it finds it in the log. */
  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.broken) return;
    const parts = this.buffer;
    this.buffer = [];
    await this.store.appendStream(this.runId, this.at, parts, this.next, true).catch((error: unknown) => this.fail(error));
  }

  /** A write of what is buffered, `flushMs` from now, unless one is in flight or due. */
  private schedule(): void {
    if (this.timer || this.writing || this.broken || this.ended || this.buffer.length === 0) return;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.flushMs);
    // A response's pending write never keeps a process up; its end writes the rest anyway.
    this.timer.unref?.();
  }

  private flush(): void {
    if (this.writing || this.broken || this.buffer.length === 0) return;
    const parts = this.buffer;
    const at = this.at;
    this.buffer = [];
    this.at += parts.length;
    this.writing = this.store.appendStream(this.runId, at, parts, this.next, false).then(
      () => {
        this.writing = undefined;
        this.schedule();
      },
      (error: unknown) => {
        this.writing = undefined;
        this.fail(error);
      },
    );
  }

  private fail(error: unknown): void {
    if (this.broken) return;
    this.broken = true;
    this.buffer = [];
    failedLog(this.logger, this.runId, error);
  }
}

/**
 * The log writer of a response that streams run `runId` of session `sessionId`, opened (its
 * first cursor read) before the response's first byte; none when the runner's session store
 * keeps no stream logs or the host turned them off (`streamLog: false`).
 */
export function openChatLog(
  runner: AgentRunner,
  target: { runId: string; sessionId: string } | undefined,
  options: { streamLog?: ChatStreamLogOptions | false; logger?: ChatLogger; clock?: Clock },
): Promise<StreamLogWriter | undefined> {
  const store = runner.sessions;
  if (!target || !isStreamLogStore(store) || options.streamLog === false) return Promise.resolve(undefined);
  const clock = options.clock ?? systemClock;
  return StreamLogWriter.open(store, target.runId, target.sessionId, options.streamLog ?? {}, clock, options.logger ?? STDERR_LOGGER);
}

function failedLog(logger: ChatLogger, runId: string, error: unknown): void {
  try {
    logger.error(
      `toolnexus chat: run ${runId}: writing its stream log failed: ${error instanceof ToolnexusError ? error.code : 'an internal error'}`,
    );
  } catch {
    // A failing logger changes nothing here.
  }
}
