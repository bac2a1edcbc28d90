/**
 * Webhook events of grants and expiry (docs/who-may-answer.md, "Audit"): `grant.given` and
 * `grant.revoked` carry the grant's id, tool, scope, subject, granter and dates and nothing
 * else; `suspension.expired` is sent when a sweep settles a call `expired` and when an answer's
 * claim finds it expired. Delivered to a real receiver on 127.0.0.1 and checked by signature.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { Webhooks, verifyWebhook, type WebhookEvent, type WebhookGrantPayload, type WebhookPayload } from 'toolnexus-ts/webhooks';
import { FakeClock } from '../fixtures/fake-clock';

const SECRET = 'whsec-grants-0123456789abcdef';
const HOUR = 3_600_000;

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let url: string;
const received: Received[] = [];
const hooks: Webhooks[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
});
afterEach(async () => {
  await Promise.all(hooks.splice(0).map((hook) => hook.close()));
  received.splice(0);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function webhooks(events: WebhookEvent[]): Webhooks {
  const hook = new Webhooks({ url, secret: SECRET, events });
  hooks.push(hook);
  return hook;
}

/** Every delivery received so far, each checked by its signature first, in the order they arrived. */
async function deliveries(hook: Webhooks): Promise<Array<WebhookPayload | WebhookGrantPayload>> {
  await hook.flush();
  return received.map(({ headers, body }) => {
    const check = { secret: SECRET, body, timestamp: headers['x-toolnexus-timestamp'] as string };
    expect(verifyWebhook({ ...check, signature: headers['x-toolnexus-signature'] as string })).toBe(true);
    expect(verifyWebhook({ ...check, secret: 'not-the-secret-0123456789', signature: headers['x-toolnexus-signature'] as string })).toBe(
      false,
    );
    const payload = JSON.parse(body) as WebhookPayload | WebhookGrantPayload;
    expect(headers['x-toolnexus-event']).toBe(payload.type);
    return payload;
  });
}

const refund = (clock: FakeClock) =>
  defineTool({
    name: 'refund',
    description: 'Refunds an order',
    inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
    run: (args, ctx) =>
      ctx?.answer
        ? success('refunded')
        : pending({ kind: 'approval', prompt: `Refund ${String(args.order)}?`, expiresAt: new Date(clock.now() + HOUR).toISOString() }),
  });

it('sends grant.given and grant.revoked with the grant’s own fields, and nothing for events not listed', async () => {
  const clock = new FakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
  const hook = webhooks(['grant.given', 'grant.revoked']);
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(refund(clock)),
    store: new MemoryStore({ clock }),
    clock,
    observers: [hook],
  });
  const grant = await coordinator.grant({
    by: { id: 'manager:ann', name: 'Ann' },
    tool: 'refund',
    scope: 'principal',
    subject: 'customer:rita',
    until: '2026-12-11T09:00:00.000Z',
  });
  // The grant settles a call it covers: suspension events are not listed, so none is sent.
  await coordinator.execute('refund', { order: 'o-1' }, undefined, { principal: { id: 'customer:rita' } });
  clock.advance(60_000);
  expect(await coordinator.revoke(grant.id)).toBe(true);
  expect(await coordinator.revoke(grant.id)).toBe(false); // revoked once, told once

  const [given, revoked, ...more] = await deliveries(hook);
  expect(more).toEqual([]);
  const shown = {
    id: grant.id,
    tool: 'refund',
    scope: 'principal',
    subject: 'customer:rita',
    by: { id: 'manager:ann', name: 'Ann' },
    createdAt: '2026-12-04T09:00:00.000Z',
    until: '2026-12-11T09:00:00.000Z',
  };
  expect(given).toEqual({ id: expect.any(String) as string, type: 'grant.given', occurredAt: '2026-12-04T09:00:00.000Z', grant: shown });
  expect(revoked).toEqual({
    id: expect.any(String) as string,
    type: 'grant.revoked',
    occurredAt: '2026-12-04T09:01:00.000Z',
    grant: { ...shown, revokedAt: '2026-12-04T09:01:00.000Z' },
  });
  expect(received[0]?.headers['x-toolnexus-delivery']).toBe(given?.id);
});

it('sends suspension.expired when a sweep settles a call expired, and when an answer’s claim finds it expired', async () => {
  const clock = new FakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
  const hook = webhooks(['suspension.expired']);
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(refund(clock)),
    store: new MemoryStore({ clock }),
    clock,
    observers: [hook],
  });
  const swept = pendingOf(await coordinator.execute('refund', { order: 'o-swept' }))!.id;
  const answered = pendingOf(await coordinator.execute('refund', { order: 'o-late' }))!.id;
  const answeredInTime = pendingOf(await coordinator.execute('refund', { order: 'o-ok' }))!.id;
  await coordinator.resolve({ id: answeredInTime, ok: true }); // settled resolved: no expired event
  clock.advance(HOUR + 1);
  // The late approval's claim finds it past its deadline: settled expired, never run.
  expect((await coordinator.resolve({ id: answered, ok: true })).output).toBe('declined/expired: Refund o-late? (expired)');
  expect(await coordinator.sweep()).toEqual({ expired: [swept], escalated: [] });

  const events = await deliveries(hook);
  expect(events.map((e) => [e.type, (e as WebhookPayload).suspension.id, (e as WebhookPayload).suspension.status])).toEqual([
    ['suspension.expired', answered, 'expired'],
    ['suspension.expired', swept, 'expired'],
  ]);
  const [late] = events as WebhookPayload[];
  expect(late?.occurredAt).toBe('2026-12-04T10:00:00.001Z');
  expect(late?.suspension.outcome).toEqual({ isError: true, output: 'declined/expired: Refund o-late? (expired)' });
});
