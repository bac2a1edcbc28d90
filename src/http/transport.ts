import type { Attempt } from './attempt';

/** The response headers a sender reads (`retry-after`, `content-type`...), by lower-case name. */
export interface ReplyHeaders {
  get(name: string): string | null;
}

/**
 * A server's answer to one POST, as a {@link Transport} hands it over: the status, the
 * headers, and the body, read once in one of the ways below. Bodies come decoded from any
 * content coding (gzip, deflate, br), and every way of reading them is bounded.
 */
export interface Reply {
  readonly status: number;
  readonly statusText: string;
  readonly headers: ReplyHeaders;
  /** A redirect: a 3xx, or the opaque redirect a browser's `fetch` gives in manual mode. */
  readonly isRedirect: boolean;
  /** The whole body as text, or `undefined` once more than `limit` bytes came (the rest is dropped). */
  text(limit: number): Promise<string | undefined>;
  /** At most `limit` bytes of the body as text; the rest is dropped unread. */
  prefix(limit: number): Promise<string>;
  /** The body's bytes as they come, for `readSse`. Ending the reading early releases the connection. */
  chunks(): ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;
  /** Releases a body that will not be read. */
  discard(): Promise<void>;
}

/**
 * How a model's POSTs reach its provider, and the webhooks' their receiver: the built-in
 * node:http(s) client, or a `fetch` (a user's, docs/agents.md, "HTTP"; the platform's for
 * webhooks). One transport per endpoint URL. `send` cancels its
 * request when the attempt is abandoned (`Attempt.onAbort`), and rejects with
 * {@link RequestRefused} for a request the client refuses before sending it.
 */
export interface Transport {
  send(headers: Readonly<Record<string, string>>, body: string, attempt: Attempt): Promise<Reply>;
}

/**
 * The HTTP client refused the request locally (an invalid header value or URL): it will be
 * refused again on every retry. `detail` says what was refused, never the value.
 */
export class RequestRefused extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'RequestRefused';
  }
}

/** What was refused, without the value: the client's own message quotes it (a header value is usually a key). */
export function refusalDetail(error: unknown): string {
  const raw = (error as { message?: unknown } | null)?.message;
  const message = typeof raw === 'string' ? raw : '';
  if (/header/i.test(message))
    return 'the HTTP client refused a header value (a control character, CR, LF, NUL or non-ASCII character in a key or header)';
  if (/url/i.test(message)) return 'the HTTP client refused the URL';
  return 'the HTTP client refused the request before sending it';
}
