import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '../errors';
import { messageOf } from '../errors/message';
import { Attempt, type AttemptErrors } from '../http/attempt';
import { FetchTransport } from '../http/fetch-transport';
import { isRetryableStatus, retryAfter } from '../http/retry';
import { RequestRefused, type Transport } from '../http/transport';
import { Watchdog } from '../http/watchdog';
import type { SuspensionObserver } from '../suspension/observer';
import type { SuspendedCall } from '../suspension/store';
import type { AnswerRefusal } from '../suspension/authority';
import type { Grant } from '../suspension/grants';
import { systemClock, type Clock, type ClockTimer } from '../timing/clock';
import { grantPayloadOf, payloadOf, type WebhookEvent, type WebhookGrantPayload, type WebhookPayload } from './payload';
import {
  WEBHOOK_DELIVERY_HEADER,
  WEBHOOK_EVENT_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  signWebhook,
} from './signature';

/** Every event a webhook can be sent for; the default is the first two. */
const WEBHOOK_EVENTS: readonly WebhookEvent[] = [
  'suspension.pending',
  'suspension.settled',
  'suspension.signed',
  'suspension.escalated',
  'suspension.expired',
  'suspension.refused',
  'grant.given',
  'grant.revoked',
];

/** Options of {@link Webhooks}. */
export interface WebhooksOptions {
  /** Where deliveries are POSTed: an `http:` or `https:` URL. Redirects are not followed. */
  url: string;
  /**
   * The shared secret deliveries are signed with (HMAC-SHA256), at least 16 bytes. It never
   * appears in a payload, a header or a failure message; keep it out of source control.
   */
  secret: string | Uint8Array;
  /**
   * The inbox, for the `url` of each suspension in the payload: a base URL (the link is it
   * with `?suspension=<id>`), or a function of the suspension id. Absent: no link.
   */
  inboxUrl?: string | ((suspensionId: string) => string);
  /**
   * The events to send. Default: `suspension.pending` and `suspension.settled`; also
   * `suspension.signed` (a quorum approval recorded), `suspension.escalated`,
   * `suspension.expired` (a call settled `expired`, besides its `suspension.settled`),
   * `suspension.refused` (an answer the answer policy refused), `grant.given` and
   * `grant.revoked` (a standing grant) when listed (docs/who-may-answer.md).
   */
  events?: WebhookEvent[];
  /** Attempts per delivery, the first included. Default 6. */
  maxAttempts?: number;
  /** The pause before the first retry; each further one doubles, up to `maxRetryDelayMs`. Default 1000 ms. */
  retryDelayMs?: number;
  /** The longest pause between attempts (also caps a `Retry-After`). Default 60 000 ms. */
  maxRetryDelayMs?: number;
  /** How long one attempt may take before it counts as failed. Default 10 000 ms. */
  timeoutMs?: number;
  /**
   * How many deliveries may be held at once (sending, waiting to be sent, or waiting to be
   * retried). Beyond it a new delivery is dropped and reported to `onFailure`. Default 1000.
   */
  maxQueue?: number;
  /** How many deliveries are sent at the same time. Default 4. */
  concurrency?: number;
  /**
   * Told of every failed attempt (`final: false` when it will be retried). Default: a
   * one-line `console.warn` when a delivery is given up. What it throws is dropped.
   */
  onFailure?: (failure: WebhookFailure) => void;
  /** Told of every delivery the receiver accepted (a 2xx). What it throws is dropped. */
  onDelivered?: (delivery: WebhookDelivery) => void;
  /**
   * Where the signature's timestamp, each attempt's timeout and the backoff between attempts
   * take their time from. Default: the system clock. Tests pass a fake one to step through retries.
   */
  clock?: Clock;
}

/** One delivery, as the hooks are told of it. */
export interface WebhookDelivery {
  /** The delivery id: the payload's `id` and the `x-toolnexus-delivery` header. */
  id: string;
  event: WebhookEvent;
  /** The suspension the event is about; absent for a grant event. */
  suspensionId?: string;
  /** The grant a `grant.given` or `grant.revoked` event is about. */
  grantId?: string;
  /** Attempts made so far, this one included. */
  attempts: number;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
}

/** A failed attempt, or a delivery that never started (a full queue, a closed `Webhooks`). */
export interface WebhookFailure extends WebhookDelivery {
  /** What went wrong, without the secret or the URL's credentials and query. */
  reason: string;
  /** True when the delivery is given up: no further attempt follows. */
  final: boolean;
}

interface Job {
  delivery: WebhookDelivery;
  body: string;
}

