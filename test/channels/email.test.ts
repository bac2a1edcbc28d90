/**
 * E-mail approvals end to end (docs/channels.md, "E-mail"): a real SMTP server on 127.0.0.1
 * (`smtp-server`) receives what the channel sends through nodemailer, `mailparser` reads it, and
 * the inbox (a real node:http server over a SQLite file) takes the signed links. A 2-of-3
 * finance refund asked by finance:cy is mailed to ann and ben.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf } from 'toolnexus-ts';
import { createChannels, type Channels, type DeliveryEvent, type MailMessage } from 'toolnexus-ts/channels';
import { bearerTokens, createInbox, type InboxOptions } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import type { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { CARD_NUMBER, principalOf, refundCoordinator } from '../fixtures/channels/refund';
import { FakeClock } from '../fixtures/fake-clock';
import { smtpServer, type Received } from '../fixtures/channels/smtp';
import { listening } from '../fixtures/listen';

jest.setTimeout(60_000);

const SECRET = 'a-secret-of-at-least-thirty-two-bytes-for-tests';
const TOKENS = { 'finance:ann': 'ann-token-0123456789', 'finance:ben': 'ben-token-0123456789', 'finance:cy': 'cy-token-0123456789' };

let dir: string;
let closers: Array<() => Promise<void>>;
let clock: FakeClock;
let store: SqliteStore;
let coordinator: ResumeCoordinator;
let inboxUrl: string;
let mails: Received[];
let events: DeliveryEvent[];
let smtpPort: number;

/** A real SMTP server on `port` (0: any), collecting each mail into `mails`. */
function smtp(port = 0): Promise<number> {
  return smtpServer(mails, closers, port);
}

async function inbox(tickets: InboxOptions['tickets']): Promise<string> {
  const handler = createInbox({
    coordinator,
    authorize: bearerTokens(Object.entries(TOKENS).map(([id, token]) => ({ token, principal: { id } }))),
    basePath: '/inbox',
    tickets,
    clock: () => clock.now(),
  });
  closers.push(async () => handler.close());
  return `${await listening(createServer(handler), closers)}/inbox`;
}

async function channelsTo(port: number, url = inboxUrl, to = ['email:finance:ann', 'email:finance:ben']): Promise<Channels> {
  const channels = await createChannels({
    host: coordinator,
    email: {
      transport: { host: '127.0.0.1', port, secure: false, ignoreTLS: true },
      from: '"Approvals" <approvals@example.com>',
      addressOf: (id) => `${id.slice('finance:'.length)}@example.com`,
      inboxUrl: url,
      secret: SECRET,
    },
    principalOf,
    route: () => to,
    clock,
    onDelivery: (event) => events.push(event),
  });
  closers.push(() => channels.close());
  return channels;
}

