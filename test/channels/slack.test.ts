/**
 * The real `chat` SDK and its Slack adapter, end to end, against a stand-in for Slack's Web
 * API on 127.0.0.1 (docs/channels.md): a 2-of-3 finance refund is posted to the finance
 * channel; each click is a signed Slack request to the channel's node:http route, verified by
 * the adapter, mapped to a principal and answered through the coordinator.
 */
import { createServer, type IncomingMessage } from 'node:http';
import express from 'express';
import { pendingOf } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { createChannels, type Channels, type DeliveryEvent } from 'toolnexus-ts/channels';
import type { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { listening } from '../fixtures/listen';
import { FakeClock } from '../fixtures/fake-clock';
import { BOT_TOKEN, clickBody, SIGNING_SECRET, slackHeaders, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { CARD_NUMBER, FINANCE, principalOf, refundCoordinator, route } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let store: MemoryStore;
let coordinator: ResumeCoordinator;
let channels: Channels;
let webhook: string;
let events: DeliveryEvent[];
let clock: FakeClock;

beforeEach(async () => {
  closers = [];
  events = [];
  clock = new FakeClock(Date.now());
  slack = await slackStandIn(closers);
  store = new MemoryStore({ clock });
  coordinator = refundCoordinator(store);
  channels = await createChannels({
    host: coordinator,
    platforms: {
      slack: {
        signingSecret: SIGNING_SECRET,
        botToken: BOT_TOKEN,
        apiUrl: slack.apiUrl,
      },
    },
    principalOf,
    route,
    clock,
    onDelivery: (event) => events.push(event),
  });
  closers.push(() => channels.close());
  webhook = await listening(createServer(channels.nodeHandler('slack')), closers);
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

/** Suspends a refund asked by finance:cy and delivers its card: the call's id and the card's `ts`. */
async function refund(): Promise<{ id: string; ts: string }> {
  const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  return { id, ts: String(slack.of('chat.postMessage').at(-1)?.reply?.ts) };
}

async function click(user: string, value: string, ts: string, actionId = 'toolnexus.approve', headers?: Record<string, string>) {
  const body = clickBody({ user, channel: 'C0FINANCE', ts, actionId, value });
  return fetch(`${webhook}/slack`, { method: 'POST', headers: headers ?? slackHeaders(body), body });
}

function cardText(call: { body: Record<string, unknown> }): string {
  return JSON.stringify(call.body.blocks);
}

/** What a card says: the blocks of a post or an update. */
function shown(method: 'chat.postMessage' | 'chat.update', at = -1): string {
  return cardText(slack.of(method).at(at)!);
}

it('posts the 2-of-3 finance refund to the finance channel: redacted call, prompt, who asked, progress, Approve and Decline', async () => {
  const { id } = await refund();
  const posts = slack.of('chat.postMessage');
  expect(posts).toHaveLength(1);
  expect(posts[0]!.body.channel).toBe('C0FINANCE');
  const card = shown('chat.postMessage');
  expect(card).toContain('Refund 25000 cents to ACME?');
  expect(card).toContain('finance:cy');
  expect(card).toContain('0 of 2 (finance)');
  expect(card).toContain('toolnexus.approve');
  expect(card).toContain('toolnexus.decline');
  expect(card).toContain(id);
  expect(card).toContain('[redacted]');
  expect(events.map((e) => e.type)).toEqual(['posted']);
  // Delivering again posts nothing more: the delivery is recorded as posted.
  await channels.deliver();
  await channels.refresh(id);
  expect(slack.of('chat.postMessage')).toHaveLength(1);
});

it("refuses the requester's own click with an ephemeral message, and stores nothing", async () => {
  const { id, ts } = await refund();
  const before = await store.get(id);
  const response = await click('U0CY', id, ts);
  expect(response.status).toBe(200);
  const ephemeral = slack.of('chat.postEphemeral');
  expect(ephemeral).toHaveLength(1);
  expect(ephemeral[0]!.body.user).toBe('U0CY');
  expect(String(ephemeral[0]!.body.text)).toContain('You may not answer this request');
  expect(await store.get(id)).toEqual(before);
  expect(slack.of('chat.update')).toHaveLength(0);
});

it('two finance approvals settle it once: the card goes 1 of 2, then approved by both; a third click does nothing', async () => {
  const { id, ts } = await refund();
  expect((await click('U0ANN', id, ts)).status).toBe(200);
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  expect(shown('chat.update')).toContain('1 of 2 (finance)');
  expect((await click('U0BEN', id, ts)).status).toBe(200);
  const settled = await store.get(id);
  expect(settled?.status).toBe('resolved');
  expect(settled?.outcome?.output).toBe('{"refunded":25000}');
  expect(shown('chat.update')).toContain('Approved by both finance:ann and finance:ben');
  expect(shown('chat.update')).not.toContain('toolnexus.approve');
  const updates = slack.of('chat.update').length;
  // A third finance click after that: the call stays as it was, the clicker is told privately.
  expect((await click('U0ANN', id, ts)).status).toBe(200);
  expect(await store.get(id)).toEqual(settled);
  expect(slack.of('chat.update')).toHaveLength(updates);
});

it('the same interaction delivered twice (a platform retry) answers once', async () => {
  const { id, ts } = await refund();
  const body = clickBody({ user: 'U0ANN', channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  const headers = slackHeaders(body);
  for (let i = 0; i < 2; i++) expect((await fetch(`${webhook}/slack`, { method: 'POST', headers, body })).status).toBe(200);
  const call = await store.get(id);
  expect(call?.status).toBe('pending');
  expect(call?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  expect(slack.of('chat.postEphemeral')).toHaveLength(0);
});

it('a click with a bad signature is 401 and changes nothing', async () => {
  const { id, ts } = await refund();
  const before = await store.get(id);
  const body = clickBody({ user: 'U0ANN', channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  const response = await click('U0ANN', id, ts, 'toolnexus.approve', slackHeaders(body, 'not-the-secret'));
  expect(response.status).toBe(401);
  expect(await store.get(id)).toEqual(before);
  expect(slack.of('chat.update')).toHaveLength(0);
});

it('refuses an unmapped user, and a forged call id on a card posted for another call', async () => {
  const first = await refund();
  const second = await refund();
  await click('U0STRANGER', first.id, first.ts);
  expect(String(slack.of('chat.postEphemeral').at(-1)!.body.text)).toContain('not mapped');
  await click('U0ANN', second.id, first.ts);
  expect(String(slack.of('chat.postEphemeral').at(-1)!.body.text)).toContain('not on a request this app posted');
  for (const id of [first.id, second.id]) expect((await store.get(id))?.signatures ?? []).toEqual([]);
});

it('a decline settles it declined and the card says so', async () => {
  const { id, ts } = await refund();
  await click('U0ANN', id, ts, 'toolnexus.decline');
  expect((await store.get(id))?.status).toBe('declined');
  expect(shown('chat.update')).toContain('Declined by finance:ann');
});

it('a call settled elsewhere (cancelled through the coordinator) brings its card to the outcome', async () => {
  const { id } = await refund();
  await coordinator.cancel(id, 'customer withdrew', { by: { id: 'finance:ann' } });
  await until(() => slack.of('chat.update').length > 0);
  expect(shown('chat.update')).toContain('Cancelled');
});

it('a call settled by another process (no observer here) is found by the tick, and its card edited to the outcome', async () => {
  const { id } = await refund();
  const elsewhere = refundCoordinator(store); // another process's coordinator over the same store
  await elsewhere.resolve({ id, ok: true }, undefined, { by: { id: 'finance:ann' } });
  await elsewhere.resolve({ id, ok: true }, undefined, { by: { id: 'finance:ben' } });
  expect((await store.get(id))?.status).toBe('resolved');
  expect(slack.of('chat.update')).toHaveLength(0);
  expect((await channels.deliver()).worked).toBe(0);
  clock.advance(60_000);
  expect((await channels.deliver()).worked).toBe(1);
  expect(shown('chat.update')).toContain('Approved by both finance:ann and finance:ben');
  clock.advance(60_000);
  expect(await channels.deliver()).toEqual({ queued: 0, worked: 0 });
});

it('never sends the @Sensitive card number, in any byte of any request', async () => {
  const { id, ts } = await refund();
  await click('U0CY', id, ts);
  await click('U0ANN', id, ts);
  await click('U0BEN', id, ts);
  expect(slack.calls.length).toBeGreaterThan(3);
  for (const call of slack.calls) expect(call.raw).not.toContain(CARD_NUMBER);
});

it('a failed post is tried again with backoff on the clock, and the failure is told', async () => {
  slack.failNext(1);
  const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  const failed = events.find((e) => e.type === 'failed');
  expect(failed).toMatchObject({ callId: id, target: FINANCE, attempts: 1 });
  expect(failed?.error).not.toContain(CARD_NUMBER);
  expect(await channels.deliver()).toEqual({ queued: 0, worked: 0 });
  clock.advance(1000);
  expect((await channels.deliver()).worked).toBe(1);
  expect(events.at(-1)?.type).toBe('posted');
});

it('a click after the deadline does nothing but settle it expired: the card says so, the clicker is told', async () => {
  const result = await coordinator.execute('refund_soon', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  const ts = String(slack.of('chat.postMessage').at(-1)?.reply?.ts);
  clock.advance(120_000);
  await click('U0ANN', id, ts);
  const call = await store.get(id);
  expect(call?.status).toBe('expired');
  expect(call?.outcome?.output).not.toContain('refunded');
  expect(String(slack.of('chat.postEphemeral').at(-1)?.body.text)).toContain('expired');
  expect(shown('chat.update')).toContain('Expired');
});

it('a pending call whose process died before recording its delivery is found by the tick and posted once', async () => {
  const bare = refundCoordinator(store); // no channel watches this one: as if its process died before the delivery
  const id = pendingOf(
    await bare.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, { principal: { id: 'finance:cy' } }),
  )!.id;
  expect(await store.deliveries.listDeliveries({ callId: id })).toEqual([]);
  expect(await channels.deliver()).toEqual({ queued: 1, worked: 1 });
  expect(JSON.stringify(slack.of('chat.postMessage').at(-1)?.body.blocks)).toContain(id);
  expect(await channels.deliver()).toEqual({ queued: 0, worked: 0 });
  expect(slack.of('chat.postMessage')).toHaveLength(1);
});

it('behind a body parser: answers from the raw body it kept, and refuses clearly when none was kept', async () => {
  const { id, ts } = await refund();
  const keeping = express();
  keeping.use(
    express.urlencoded({ extended: false, verify: (req, _res, raw) => ((req as IncomingMessage & { rawBody?: Buffer }).rawBody = raw) }),
  );
  keeping.post('/slack', channels.nodeHandler('slack'));
  const parsing = express();
  parsing.use(express.urlencoded({ extended: false }));
  parsing.post('/slack', channels.nodeHandler('slack'));
  const [kept, parsed] = [await listening(createServer(keeping), closers), await listening(createServer(parsing), closers)];
  const body = clickBody({ user: 'U0ANN', channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  const refused = await fetch(`${parsed}/slack`, { method: 'POST', headers: slackHeaders(body), body });
  expect(refused.status).toBe(500);
  expect(await refused.text()).toContain('mount it before any body parser');
  expect((await store.get(id))?.signatures).toBeUndefined();
  expect((await fetch(`${kept}/slack`, { method: 'POST', headers: slackHeaders(body), body })).status).toBe(200);
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
});

it("with Slack down, it still starts, and a failed post is the outbox's to retry (never the Slack client's own, past the lease)", async () => {
  const gone = createServer();
  const url = await listening(gone, []);
  await new Promise<void>((resolve) => gone.close(() => resolve()));
  const down: DeliveryEvent[] = [];
  const offline = await createChannels({
    host: coordinator,
    platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: `${url}/api/` } },
    principalOf,
    route,
    clock,
    deliveries: new MemoryStore().deliveries,
    onDelivery: (event) => down.push(event),
  });
  closers.push(() => offline.close());
  const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  await offline.refresh(pendingOf(result)!.id);
  expect(down).toEqual([expect.objectContaining({ type: 'failed', attempts: 1 })]);
});

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setImmediate(resolve));
  expect(done()).toBe(true);
}
