import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import type { Attempt } from './attempt';
import { refusalDetail, RequestRefused, type Reply, type ReplyHeaders, type Transport } from './transport';

/**
 * The built-in transport: node:http(s) over a keep-alive pool of this endpoint's own.
 * Chosen over the platform `fetch` for cost: on Node 20 a `fetch` call builds WHATWG
 * Request, Response, Headers and stream objects and two transferable AbortSignals, which is
 * most of a model call's client CPU against a fast server (docs/performance.md, "Throughput").
 * Idle pooled sockets do not keep the process alive.
 */
/*
 * node:http, node:https and node:zlib are loaded when they are first needed (a model built
 * for an http: or https: URL, a compressed reply), not when the package is imported: node:https
 * alone costs tens of milliseconds of startup, and a process that only dispatches tools, or
 * talks to a model on loopback http, never needs it. Node caches each after the first load.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see above */
const http = (): typeof import('node:http') => require('node:http') as typeof import('node:http');
const https = (): typeof import('node:https') => require('node:https') as typeof import('node:https');
const zlib = (): typeof import('node:zlib') => require('node:zlib') as typeof import('node:zlib');
/* eslint-enable @typescript-eslint/no-require-imports -- the lazy loaders end here */

export class NodeTransport implements Transport {
  private readonly agent: HttpAgent;
  private readonly request: typeof import('node:http').request;
  private readonly target: RequestOptions;

  constructor(url: string) {
    const parsed = new URL(url);
    const secure = parsed.protocol === 'https:';
    const driver = secure ? https() : http();
    this.agent = new driver.Agent({ keepAlive: true });
    this.request = driver.request;
    this.target = {
      protocol: parsed.protocol,
      // A bracketed IPv6 literal is connected to without its brackets.
      hostname: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: parsed.port === '' ? undefined : Number(parsed.port),
      path: parsed.pathname + parsed.search,
      method: 'POST',
      agent: this.agent,
    };
  }

  /** The headers as sent, per headers object a model hands over (it keeps the same ones for every call). */
  private readonly sent = new WeakMap<Readonly<Record<string, string>>, Record<string, string>>();

  send(headers: Readonly<Record<string, string>>, body: string, attempt: Attempt): Promise<Reply> {
    let sent = this.sent.get(headers);
    if (sent === undefined) {
      sent = withUserAgent(headers);
      this.sent.set(headers, sent);
    }
    return this.sendOnce(sent, body, attempt, true, this.target.method as string, this.target.path as string);
  }

  /**
   * Any method to any path of this transport's origin, over the same keep-alive pool: the
   * HTTP tools' requests (`toolnexus-ts/openapi`). A body of `undefined` sends none. A stale
   * pooled socket is retried once only for a method that is safe to send again.
   */
  exchange(
    method: string,
    path: string,
    headers: Readonly<Record<string, string>>,
    body: string | undefined,
    attempt: Attempt,
  ): Promise<Reply> {
    const idempotent = method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || method === 'PUT' || method === 'DELETE';
    return this.sendOnce(withUserAgent(headers), body, attempt, idempotent, method, path);
  }

  private sendOnce(
    headers: Record<string, string>,
    body: string | undefined,
    attempt: Attempt,
    mayRetryStale: boolean,
    method: string,
    path: string,
  ): Promise<Reply> {
    return new Promise((resolve, reject) => {
      let request: ClientRequest;
      try {
        // Spelled out: a spread of the target plus `headers` cost more than the rest of this function.
        const { protocol, hostname, port, agent } = this.target;
        request = this.request({ protocol, hostname, port, path, method, agent, headers });
      } catch (error) {
        // Node validates header names and values before anything is sent.
        reject(new RequestRefused(refusalDetail(error)));
        return;
      }
      let answered = false;
      request.on('response', (response: IncomingMessage) => {
        answered = true;
        resolve(new NodeReply(response, request));
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (answered) return; // the body's reader sees it
        // A pooled socket the server had just closed: the request never reached it. Node's
        // documented remedy is to send again, once, on a fresh socket.
        if (mayRetryStale && request.reusedSocket && !attempt.aborted && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
          resolve(this.sendOnce(headers, body, attempt, false, method, path));
          return;
        }
        reject(error);
      });
      attempt.onAbort(() => request.destroy(new Error('the attempt was abandoned')));
      request.end(body);
    });
  }
}

