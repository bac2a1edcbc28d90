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
 * The request body as text, at most `limit` bytes (counted as they arrive, so a huge body is
 * never held whole). A body a framework already parsed (`express.json()`) is taken as it is.
 */
export async function readBody(request: InboxRequest, limit: number): Promise<string> {
  if (request.readableEnded && request.body !== undefined) {
    const text = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
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

/** The body as a JSON object; anything else is a 400. `application/json` is required, which a cross-site form cannot send. */
export async function readJsonObject(request: InboxRequest, limit: number): Promise<Record<string, unknown>> {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type !== 'application/json') throw new InboxBadRequestError('send the body as application/json');
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

/** An `application/x-www-form-urlencoded` body as fields. */
export async function readForm(request: InboxRequest, limit: number): Promise<URLSearchParams> {
  const type = String(request.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new InboxBadRequestError('send the form as application/x-www-form-urlencoded');
  return new URLSearchParams(await readBody(request, limit));
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

/** True when the request came over TLS (directly; a proxy's word is not taken). */
export function isSecure(request: IncomingMessage): boolean {
  return (request.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
}
