import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../errors';

/**
 * A **ticket**: the signed token in an e-mail's link that lets one principal give one answer
 * (approve or decline) to one request, until it expires (docs/channels.md, "E-mail"). The
 * channels entry signs it into the mail; the inbox verifies it on its confirmation page. It is
 * `<payload>.<mac>`, both base64url: the payload is JSON of the principal's id, the call's id,
 * the action, the expiry and a random nonce; the mac is HMAC-SHA256 of the payload under the
 * host's secret. Nothing of a ticket is stored: it is good while its signature holds, its
 * expiry is ahead and the call still waits for its principal (the inbox checks that).
 */
export interface Ticket {
  /** The principal the link was sent to, by id: only they may use it. */
  principal: string;
  /** The suspended call it answers. */
  callId: string;
  /** What it answers. */
  action: TicketAction;
  /** Epoch milliseconds: refused from then on. */
  expiresAt: number;
  /** Random, base64url: two links for the same answer never read alike. */
  nonce: string;
}

/** What a ticket answers. */
export type TicketAction = 'approve' | 'decline';

/** Why a ticket was refused: not a ticket at all, a signature that does not hold (changed or another secret), or past its expiry. */
export type TicketProblem = 'malformed' | 'forged' | 'expired';

/** The shortest secret a ticket is signed with, in bytes. */
export const MIN_TICKET_SECRET_BYTES = 32;
/** The longest principal or call id a ticket carries, in characters (and the whole ticket must fit {@link MAX_TICKET_LENGTH}). */
export const MAX_TICKET_ID_LENGTH = 512;
/** The longest token read: anything longer is refused before it is decoded. */
export const MAX_TICKET_LENGTH = 2048;

const LABEL = 'toolnexus-ticket/1.';
const TOKEN = /^([A-Za-z0-9_-]{1,2000})\.([A-Za-z0-9_-]{43})$/;

/** The secret as bytes, refused when shorter than {@link MIN_TICKET_SECRET_BYTES}. */
export function ticketKey(secret: string | Uint8Array, where: string): Buffer {
  const key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret instanceof Uint8Array ? Buffer.from(secret) : undefined;
  if (!key || key.length < MIN_TICKET_SECRET_BYTES)
    throw new InvalidArgumentError(
      `${where} needs a secret of at least ${MIN_TICKET_SECRET_BYTES} bytes (a string or bytes: randomBytes(32).toString('base64url'))`,
    );
  return key;
}

/** Signs a ticket for `ticket` (its nonce is made here): the token that goes into the link. */
export function signTicket(key: Buffer, ticket: Omit<Ticket, 'nonce'>): string {
  for (const [name, value] of [
    ['principal', ticket.principal],
    ['callId', ticket.callId],
  ] as const) {
    if (typeof value !== 'string' || value === '' || value.length > MAX_TICKET_ID_LENGTH)
      throw new InvalidArgumentError(`a ticket's ${name} must be 1 to ${MAX_TICKET_ID_LENGTH} characters`);
  }
  if (ticket.action !== 'approve' && ticket.action !== 'decline') throw new InvalidArgumentError('a ticket answers approve or decline');
  if (!Number.isSafeInteger(ticket.expiresAt)) throw new InvalidArgumentError("a ticket's expiresAt must be epoch milliseconds");
  const payload = Buffer.from(
    JSON.stringify({
      p: ticket.principal,
      c: ticket.callId,
      a: ticket.action,
      e: ticket.expiresAt,
      n: randomBytes(16).toString('base64url'),
    }),
    'utf8',
  ).toString('base64url');
  const token = `${payload}.${mac(key, payload).toString('base64url')}`;
  // Ids of many-byte characters can outgrow what the inbox reads: refused here rather than mailed unusable.
  if (token.length > MAX_TICKET_LENGTH)
    throw new InvalidArgumentError(`a ticket must fit in ${MAX_TICKET_LENGTH} characters; its ids are too long`);
  return token;
}

/**
 * The ticket a token carries, when its signature holds (compared in constant time) and it has
 * not expired at `now`; else why not. Bounded: a token longer than {@link MAX_TICKET_LENGTH} is
 * refused unread.
 */
export function verifyTicket(key: Buffer, token: string, now: number): { ticket: Ticket } | { problem: TicketProblem } {
  if (typeof token !== 'string' || token.length > MAX_TICKET_LENGTH) return { problem: 'malformed' };
  const match = TOKEN.exec(token);
  if (!match) return { problem: 'malformed' };
  const payload = match[1] as string;
  const sent = Buffer.from(match[2] as string, 'base64url');
  const expected = mac(key, payload);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return { problem: 'forged' };
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return { problem: 'malformed' };
  }
  const { p, c, a, e, n } = value ?? {};
  if (
    typeof p !== 'string' ||
    typeof c !== 'string' ||
    (a !== 'approve' && a !== 'decline') ||
    typeof e !== 'number' ||
    !Number.isSafeInteger(e) ||
    typeof n !== 'string'
  ) {
    return { problem: 'malformed' };
  }
  if (e <= now) return { problem: 'expired' };
  return { ticket: { principal: p, callId: c, action: a, expiresAt: e, nonce: n } };
}

function mac(key: Buffer, payload: string): Buffer {
  return createHmac('sha256', key).update(LABEL).update(payload).digest();
}