/** Some gateways refuse a request without a user agent; the platform `fetch` sends one too. */
function withUserAgent(headers: Readonly<Record<string, string>>): Record<string, string> {
  const copy = { ...headers };
  for (const name of Object.keys(copy)) if (name.toLowerCase() === 'user-agent') return copy;
  copy['user-agent'] = 'toolnexus-ts';
  return copy;
}

/**
 * A reply's headers read from `rawHeaders` when asked. `IncomingMessage.headers` builds an
 * object of every header on first read, which cost more than the rest of reading the reply
 * (bench/agents profile); a reply is asked for two or three headers at most.
 */
class NodeReplyHeaders implements ReplyHeaders {
  constructor(private readonly raw: readonly string[]) {}

  get(name: string): string | null {
    const wanted = name.toLowerCase();
    let value: string | null = null;
    for (let i = 0; i + 1 < this.raw.length; i += 2) {
      const key = this.raw[i] as string;
      if (key.length !== wanted.length || key.toLowerCase() !== wanted) continue;
      // Repeated headers join with ", ", as Headers.get and IncomingMessage.headers do (set-cookie aside, never read here).
      value = value === null ? (this.raw[i + 1] as string) : `${value}, ${this.raw[i + 1] as string}`;
    }
    return value;
  }
}

class NodeReply implements Reply {
  readonly status: number;
  readonly statusText: string;
  readonly headers: ReplyHeaders;
  readonly isRedirect: boolean;

  constructor(
    private readonly response: IncomingMessage,
    private readonly request: ClientRequest,
  ) {
    this.status = response.statusCode ?? 0;
    this.statusText = response.statusMessage ?? '';
    this.headers = new NodeReplyHeaders(response.rawHeaders);
    this.isRedirect = this.status >= 300 && this.status < 400;
  }

  text(limit: number): Promise<string | undefined> {
    return this.collect(limit, true).then(({ bytes, over }) => (over ? undefined : bytes.toString('utf8')));
  }

  prefix(limit: number): Promise<string> {
    return this.collect(limit, false).then(({ bytes }) => bytes.toString('utf8'));
  }

  chunks(): AsyncIterable<Uint8Array> {
    return this.decoded();
  }

  async discard(): Promise<void> {
    this.destroy();
  }

  /**
   * Reads the body up to `limit` bytes. Past it, the connection is dropped (nothing more is
   * read) and the bytes so far are returned with `over` set, or cut to `limit` for a prefix.
   */
  private collect(limit: number, whole: boolean): Promise<{ bytes: Buffer; over: boolean }> {
    return new Promise((resolve, reject) => {
      const source = this.decoded();
      const chunks: Buffer[] = [];
      let total = 0;
      let settled = false;
      const finish = (over: boolean): void => {
        if (settled) return;
        settled = true;
        const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
        resolve({ bytes: whole || bytes.length <= limit ? bytes : bytes.subarray(0, limit), over });
      };
      source.on('data', (chunk: Buffer) => {
        if (settled) return;
        total += chunk.length;
        chunks.push(chunk);
        if (total > limit || (!whole && total >= limit)) {
          finish(total > limit);
          this.destroy();
        }
      });
      source.on('end', () => finish(false));
      source.on('error', (error) => {
        if (settled) return;
        settled = true;
        reject(error);
      });
      // A connection that closes before the body ends, with no error of its own.
      source.on('close', () => {
        if (settled) return;
        settled = true;
        reject(Object.assign(new Error('the connection closed before the body ended'), { code: 'ECONNRESET' }));
      });
    });
  }

  private stream: Readable | undefined;

  /** The body decoded from its content coding: gzip, deflate and br as `fetch` decodes them; anything else as sent. */
  private decoded(): Readable {
    if (this.stream) return this.stream;
    const coding = (this.headers.get('content-encoding') ?? '').trim().toLowerCase();
    const decoder =
      coding === 'gzip' || coding === 'x-gzip'
        ? zlib().createGunzip()
        : coding === 'deflate'
          ? zlib().createInflate()
          : coding === 'br'
            ? zlib().createBrotliDecompress()
            : undefined;
    // pipeline destroys both ends when either fails or is destroyed, so an early exit releases the socket.
    this.stream = decoder ? pipeline(this.response, decoder, () => undefined) : this.response;
    return this.stream;
  }

  private destroy(): void {
    this.stream?.destroy();
    this.response.destroy();
    this.request.destroy();
  }
}
