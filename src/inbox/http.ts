import type { IncomingMessage, ServerResponse } from 'node:http';
import { InboxBadRequestError, InboxBodyTooLargeError } from './errors';

/** A request as Express or Fastify may hand it over: Express adds `originalUrl`, `baseUrl` and maybe a parsed `body`. */
export type InboxRequest = IncomingMessage & { originalUrl?: string; baseUrl?: string; body?: unknown };

/** The value of one cookie, or `undefined` (first one wins, as browsers send the most specific first). */
export function cookieOf(request: IncomingMessage, name: string): string | undefined {
  const header = request.headers.cookie;
  if (typeof header !== 'string') return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * A body a framework already read and handed over as `request.body` (Express's `json()`,
 * `urlencoded()`, `text()`, `raw()`, Nest's defaults), or `undefined` when the stream is the
 * inbox's to read. A stream read by someone who kept nothing is a clear 400, never a hang.
 */
function parsedBody(request: InboxRequest): { value: unknown } | undefined {
  if (!request.readableEnded) return undefined;
  if (request.body === undefined) {
    throw new InboxBadRequestError(
      'the request body was read before the inbox saw it and not handed over as request.body: mount the inbox before that body parser (docs/operating.md, "Body parsers")',
    );
  }
  return { value: request.body };
}

/** What a body parser made of a body, as text: a string or bytes as they were. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/** The request body as text, at most `limit` bytes (counted as they arrive, so a huge body is never held whole). */
export async function readBody(request: InboxRequest, limit: number): Promise<string> {
  const parsed = parsedBody(request);
  if (parsed) {
    const text = textOf(parsed.value) ?? JSON.stringify(parsed.value);
    if (Buffer.byteLength(text) > limit) throw new InboxBodyTooLargeError(limit);
    return text;
  }
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new InboxBodyTooLargeError(limit);
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        request.resume(); // drain without keeping, so the 413 can be sent on a live socket
        reject(new InboxBodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}

function contentTypeOf(request: IncomingMessage): string {
  return (
    String(request.headers['content-type'] ?? '')
      .split(';')[0]
      ?.trim()
      .toLowerCase() ?? ''
  );
}

/** The body as a JSON object; anything else is a 400. `application/json` is required, which a cross-site form cannot send. */
export async function readJsonObject(request: InboxRequest, limit: number): Promise<Record<string, unknown>> {
  if (contentTypeOf(request) !== 'application/json') throw new InboxBadRequestError('send the body as application/json');
  const parsed = parsedBody(request);
  if (parsed && typeof parsed.value === 'object' && parsed.value !== null && !Buffer.isBuffer(parsed.value)) {
    // express.json() (or Nest's default parser) made the object already; the same checks apply.
    if (Buffer.byteLength(JSON.stringify(parsed.value)) > limit) throw new InboxBodyTooLargeError(limit);
    if (Array.isArray(parsed.value)) throw new InboxBadRequestError('the body must be a JSON object');
    return parsed.value as Record<string, unknown>;
  }
  const text = await readBody(request, limit);
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new InboxBadRequestError('the body is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InboxBadRequestError('the body must be a JSON object');
  return value as Record<string, unknown>;
}

/** A form as the inbox read it: its fields, and whether a body parser before the inbox had read it. */
export interface Form {
  fields: URLSearchParams;
  /** True when the fields came from `request.body` as a framework's parser left it. */
  preParsed: boolean;
}

/**
 * An `application/x-www-form-urlencoded` body as fields, read from the stream or taken from
 * what a body parser made of it: an object (`express.urlencoded()`, Nest's default), or text
 * or bytes (`express.text()`, `express.raw()`).
 */
export async function readForm(request: InboxRequest, limit: number): Promise<Form> {
  if (contentTypeOf(request) !== 'application/x-www-form-urlencoded')
    throw new InboxBadRequestError('send the form as application/x-www-form-urlencoded');
  const parsed = parsedBody(request);
  if (!parsed) return { fields: new URLSearchParams(await readBody(request, limit)), preParsed: false };
  const text = textOf(parsed.value);
  if (text !== undefined) {
    if (Buffer.byteLength(text) > limit) throw new InboxBodyTooLargeError(limit);
    return { fields: new URLSearchParams(text), preParsed: true };
  }
  const fields = new URLSearchParams();
  if (typeof parsed.value === 'object' && parsed.value !== null) {
    let size = 0;
    for (const [name, value] of Object.entries(parsed.value)) {
      // The inbox's forms have flat text fields only; what a parser nested (`a[b]=c`) is not one of them.
      for (const item of Array.isArray(value) ? (value as unknown[]) : [value]) {
        if (typeof item !== 'string') continue;
        size += Buffer.byteLength(name) + Buffer.byteLength(item) + 2;
        if (size > limit) throw new InboxBodyTooLargeError(limit);
        fields.append(name, item);
      }
    }
  }
  return { fields, preParsed: true };
}

/** Headers every inbox response carries: nothing cached, nothing sniffed, never framed. */
export function baseHeaders(response: ServerResponse): void {
  response.setHeader('cache-control', 'no-store');
  response.setHeader('x-content-type-options', 'nosniff');
  response.setHeader('x-frame-options', 'DENY');
  // same-origin, not no-referrer: with no-referrer the browser sends `Origin: null` on a form post, which the CSRF check refuses.
  response.setHeader('referrer-policy', 'same-origin');
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  baseHeaders(response);
  response.statusCode = status;
  response.setHeader('content-type', 'application/json; charset=utf-8');
  response.setHeader('content-length', Buffer.byteLength(text));
  response.end(text);
}

export function sendHtml(response: ServerResponse, status: number, html: string, csp: string): void {
  baseHeaders(response);
  response.statusCode = status;
  response.setHeader('content-type', 'text/html; charset=utf-8');
  response.setHeader('content-security-policy', csp);
  response.setHeader('content-length', Buffer.byteLength(html));
  response.end(html);
}

/** A `Set-Cookie` value scoped to the inbox's path: HttpOnly unless said, SameSite=Strict, Secure on HTTPS. */
export function cookie(
  name: string,
  value: string,
  path: string,
  secure: boolean,
  options: { httpOnly?: boolean; maxAge?: number } = {},
): string {
  const parts = [`${name}=${value}`, `Path=${path}`, 'SameSite=Strict'];
  if (options.httpOnly !== false) parts.push('HttpOnly');
  if (secure) parts.push('Secure');
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  return parts.join('; ');
}

/**
 * True when the request came over TLS: directly, or, with `trustProxy`, as the proxy in front
 * says (`X-Forwarded-Proto: https`, or `Forwarded: proto=https`; the first hop's word, the one
 * the client reached). Without `trustProxy` a proxy's word is not taken.
 */
export function isSecure(request: IncomingMessage, trustProxy = false): boolean {
  if ((request.socket as { encrypted?: boolean } | undefined)?.encrypted === true) return true;
  if (!trustProxy) return false;
  const proto = request.headers['x-forwarded-proto'];
  if (typeof proto === 'string') return proto.split(',')[0]?.trim().toLowerCase() === 'https';
  const forwarded = request.headers.forwarded;
  if (typeof forwarded === 'string') {
    const first = forwarded.split(',')[0] ?? '';
    return /(^|;)\s*proto="?https"?\s*(;|$)/i.test(first);
  }
  return false;
}