beforeEach(async () => {
  closers = [];
  mails = [];
  events = [];
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-email-'));
  process.env.REFUND_LOG = join(dir, 'replays.log');
  writeFileSync(process.env.REFUND_LOG, '');
  clock = new FakeClock(Date.now());
  store = new SqliteStore({ filename: join(dir, 'email.db') });
  closers.push(() => store.close());
  coordinator = refundCoordinator(store);
  inboxUrl = await inbox({ secret: SECRET });
  smtpPort = await smtp();
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

async function refund(channels: Channels, tool = 'refund'): Promise<string> {
  const result = await coordinator.execute(tool, { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  return id;
}

function mailTo(name: string): Received {
  const mail = mails.find((m) => m.to.includes(`${name}@example.com`));
  if (!mail) throw new Error(`no mail to ${name}`);
  return mail;
}

function as(principal: keyof typeof TOKENS | undefined, init: RequestInit = {}): RequestInit {
  const headers = new Headers(init.headers);
  if (principal) headers.set('authorization', `Bearer ${TOKENS[principal]}`);
  return { ...init, headers, redirect: 'manual' };
}

function post(url: string, principal: keyof typeof TOKENS | undefined, form = ''): Promise<Response> {
  return fetch(url, as(principal, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form }));
}

function replays(): string[] {
  return readFileSync(process.env.REFUND_LOG!, 'utf8').split('\n').filter(Boolean);
}

it('mails each routed principal once: the redacted call, the prompt, who asked, the progress, a link per answer; never the card number', async () => {
  const channels = await channelsTo(smtpPort);
  const id = await refund(channels);
  expect(mails.map((m) => m.to).sort()).toEqual(['ann@example.com', 'ben@example.com']);
  const ann = mailTo('ann');
  expect(ann.text).toContain('Refund 25000 cents to ACME?');
  expect(ann.text).toContain('Asked by: finance:cy');
  expect(ann.text).toContain('0 of 2 (finance)');
  expect(ann.text).toContain('[redacted]');
  expect(ann.approve).toMatch(new RegExp(`^${inboxUrl}/tickets/[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));
  expect(ann.decline).toMatch(/\/tickets\//);
  expect(ann.approve).not.toBe(ann.decline);
  // The raw bytes, every part and header (quoted-printable's soft line breaks joined, base64 parts
  // decoded by the parser): the @Sensitive value is nowhere.
  for (const mail of mails) {
    expect(mail.raw.toString('latin1')).not.toContain(CARD_NUMBER);
    expect(mail.raw.toString('latin1').replace(/=\r?\n/g, '')).not.toContain(CARD_NUMBER);
    expect(mail.text).not.toContain(CARD_NUMBER);
    expect(mail.html).not.toContain(CARD_NUMBER);
  }
  expect(ann.html).toContain('[redacted]');
  // Sent once: another tick, another refresh and an approval change nothing for e-mail.
  await channels.deliver();
  await channels.refresh(id);
  expect(mails).toHaveLength(2);
  const deliveries = await store.deliveries.listDeliveries({ callId: id });
  expect(deliveries.map((d) => [d.target, d.done, d.platform])).toEqual(
    expect.arrayContaining([
      ['email:finance:ann', true, 'email'],
      ['email:finance:ben', true, 'email'],
    ]),
  );
  expect(JSON.stringify(deliveries)).not.toContain('/tickets/');
  expect(events.map((e) => e.type)).toEqual(['posted', 'posted']);
});

it('a GET of a link shows the request and changes nothing; the link approves once, the replay runs once', async () => {
  const channels = await channelsTo(smtpPort);
  const id = await refund(channels);
  const ann = mailTo('ann');
  const before = await store.get(id);
  for (let i = 0; i < 2; i++) {
    const page = await fetch(ann.approve, as('finance:ann'));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Approve this request?');
    expect(html).toContain('Refund 25000 cents to ACME?');
    expect(html).not.toContain(CARD_NUMBER);
  }
  expect(await store.get(id)).toEqual(before);

  const first = await post(ann.approve, 'finance:ann');
  expect(first.status).toBe(200);
  expect(await first.text()).toContain('waits for the others');
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  // The same link again: refused, nothing more recorded.
  const again = await post(ann.approve, 'finance:ann');
  expect(again.status).toBe(409);
  expect(await again.text()).toContain('You already answered this request');
  // ann's decline link after her approval: used too.
  expect((await post(ann.decline, 'finance:ann')).status).toBe(409);
  const signed = await store.get(id);
  expect(signed?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);

  const ben = mailTo('ben');
  expect((await post(ben.approve, 'finance:ben')).status).toBe(200);
  const settled = await store.get(id);
  expect(settled?.status).toBe('resolved');
  expect(replays()).toHaveLength(1);
  expect(replays()[0]).toContain('finance:ann,finance:ben');
  // Both links once the call settled: a clear page, and the call as it was.
  const late = await post(ben.approve, 'finance:ben');
  expect(late.status).toBe(409);
  expect(await late.text()).toContain('already answered');
  expect((await fetch(ben.decline, as('finance:ben'))).status).toBe(409);
  expect(await store.get(id)).toEqual(settled);
  expect(replays()).toHaveLength(1);
});

it('refuses a link presented by another signed-in principal, or by nobody signed in, and changes nothing', async () => {
  const channels = await channelsTo(smtpPort);
  const id = await refund(channels);
  const ann = mailTo('ann');
  const before = await store.get(id);
  const forwarded = await post(ann.approve, 'finance:ben');
  expect(forwarded.status).toBe(403);
  expect(await forwarded.text()).toContain('sent to someone else');
  expect((await fetch(ann.approve, as('finance:ben'))).status).toBe(403);
  const anonymous = await post(ann.approve, undefined);
  expect(anonymous.status).toBe(401);
  expect(await anonymous.text()).toContain('Sign in to the inbox as finance:ann');
  expect((await fetch(ann.approve, as(undefined))).status).toBe(401);
  expect(await store.get(id)).toEqual(before);
});

it("the requester's own link is refused by the answer policy (separation of duties), and changes nothing", async () => {
  const channels = await channelsTo(smtpPort, inboxUrl, ['email:finance:cy']);
  const id = await refund(channels);
  const before = await store.get(id);
  const own = await post(mailTo('cy').approve, 'finance:cy');
  expect(own.status).toBe(403);
  expect(await own.text()).toContain('You may not answer this request');
  expect(await store.get(id)).toEqual(before);
});

it("a link never outlives its request: it expires with the request's deadline", async () => {
  const channels = await channelsTo(smtpPort);
  const id = await refund(channels, 'refund_soon');
  const deadline = (await store.get(id))?.request.expiresAt;
  expect(deadline).toBeDefined();
  const ann = mailTo('ann');
  expect(ann.text).toContain(`work until ${new Date(Date.parse(deadline!)).toISOString()}`);
  const before = await store.get(id);
  clock.advance(Date.parse(deadline!) - clock.now() + 1000);
  const late = await post(ann.approve, 'finance:ann');
  expect(late.status).toBe(410);
  expect(await store.get(id)).toEqual(before);
});

it('refuses a tampered link, one signed with another secret, and an expired one', async () => {
  const channels = await channelsTo(smtpPort);
  const id = await refund(channels);
  const ann = mailTo('ann');
  const before = await store.get(id);
  const token = ann.approve.slice(ann.approve.lastIndexOf('/') + 1);
  const [payload, mac] = token.split('.') as [string, string];
  // The payload says decline instead of approve, the signature kept: it no longer holds.
  const changed = Buffer.from(Buffer.from(payload, 'base64url').toString('utf8').replace('"approve"', '"decline"')).toString('base64url');
  const flipped = `${mac.slice(0, 10)}${mac[10] === 'A' ? 'B' : 'A'}${mac.slice(11)}`;
  for (const bad of [`${changed}.${mac}`, `${payload}.${flipped}`, `${payload}.`, 'x'.repeat(3000), '%zz', `${payload}/${mac}`]) {
    const response = await post(`${inboxUrl}/tickets/${bad}`, 'finance:ann');
    expect([bad.slice(0, 20), response.status]).toEqual([bad.slice(0, 20), 400]);
  }
  expect((await post(`${inboxUrl}/tickets/${changed}.${mac}`, 'finance:ann')).status).toBe(400);
  expect(await (await fetch(`${inboxUrl}/tickets/${payload}.${flipped}`, as('finance:ann'))).text()).toContain('not valid');

  // The same link verified by an inbox with another secret.
  const other = await inbox({ secret: 'another-secret-of-at-least-thirty-two-bytes' });
  expect((await post(`${other}/tickets/${token}`, 'finance:ann')).status).toBe(400);

  // 72 hours and a minute later: expired.
  clock.advance(72 * 3600_000 + 60_000);
  const expired = await post(ann.approve, 'finance:ann');
  expect(expired.status).toBe(410);
  expect(await expired.text()).toContain('expired');
  expect(await store.get(id)).toEqual(before);
});

it('a delivery that fails while the SMTP server is down is tried again with backoff and sent once', async () => {
  // A port nothing listens on, for now.
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const channels = await channelsTo(port);
  const id = await refund(channels);
  expect(mails).toHaveLength(0);
  const failed = events.filter((e) => e.type === 'failed');
  expect(failed).toHaveLength(2);
  expect(failed[0]?.retryAt).toBe(new Date(clock.now() + 1000).toISOString());
  expect(JSON.stringify(events)).not.toContain(CARD_NUMBER);
  // Not due yet: nothing is tried.
  await channels.deliver();
  expect(events.filter((e) => e.type === 'failed')).toHaveLength(2);

  await smtp(port);
  clock.advance(1000);
  const report = await channels.deliver();
  expect(report.worked).toBe(2);
  expect(mails.map((m) => m.to).sort()).toEqual(['ann@example.com', 'ben@example.com']);
  clock.advance(600_000);
  await channels.deliver();
  await channels.refresh(id);
  expect(mails).toHaveLength(2);
  expect((await store.deliveries.listDeliveries({ callId: id })).every((d) => d.done && d.attempts === 0)).toBe(true);
});

it("with signIn 'link-is-credential' the link answers without a sign-in, through the page's CSRF-checked form", async () => {
  const open = await inbox({ secret: SECRET, signIn: 'link-is-credential' });
  const channels = await channelsTo(smtpPort, open);
  const id = await refund(channels);
  const ann = mailTo('ann');
  const page = await fetch(ann.approve, { redirect: 'manual' });
  expect(page.status).toBe(200);
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  expect(cookie).toMatch(/^toolnexus_inbox_csrf=/);
  // Without the page's token (another site's form): refused.
  const forged = await fetch(ann.approve, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: 'comment=x',
    redirect: 'manual',
  });
  expect(forged.status).toBe(403);
  expect((await store.get(id))?.signatures ?? []).toEqual([]);
  // Signed in as someone else: still refused.
  expect((await post(ann.approve, 'finance:ben')).status).toBe(403);
  const answered = await fetch(ann.approve, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: `_csrf=${encodeURIComponent(csrf)}&comment=${encodeURIComponent('fine by me')}`,
    redirect: 'manual',
  });
  expect(answered.status).toBe(200);
  const call = await store.get(id);
  expect(call?.signatures?.map((s) => [s.by.id, s.comment])).toEqual([['finance:ann', 'fine by me']]);
});

it("a transport of the host's own (anything with sendMail) is used as it is, without nodemailer", async () => {
  const sent: MailMessage[] = [];
  const channels = await createChannels({
    host: coordinator,
    email: {
      transport: { sendMail: async (message: MailMessage) => (sent.push(message), { messageId: message.messageId }) },
      from: 'approvals@example.com',
      addressOf: (id) => (id === 'finance:ann' ? 'ann@example.com' : undefined),
      inboxUrl,
      secret: SECRET,
    },
    principalOf,
    route: () => ['email:finance:ann', 'email:finance:ben'],
    clock,
    onDelivery: (event) => events.push(event),
  });
  closers.push(() => channels.close());
  const id = await refund(channels);
  expect(sent.map((m) => m.to)).toEqual(['ann@example.com']);
  expect(sent[0]?.messageId).toMatch(/^<[0-9a-f]{32}@example\.com>$/);
  expect(JSON.stringify(sent)).not.toContain(CARD_NUMBER);
  // ben has no address: his delivery fails, told with its next try, and nothing is sent to him.
  const failed = events.find((e) => e.type === 'failed');
  expect(failed).toMatchObject({ target: 'email:finance:ben', error: 'no e-mail address for finance:ben' });
  const deliveries = await store.deliveries.listDeliveries({ callId: id });
  expect(deliveries.find((d) => d.target === 'email:finance:ann')?.message?.id).toBe(sent[0]?.messageId);
});

it('refuses a secret under 32 bytes at both ends', async () => {
  await expect(
    createChannels({
      host: coordinator,
      email: { transport: {}, from: 'a@example.com', addressOf: () => undefined, inboxUrl, secret: 'short' },
      principalOf,
      route: () => [],
    }),
  ).rejects.toThrow('at least 32 bytes');
  expect(() =>
    createInbox({
      coordinator,
      authorize: bearerTokens([{ token: TOKENS['finance:ann'], principal: { id: 'x' } }]),
      tickets: { secret: 'short' },
    }),
  ).toThrow('at least 32 bytes');
});
