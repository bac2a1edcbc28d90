import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { InvalidArgumentError } from '../errors';
import type { Principal } from '../suspension/audit';

/**
 * Who is asking: a principal, or `undefined`/`null` to refuse (401). Read whatever the host
 * trusts: a bearer token, a session cookie, headers set by an authenticating proxy.
 * A thrown error is a 500 and its message is not sent.
 */
export type Authorize = (request: IncomingMessage) => Principal | undefined | null | Promise<Principal | undefined | null>;

/** One accepted token and the principal it signs in. */
export interface BearerTokenEntry {
  token: string;
  principal: Principal;
}

/** The cookie a signed-in browser carries: the random id of a session the inbox keeps server-side, never the token. */
export const SESSION_COOKIE = 'toolnexus_inbox_session';
const CREDENTIAL_LABEL = 'toolnexus-inbox-session/1';
const MIN_TOKEN_LENGTH = 16;

/**
 * Static bearer tokens, the simple case of {@link Authorize}: `Authorization: Bearer <token>`
 * from scripts, and a sign-in form on the page that starts a server-side session (an HttpOnly,
 * SameSite=Strict cookie holding a random session id; the token is never sent back). Every comparison
 * is constant-time over SHA-256 digests and checks every entry; tokens are never logged,
 * put in an error message or echoed.
 */
export class BearerTokens {
  private readonly entries: ReadonlyArray<{ digest: Buffer; session: Buffer; principal: Principal }>;

  constructor(entries: readonly BearerTokenEntry[]) {
    if (!Array.isArray(entries) || entries.length === 0)
      throw new InvalidArgumentError('bearerTokens needs at least one { token, principal }');
    this.entries = (entries as readonly BearerTokenEntry[]).map((entry, index) => {
      if (typeof entry?.token !== 'string' || entry.token.length < MIN_TOKEN_LENGTH) {
        throw new InvalidArgumentError(`bearer token #${index + 1} must be a string of at least ${MIN_TOKEN_LENGTH} characters`);
      }
      if (typeof entry.principal?.id !== 'string' || entry.principal.id === '') {
        throw new InvalidArgumentError(`bearer token #${index + 1} needs a principal with a non-empty id`);
      }
      return { digest: digest(entry.token), session: sessionDigest(entry.token), principal: { ...entry.principal } };
    });
  }

  /**
   * The principal of the request's `Authorization: Bearer` token, or `undefined`. A browser's
   * session cookie is the inbox's to check (its sessions are server-side, see createInbox).
   */
  readonly authorize: Authorize = (request) => {
    const header = request.headers.authorization;
    if (typeof header === 'string' && /^bearer\s/i.test(header)) return this.byToken(header.slice(7).trim());
    return undefined;
  };

  /** The principal a token signs in, or `undefined`. */
  byToken(token: string): Principal | undefined {
    return this.match(digest(token), 'digest');
  }

  /** What a session records of the token that signed it in (an HMAC of it), or `undefined` when the token signs nobody in. */
  credentialFor(token: string): string | undefined {
    return this.byToken(token) === undefined ? undefined : sessionDigest(token).toString('utf8');
  }

  /** The principal of a session's credential while its token is still accepted, or `undefined`. */
  byCredential(credential: string): Principal | undefined {
    return this.match(Buffer.from(credential, 'utf8'), 'session');
  }

  private match(candidate: Buffer, field: 'digest' | 'session'): Principal | undefined {
    let found: Principal | undefined;
    // Every entry is compared, so the time taken does not tell which one matched or how many there are.
    for (const entry of this.entries) {
      const expected = entry[field];
      const same = candidate.length === expected.length && timingSafeEqual(candidate, expected);
      if (same && found === undefined) found = entry.principal;
    }
    return found === undefined ? undefined : { ...found };
  }
}

/** One token for one principal (default `{ id: 'token' }`): `authorize: bearerToken(process.env.INBOX_TOKEN)`. */
export function bearerToken(token: string | undefined, principal: Principal = { id: 'token', name: 'token holder' }): BearerTokens {
  if (token === undefined) throw new InvalidArgumentError('bearerToken needs a token (is the environment variable set?)');
  return new BearerTokens([{ token, principal }]);
}

/** Several tokens, each signing in its own principal. */
export function bearerTokens(entries: readonly BearerTokenEntry[]): BearerTokens {
  return new BearerTokens(entries);
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** base64url of HMAC-SHA256 keyed by the token: as strong as the token, but not the token. */
function sessionDigest(token: string): Buffer {
  return Buffer.from(createHmac('sha256', token).update(CREDENTIAL_LABEL).digest('base64url'), 'utf8');
}

/** The principal of a local-only inbox. */
export const LOCAL_PRINCIPAL: Principal = { id: 'local', name: 'local user' };

const LOOPBACK_HOSTS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d{1,5})?$/i;

/**
 * Why a request may not use a local-only inbox, or `undefined`. It must come over loopback,
 * not through a proxy (which would make a remote request look local), and name a loopback
 * host (so a DNS-rebinding page on another name cannot reach it).
 */
export function localOnlyProblem(request: IncomingMessage): string | undefined {
  const address = request.socket?.remoteAddress ?? '';
  const loopback = address === '::1' || /^(::ffff:)?127\./.test(address);
  if (!loopback) return 'this inbox answers loopback requests only (authorize: "none-local-only")';
  if (request.headers['x-forwarded-for'] !== undefined || request.headers.forwarded !== undefined) {
    return 'this inbox answers local requests only, and this one came through a proxy (authorize: "none-local-only")';
  }
  const host = request.headers.host ?? '';
  if (!LOOPBACK_HOSTS.test(host)) return 'this inbox answers requests for a loopback host name only (authorize: "none-local-only")';
  return undefined;
}
