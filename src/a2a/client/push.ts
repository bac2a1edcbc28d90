import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { systemClock, type Clock } from '../../timing/clock';
import { httpUrlOf } from '../../http/settings';

/** Options of {@link a2aPushReceiver}. */
export interface A2APushReceiverOptions {
  /** The public URL the host serves {@link A2APushReceiver.handler} at, as remote agents reach it. */
  url: string;
  /** The largest notification body read, in bytes. Default 64 KiB; a larger one is refused with 413. */
  maxBodyBytes?: number;
  /** Where the waits take their time. Default the system clock. */
  clock?: Clock;
}

/**
 * Where remote A2A agents tell this process of their tasks (docs/a2a.md, "Push instead of
 * polling"): give it to `a2aAgentTool({ push })` and mount its `handler` at its `url`. Each call
 * of the tool registers a token of its own; a notification carrying a token no call is waiting on
 * is answered 404 (the agent stops retrying it). A notification only wakes the call, which then
 * reads the task from the agent: its body is never trusted.
 */
export interface A2APushReceiver {
  readonly url: string;
  /** The route (node:http, Express): POST only. */
  handler(request: IncomingMessage, response: ServerResponse): void;
  /** A call's wait: its token, and a wait that ends at a notification for it, after `ms`, or when `signal` aborts. */
  watch(): A2APushWatch;
}

/** One call's registration with the receiver. */
export interface A2APushWatch {
  readonly token: string;
  wait(ms: number, signal: AbortSignal): Promise<void>;
  close(): void;
}

/** Makes a receiver of push notifications for `a2aAgentTool` (docs/a2a.md, "Push instead of polling"). */
export function a2aPushReceiver(options: A2APushReceiverOptions): A2APushReceiver {
  const parsed = httpUrlOf(
    options?.url,
    'a2aPushReceiver needs url: the public http(s) URL its handler is served at',
    'a2aPushReceiver: url must be http or https',
  );
  const limit = options.maxBodyBytes ?? 64 * 1024;
  const clock = options.clock ?? systemClock;
  /** Each waiting call's wake, by its token; a notification before a wait is kept as `told`. */
  const calls = new Map<string, { wake?: () => void; told: boolean }>();
  const find = (token: string): string | undefined => {
    const given = Buffer.from(token);
    for (const known of calls.keys()) {
      const candidate = Buffer.from(known);
      if (candidate.length === given.length && timingSafeEqual(candidate, given)) return known;
    }
    return undefined;
  };
  return {
    url: parsed.href,
    handler(request, response) {
      if (request.method !== 'POST') {
        response.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      let size = 0;
      request.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) request.destroy();
      });
      request.on('close', () => {
        if (response.headersSent) return;
        if (size > limit) {
          response.writeHead(413, { connection: 'close' }).end();
          return;
        }
        const header = request.headers['x-a2a-notification-token'];
        const known = typeof header === 'string' ? find(header) : undefined;
        const call = known === undefined ? undefined : calls.get(known);
        if (!call) {
          response.writeHead(404).end();
          return;
        }
        call.told = true;
        call.wake?.();
        response.writeHead(200).end();
      });
      request.resume();
    },
    watch() {
      const token = randomBytes(32).toString('base64url');
      const call: { wake?: () => void; told: boolean } = { told: false };
      calls.set(token, call);
      return {
        token,
        wait: (ms, signal) =>
          new Promise<void>((resolve) => {
            if (call.told || signal.aborted) {
              call.told = false;
              return resolve();
            }
            const done = () => {
              clock.clearTimeout(timer);
              signal.removeEventListener('abort', done);
              call.wake = undefined;
              call.told = false;
              resolve();
            };
            const timer = clock.setTimeout(done, ms);
            signal.addEventListener('abort', done, { once: true });
            call.wake = done;
          }),
        close: () => void calls.delete(token),
      };
    },
  };
}