const DEFAULTS = {
  maxAttempts: 6,
  retryDelayMs: 1_000,
  maxRetryDelayMs: 60_000,
  timeoutMs: 10_000,
  maxQueue: 1_000,
  concurrency: 4,
};
const MIN_SECRET_BYTES = 16;

/** An attempt's failures as a delivery's reasons: fetch says only "fetch failed"; its cause says why (ECONNREFUSED, a TLS error). */
const DELIVERY_ERRORS: AttemptErrors = {
  timeout: (ms) => new Error(`no answer within ${ms} ms`),
  network: (error) => {
    // Duck-typed: undici's errors come from another realm under test runners.
    const inner = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
    return new Error(`the request failed: ${messageOf(error)}${inner === undefined ? '' : ` (${messageOf(inner)})`}`);
  },
};

/**
 * Signed webhook notifications of suspensions (docs/operating.md, "Webhooks"): attach it to
 * a coordinator as an observer, and every suspension it records (`suspension.pending`) and
 * settles (`suspension.settled`) is POSTed to `url` as JSON, signed with HMAC-SHA256 over
 * `<timestamp>.<body>`, retried with exponential backoff on network errors, timeouts, 408,
 * 429 and 5xx (the models' policy, src/http/retry.ts), and given up after `maxAttempts`.
 *
 * It never blocks or fails the tool call: a delivery is queued after the store write and
 * sent in the background; failures go to `onFailure`. The payload carries the redacted
 * call (no `@Sensitive` value), never the secret. Deliveries live in memory: `flush()`
 * before a graceful shutdown; what a crash interrupts is not resent.
 *
 * @example
 * ```ts
 * const webhooks = new Webhooks({ url: 'https://ops.example.com/hooks/approvals', secret: process.env.WEBHOOK_SECRET!, inboxUrl: 'https://ops.example.com/inbox' })
 * const coordinator = new ResumeCoordinator({ toolkit, store, observers: [webhooks] })
 * ```
 */
export class Webhooks implements SuspensionObserver {
  private readonly url: URL;
  private readonly shownUrl: string;
  private readonly secret: string | Uint8Array;
  private readonly link?: (suspensionId: string) => string;
  private readonly events: ReadonlySet<WebhookEvent>;
  private readonly settings: typeof DEFAULTS;
  private readonly onFailure: (failure: WebhookFailure) => void;
  private readonly onDelivered?: (delivery: WebhookDelivery) => void;
  private readonly ready: Job[] = [];
  private readonly waitingRetries: Job[] = [];
  private readonly timers = new Set<ClockTimer>();
  private readonly clock: Clock;
  /** Times out the attempts on `clock`. */
  private readonly watchdog: Watchdog;
  private readonly transport: Transport;
  private readonly sending = new Set<AbortController>();
  private held = 0;
  private closed = false;
  private idle: Array<() => void> = [];

