/**
 * Tickets, the signed tokens of e-mail approvals' links (docs/channels.md, "The links' rules"):
 * what verifies, and every way one is refused.
 */
import { createHmac } from 'node:crypto';
import { InvalidArgumentError } from 'toolnexus-ts';
import { MAX_TICKET_LENGTH, signTicket, ticketKey, verifyTicket } from '../../src/tickets/ticket';

const key = ticketKey('k'.repeat(32), 'test');
const NOW = Date.UTC(2030, 0, 1);
const base = { principal: 'finance:ann', callId: 'call-1', action: 'approve' as const, expiresAt: NOW + 60_000 };

it('verifies what it signed, with a fresh nonce each time', () => {
  const a = signTicket(key, base);
  const b = signTicket(key, base);
  expect(a).not.toBe(b);
  const verified = verifyTicket(key, a, NOW);
  if (!('ticket' in verified)) throw new Error(`refused: ${verified.problem}`);
  const { nonce, ...rest } = verified.ticket;
  expect(rest).toEqual(base);
  expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
  expect(a).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
});

it('refuses a changed payload, another secret, an expired ticket and anything malformed', () => {
  const token = signTicket(key, base);
  const [payload, mac] = token.split('.') as [string, string];
  const declined = Buffer.from(Buffer.from(payload, 'base64url').toString().replace('approve', 'decline')).toString('base64url');
  expect(verifyTicket(key, `${declined}.${mac}`, NOW)).toEqual({ problem: 'forged' });
  expect(verifyTicket(ticketKey('o'.repeat(32), 'test'), token, NOW)).toEqual({ problem: 'forged' });
  expect(verifyTicket(key, token, base.expiresAt)).toEqual({ problem: 'expired' });
  for (const bad of ['', 'abc', `${payload}.`, `${payload}.${mac}x`, `${payload}/${mac}`, 'a'.repeat(MAX_TICKET_LENGTH + 1)]) {
    expect(verifyTicket(key, bad, NOW)).toEqual({ problem: 'malformed' });
  }
  // Signed with the right key but not a ticket's payload: refused, not trusted.
  const odd = Buffer.from(JSON.stringify({ p: 1, c: 'x', a: 'approve', e: NOW + 1, n: 'n' })).toString('base64url');
  const oddMac = createHmac('sha256', key).update('toolnexus-ticket/1.').update(odd).digest('base64url');
  expect(verifyTicket(key, `${odd}.${oddMac}`, NOW)).toEqual({ problem: 'malformed' });
});

it('refuses a short secret and ids it cannot bound', () => {
  expect(() => ticketKey('short', 'test')).toThrow(InvalidArgumentError);
  expect(() => ticketKey(new Uint8Array(31), 'test')).toThrow('at least 32 bytes');
  expect(() => signTicket(key, { ...base, principal: 'x'.repeat(513) })).toThrow('1 to 512 characters');
  expect(() => signTicket(key, { ...base, callId: '' })).toThrow(InvalidArgumentError);
  expect(() => signTicket(key, { ...base, action: 'edit' as never })).toThrow('approve or decline');
  // The longest plain ids fit the bound the inbox reads; ids of many-byte characters that would not are refused.
  const longest = signTicket(key, { ...base, principal: 'p'.repeat(512), callId: 'c'.repeat(512) });
  expect(verifyTicket(key, longest, NOW)).toHaveProperty('ticket');
  expect(() => signTicket(key, { ...base, principal: '\u{10FFFF}'.repeat(256), callId: 'c'.repeat(512) })).toThrow('too long');
});
