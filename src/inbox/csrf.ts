import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { InboxCsrfError } from './errors';
import { cookieOf } from './http';

/** The double-submit cookie: a random value the page also carries, which another site can neither read nor set. */
export const CSRF_COOKIE = 'toolnexus_inbox_csrf';
/** The header the page's script sends the token in. */
export const CSRF_HEADER = 'x-toolnexus-csrf';
/** The field a plain HTML form (the sign-in form) sends it in. */
export const CSRF_FIELD = '_csrf';

const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The request's CSRF cookie when well-formed, or a new token to set. */
export function csrfTokenFor(request: IncomingMessage): { token: string; fresh: boolean } {
  const existing = cookieOf(request, CSRF_COOKIE);
  if (existing !== undefined && TOKEN.test(existing)) return { token: existing, fresh: false };
  return { token: randomBytes(32).toString('base64url'), fresh: true };
}

/**
 * Refuses a state-changing request that another site could have made with this browser's
 * cookies. A request with `Authorization: Bearer` is exempt: browsers never attach one on
 * their own. Every other one must
 * - not be marked cross-site by the browser (`Sec-Fetch-Site`),
 * - come from this origin when it names one (`Origin` against `Host`),
 * - carry the page's token (`x-toolnexus-csrf` header, or `_csrf` form field) equal to its cookie.
 */
export function checkCsrf(request: IncomingMessage, formToken?: string | null): void {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && /^bearer\s/i.test(authorization)) return;
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') throw new InboxCsrfError(`a ${site} request`);
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') {
    let host: string;
    try {
      host = new URL(origin).host;
    } catch {
      throw new InboxCsrfError('an unreadable Origin');
    }
    if (host !== request.headers.host) throw new InboxCsrfError('a request from another origin');
  } else if (origin === 'null') {
    throw new InboxCsrfError('a request from an opaque origin');
  }
  const cookie = cookieOf(request, CSRF_COOKIE);
  const header = request.headers[CSRF_HEADER];
  const sent = typeof header === 'string' ? header : (formToken ?? undefined);
  if (cookie === undefined || sent === undefined) throw new InboxCsrfError('no CSRF token');
  const a = Buffer.from(cookie, 'utf8');
  const b = Buffer.from(sent, 'utf8');
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw new InboxCsrfError('a CSRF token that does not match');
}
