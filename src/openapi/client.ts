import { Attempt, type AttemptErrors } from '../http/attempt';
import { NodeTransport } from '../http/node-transport';
import { Watchdog } from '../http/watchdog';
import { messageOf } from '../errors/message';

/** Headers that carry credentials by their nature: never sent on to another origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const MAX_REDIRECTS = 5;

/** One request of an HTTP tool. */
export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Lower-case names of headers that must not follow a redirect to another origin (those read from `${NAME}`). */
  secretNames: ReadonlySet<string>;
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
}

/** What came back: the status and the body, or why none did. */
export type HttpOutcome = { status: number; text: string } | { failed: string };

const ERRORS: AttemptErrors = {
  timeout: (ms) => new Error(`no answer within ${ms} ms`),
  network: (error) => new Error(`the request failed: ${messageOf(error)}`),
};

/**
 * The HTTP tools' client, on the models' HTTP layer (src/http): a keep-alive pool per origin,
 * the attempt's timeout on one watchdog, bodies read within a bound. Redirects are followed by
 * hand, at most five: credentials (and every header read from `${NAME}`) go only to the origin
 * they were written for.
 */
export class HttpToolClient {
  private readonly transports = new Map<string, NodeTransport>();
  private readonly watchdog = new Watchdog();

  async send(request: HttpRequest): Promise<HttpOutcome> {
    const origin = new URL(request.url).origin;
    let url = new URL(request.url);
    let method = request.method;
    let body = request.body;
    let headers = request.headers;
    for (let hop = 0; ; hop++) {
      const attempt = new Attempt(ERRORS, request.timeoutMs, 1, request.signal, this.watchdog);
      try {
        const reply = await this.transport(url).exchange(method, url.pathname + url.search, headers, body, attempt);
        const location = reply.isRedirect ? reply.headers.get('location') : null;
        if (location === null) {
          const text = await reply.text(request.maxResponseBytes);
          if (text === undefined) return { failed: `the response is larger than maxResponseBytes (${request.maxResponseBytes} bytes)` };
          return { status: reply.status, text };
        }
        await reply.discard();
        if (hop >= MAX_REDIRECTS) return { failed: `more than ${MAX_REDIRECTS} redirects` };
        const next = new URL(location, url);
        if (next.protocol !== 'http:' && next.protocol !== 'https:') return { failed: `a redirect to a ${next.protocol} URL` };
        // 303, and 301/302 after a POST, become a GET without a body, as browsers do.
        if (reply.status === 303 || ((reply.status === 301 || reply.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = withoutBodyHeaders(headers);
        }
        if (next.origin !== origin) headers = withoutCredentials(headers, request.secretNames);
        url = next;
      } catch (error) {
        if (attempt.aborted && request.signal?.aborted) throw request.signal.reason;
        return { failed: attempt.aborted ? `no answer within ${request.timeoutMs} ms` : messageOf(error) };
      } finally {
        attempt.dispose();
      }
    }
  }

  private transport(url: URL): NodeTransport {
    let transport = this.transports.get(url.origin);
    if (transport === undefined) {
      transport = new NodeTransport(url.origin);
      this.transports.set(url.origin, transport);
    }
    return transport;
  }
}

function withoutCredentials(headers: Record<string, string>, secretNames: ReadonlySet<string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase()) && !secretNames.has(name.toLowerCase())),
  );
}

function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !/^content-(type|length)$/i.test(name)));
}
