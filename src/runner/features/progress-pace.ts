import type { Clock, ClockTimer } from '../../timing/clock';
import { monotonicOf } from '../../timing/clock';
import type { Telemetry } from '../../telemetry/telemetry';
import type { Emit } from '../core/live-run';

/** At most one progress event per call in this many milliseconds; the latest in between is kept and sent at the end of the interval. */
export const PROGRESS_INTERVAL_MS = 100;
/** The longest progress message sent on; longer ones are cut. */
const MAX_MESSAGE_CHARS = 500;

interface Update {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A running call's `ctx.progress` in a run someone listens to: each update becomes a
 * `progress` run event (and a span event on the tool's span), at most one per
 * {@link PROGRESS_INTERVAL_MS} on the runner's clock; updates in between are coalesced into the
 * latest, which is sent when the interval ends or, at the latest, just before the call's result.
 */
export class ProgressReporter {
  private lastSent = Number.NEGATIVE_INFINITY;
  private held: Update | undefined;
  private timer: ClockTimer | undefined;
  private closed = false;
  private readonly elapsed: () => number;

  constructor(
    private readonly callId: string,
    private readonly name: string,
    private readonly emit: Emit,
    private readonly clock: Clock,
    private readonly telemetry: Telemetry,
  ) {
    this.elapsed = monotonicOf(clock);
  }

  /** What the tool calls: `ctx.progress(progress, total?, message?)`. */
  readonly report = (progress: number, total?: number, message?: string): void => {
    if (this.closed || typeof progress !== 'number' || !Number.isFinite(progress)) return;
    const update: Update = { progress };
    if (typeof total === 'number' && Number.isFinite(total)) update.total = total;
    if (typeof message === 'string')
      update.message = message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
    this.spanEvent(update);
    const now = this.elapsed();
    if (now - this.lastSent >= PROGRESS_INTERVAL_MS) {
      this.send(update, now);
      return;
    }
    this.held = update;
    this.timer ??= this.clock.setTimeout(
      () => {
        this.timer = undefined;
        if (this.held) this.send(this.held, this.elapsed());
      },
      PROGRESS_INTERVAL_MS - (now - this.lastSent),
    );
  };

  /** The call ended: the held update, if any, goes out now, before its result; later updates are dropped. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.held) this.send(this.held, this.elapsed());
  }

  private send(update: Update, now: number): void {
    this.held = undefined;
    this.lastSent = now;
    this.emit({ type: 'progress', callId: this.callId, name: this.name, ...update });
  }

  /** Every update is an event of the tool's span (the active one while the tool runs), unthrottled: spans are sampled and bounded by the SDK. */
  private spanEvent(update: Update): void {
    const tracing = this.telemetry.active();
    const span = tracing?.api.trace.getActiveSpan();
    if (!span) return;
    const attributes: Record<string, string | number> = { 'toolnexus.progress': update.progress };
    if (update.total !== undefined) attributes['toolnexus.progress.total'] = update.total;
    if (update.message !== undefined && tracing?.captureContent) attributes['toolnexus.progress.message'] = tracing.redact(update.message);
    span.addEvent('progress', attributes);
  }
}