  constructor(options: WebhooksOptions) {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('Webhooks needs options { url, secret }');
    this.url = checkedUrl(options.url);
    this.shownUrl = `${this.url.origin}${this.url.pathname}`;
    const secretBytes =
      typeof options.secret === 'string'
        ? Buffer.byteLength(options.secret)
        : options.secret instanceof Uint8Array
          ? options.secret.byteLength
          : -1;
    if (secretBytes < MIN_SECRET_BYTES)
      throw new InvalidArgumentError(`Webhooks: secret must be a string or Uint8Array of at least ${MIN_SECRET_BYTES} bytes`);
    this.secret = options.secret;
    this.link = linkOf(options.inboxUrl);
    const events = options.events ?? ['suspension.pending', 'suspension.settled'];
    if (!Array.isArray(events) || events.some((e) => !WEBHOOK_EVENTS.includes(e)))
      throw new InvalidArgumentError(`Webhooks: events must be a list of ${WEBHOOK_EVENTS.map((e) => JSON.stringify(e)).join(', ')}`);
    this.events = new Set(events);
    this.settings = { ...DEFAULTS };
    for (const key of Object.keys(DEFAULTS) as Array<keyof typeof DEFAULTS>) {
      const value = options[key];
      if (value === undefined) continue;
      const least = key === 'retryDelayMs' || key === 'maxRetryDelayMs' ? 0 : 1;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < least)
        throw new InvalidArgumentError(`Webhooks: ${key} must be a finite number of at least ${least}, got ${String(value)}`);
      this.settings[key] = value;
    }
    const clock = options.clock ?? systemClock;
    if (
      typeof clock !== 'object' ||
      clock === null ||
      typeof clock.now !== 'function' ||
      typeof clock.setTimeout !== 'function' ||
      typeof clock.clearTimeout !== 'function'
    )
      throw new InvalidArgumentError('Webhooks: clock must be { now, setTimeout, clearTimeout }');
    this.clock = clock;
    this.watchdog = new Watchdog(clock);
    // The platform fetch, looked up per request as before, so a fetch patched later is used.
    this.transport = new FetchTransport((input, init) => fetch(input, init), this.url.href);
    this.onFailure = options.onFailure ?? warnWhenGivenUp(this.shownUrl);
    this.onDelivered = options.onDelivered;
  }

  /** Queues a `suspension.pending` delivery; returns at once. */
  onPending(call: SuspendedCall): void {
    this.enqueue('suspension.pending', call);
  }

  /** Queues a `suspension.settled` delivery, and `suspension.expired` for a call settled `expired`; returns at once. */
  onSettled(call: SuspendedCall): void {
    this.enqueue('suspension.settled', call);
    if (call.status === 'expired') this.enqueue('suspension.expired', call);
  }

  /** Queues a `suspension.signed` delivery (a quorum approval recorded); returns at once. */
  onSigned(call: SuspendedCall): void {
    this.enqueue('suspension.signed', call);
  }

  /** Queues a `suspension.escalated` delivery; returns at once. */
  onEscalated(call: SuspendedCall): void {
    this.enqueue('suspension.escalated', call);
  }

  /** Queues a `suspension.refused` delivery (an answer the policy refused); returns at once. */
  onRefused(call: SuspendedCall, refusal: AnswerRefusal): void {
    this.enqueue('suspension.refused', call, refusal);
  }

  /** Queues a `grant.given` delivery; returns at once. */
  onGranted(grant: Grant): void {
    this.deliver('grant.given', { grantId: grant.id }, (id) => grantPayloadOf(id, 'grant.given', grant));
  }

  /** Queues a `grant.revoked` delivery; returns at once. */
  onRevoked(grant: Grant): void {
    this.deliver('grant.revoked', { grantId: grant.id }, (id) => grantPayloadOf(id, 'grant.revoked', grant));
  }

  /** How many deliveries are held: sending, waiting, or waiting to be retried. */
  get pendingDeliveries(): number {
    return this.held;
  }

  /** Resolves once every held delivery is delivered or given up (retries included). */
  flush(): Promise<void> {
    if (this.held === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  /**
   * Stops: new events are dropped, waiting deliveries and retries are given up (reported as
   * final failures), attempts in flight are aborted. Resolves once nothing is held. Idempotent.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) this.clock.clearTimeout(timer);
    this.timers.clear();
    for (const controller of this.sending) controller.abort(new Error('the Webhooks were closed'));
    // Retries that were waiting hold no timer now; they are released by `givenUp` below.
    for (const job of this.ready.splice(0)) this.giveUp(job, 'the Webhooks were closed');
    for (const job of this.waitingRetries.splice(0)) this.giveUp(job, 'the Webhooks were closed');
    await this.flush();
  }

  private enqueue(event: WebhookPayload['type'], call: SuspendedCall, refusal?: AnswerRefusal): void {
    // The inbox link is made with the payload: a link function that throws fails this delivery only.
    this.deliver(event, { suspensionId: call.request.id }, (id) => payloadOf(id, event, call, this.link?.(call.request.id), refusal));
  }

  private deliver(
    event: WebhookEvent,
    about: { suspensionId: string } | { grantId: string },
    payload: (deliveryId: string) => WebhookPayload | WebhookGrantPayload,
  ): void {
    if (!this.events.has(event)) return;
    const delivery: WebhookDelivery = { id: randomUUID(), event, ...about, attempts: 0 };
    if (this.closed) return this.report({ ...delivery, reason: 'the Webhooks were closed', final: true });
    if (this.held >= this.settings.maxQueue)
      return this.report({ ...delivery, reason: `the webhook queue is full (${this.settings.maxQueue} deliveries held)`, final: true });
    let body: string;
    try {
      body = JSON.stringify(payload(delivery.id));
    } catch (error) {
      return this.report({ ...delivery, reason: `the payload could not be built: ${messageOf(error)}`, final: true });
    }
    this.held++;
    this.ready.push({ delivery, body });
    this.pump();
  }

  private pump(): void {
    while (this.sending.size < this.settings.concurrency && this.ready.length > 0) {
      const job = this.ready.shift() as Job;
      const controller = new AbortController();
      this.sending.add(controller);
      void this.attempt(job, controller).finally(() => {
        this.sending.delete(controller);
        this.pump();
      });
    }
  }

  private async attempt(job: Job, controller: AbortController): Promise<void> {
    job.delivery.attempts++;
    const timestamp = Math.floor(this.clock.now() / 1000);
    const attempt = new Attempt(DELIVERY_ERRORS, this.settings.timeoutMs, job.delivery.attempts, controller.signal, this.watchdog);
    let status: number | undefined;
    let retryAfterMs: number | undefined;
    let reason: string;
    let retryable: boolean;
    try {
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'toolnexus-ts-webhooks',
        [WEBHOOK_EVENT_HEADER]: job.delivery.event,
        [WEBHOOK_DELIVERY_HEADER]: job.delivery.id,
        [WEBHOOK_TIMESTAMP_HEADER]: String(timestamp),
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook(this.secret, timestamp, job.body),
      };
      const reply = await this.transport.send(headers, job.body, attempt);
      status = reply.status;
      // The body is not needed: discarding it frees the connection without reading an unbounded stream.
      await reply.discard();
      if (status >= 200 && status < 300) {
        this.done();
        return this.tell(this.onDelivered, { ...job.delivery, status });
      }
      retryAfterMs = retryAfter(reply.headers, this.clock.now());
      reason = `the receiver answered HTTP ${status}`;
      retryable = isRetryableStatus(status);
    } catch (error) {
      // A request the HTTP client refused before sending it would be refused again on every retry.
      retryable = !(error instanceof RequestRefused);
      reason = error instanceof RequestRefused ? `the request failed: ${error.detail}` : messageOf(attempt.failure(error));
    } finally {
      attempt.dispose();
    }
    if (!retryable || this.closed || job.delivery.attempts >= this.settings.maxAttempts) {
      const why = !retryable
        ? reason
        : this.closed
          ? attempt.aborted
            ? reason
            : `${reason}; the Webhooks were closed`
          : `${reason}; gave up after ${job.delivery.attempts} attempts`;
      return this.giveUp(job, why, status);
    }
    this.report({ ...job.delivery, ...(status === undefined ? {} : { status }), reason, final: false });
    this.retryLater(job, retryAfterMs);
  }

  private retryLater(job: Job, retryAfterMs: number | undefined): void {
    const { retryDelayMs, maxRetryDelayMs } = this.settings;
    // Jitter spreads the retries of many deliveries that failed together; the receiver's
    // Retry-After sets the wait instead, as it does for the models (src/http/retry.ts).
    const delay = Math.min(maxRetryDelayMs, retryAfterMs ?? retryDelayMs * 2 ** (job.delivery.attempts - 1) * (0.8 + Math.random() * 0.4));
    this.waitingRetries.push(job);
    const timer = this.clock.setTimeout(() => {
      this.timers.delete(timer);
      const at = this.waitingRetries.indexOf(job);
      if (at >= 0) this.waitingRetries.splice(at, 1);
      this.ready.push(job);
      this.pump();
    }, delay);
    // A pending retry must not keep a process alive that has nothing else to do.
    timer.unref?.();
    this.timers.add(timer);
  }

  private giveUp(job: Job, reason: string, status?: number): void {
    this.report({ ...job.delivery, ...(status === undefined ? {} : { status }), reason, final: true });
    this.done();
  }

  private done(): void {
    this.held--;
    if (this.held === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  private report(failure: WebhookFailure): void {
    this.tell(this.onFailure, failure);
  }

  private tell<T>(hook: ((value: T) => void) | undefined, value: T): void {
    try {
      hook?.(value);
    } catch {
      // A hook's failure must not stop deliveries.
    }
  }
}

function checkedUrl(value: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new InvalidArgumentError('Webhooks: url must be an absolute http: or https: URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidArgumentError('Webhooks: url must be an http: or https: URL');
  if (url.username !== '' || url.password !== '')
    throw new InvalidArgumentError('Webhooks: url must not carry credentials; deliveries are authenticated by their signature');
  return url;
}

function linkOf(inboxUrl: WebhooksOptions['inboxUrl']): ((id: string) => string) | undefined {
  if (inboxUrl === undefined) return undefined;
  if (typeof inboxUrl === 'function') return inboxUrl;
  const base = checkedUrl(inboxUrl);
  return (id) => {
    const link = new URL(base);
    link.searchParams.set('suspension', id);
    return link.toString();
  };
}

function warnWhenGivenUp(shownUrl: string): (failure: WebhookFailure) => void {
  return (failure) => {
    if (!failure.final) return;
    console.warn(
      `toolnexus-ts: webhook ${failure.event} for ${failure.grantId === undefined ? `suspension ${failure.suspensionId}` : `grant ${failure.grantId}`} to ${shownUrl} was given up: ${failure.reason}`,
    );
  };
}
