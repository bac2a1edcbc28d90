/**
 * E-mail approvals on PostgreSQL (docs/channels.md, "E-mail"): the same outbox rows and the same
 * links as on SQLite (test/channels/email.test.ts), over the suite's PostgreSQL: each principal
 * is mailed once through a real SMTP server, a link approves once, its second use is refused.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf } from 'toolnexus-ts';
import { createChannels } from 'toolnexus-ts/channels';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { CARD_NUMBER, principalOf, refundCoordinator } from '../fixtures/channels/refund';
import { smtpServer, type Received } from '../fixtures/channels/smtp';
import { listening } from '../fixtures/listen';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

jest.setTimeout(90_000);

const SECRET = 'a-secret-of-at-least-thirty-two-bytes-for-tests';
const TOKENS: Record<string, string> = { 'finance:ann': 'ann-token-0123456789', 'finance:ben': 'ben-token-0123456789' };

it('mails ann and ben once; their links settle the refund once; a link used again is refused', async () => {
  const closers: Array<() => Promise<void>> = [];
  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-email-pg-'));
  const url = await postgresUrl();
  const schema = uniqueSchema('email');
  try {
    process.env.REFUND_LOG = join(dir, 'replays.log');
    writeFileSync(process.env.REFUND_LOG, '');
    const store = new PostgresStore({ connectionString: url, schema });
    closers.push(() => store.close());
    await store.ensureSchema();
    const coordinator = refundCoordinator(store);
    const inbox = createInbox({
      coordinator,
      authorize: bearerTokens(Object.entries(TOKENS).map(([id, token]) => ({ token, principal: { id } }))),
      basePath: '/inbox',
      tickets: { secret: SECRET },
    });
    closers.push(async () => inbox.close());
    const inboxUrl = `${await listening(createServer(inbox), closers)}/inbox`;
    const mails: Received[] = [];
    const port = await smtpServer(mails, closers);
    const channels = await createChannels({
      host: coordinator,
      email: {
        transport: { host: '127.0.0.1', port, secure: false, ignoreTLS: true },
        from: 'approvals@example.com',
        addressOf: (id) => `${id.slice('finance:'.length)}@example.com`,
        inboxUrl,
        secret: SECRET,
      },
      principalOf,
      route: () => ['email:finance:ann', 'email:finance:ben'],
    });
    closers.push(() => channels.close());

    const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
      principal: { id: 'finance:cy' },
    });
    const id = pendingOf(result)!.id;
    await channels.refresh(id);
    await channels.deliver();
    expect(mails.map((m) => m.to).sort()).toEqual(['ann@example.com', 'ben@example.com']);
    for (const mail of mails) expect(mail.raw.toString('latin1')).not.toContain(CARD_NUMBER);
    expect((await store.deliveries.listDeliveries({ callId: id })).every((d) => d.done && d.platform === 'email')).toBe(true);

    const answer = (mail: Received, principal: string) =>
      fetch(mail.approve, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKENS[principal]}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: '',
      });
    const ann = mails.find((m) => m.to === 'ann@example.com')!;
    const ben = mails.find((m) => m.to === 'ben@example.com')!;
    expect((await answer(ann, 'finance:ann')).status).toBe(200);
    expect((await answer(ann, 'finance:ann')).status).toBe(409);
    expect((await answer(ben, 'finance:ben')).status).toBe(200);
    expect((await answer(ben, 'finance:ben')).status).toBe(409);
    expect((await store.get(id))?.status).toBe('resolved');
    expect(readFileSync(process.env.REFUND_LOG, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  } finally {
    for (const close of closers.reverse()) await close();
    await dropSchema(url, schema);
    rmSync(dir, { recursive: true, force: true });
  }
});
