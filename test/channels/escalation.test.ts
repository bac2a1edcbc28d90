/**
 * Escalation notices (docs/channels.md, "Escalation"): when a request's escalation comes due on
 * the channel's clock, the outbox posts one notice per escalation target (the real Chat SDK and
 * Slack adapter against the Slack stand-in), recorded as a delivery when the call is, so two
 * workers or a worker that died notify once; a call settled before then notifies nobody.
 */
import { createServer } from 'node:http';
import { pendingOf } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { createChannels, type Channels, type ChannelsOptions, type DeliveryEvent } from 'toolnexus-ts/channels';
import type { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { listening } from '../fixtures/listen';
import { FakeClock } from '../fixtures/fake-clock';
import { BOT_TOKEN, clickBody, SIGNING_SECRET, slackHeaders, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { CARD_NUMBER, principalOf, refundCoordinator, route } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let store: MemoryStore;
let coordinator: ResumeCoordinator;
let clock: FakeClock;
let events: DeliveryEvent[];

/** The director's direct messages: where the escalation routes each principal it names. */
const DIRECT: Record<string, string> = { 'director:dee': 'slack:D0DEE' };
const escalationRoute = (_call: unknown, to: readonly string[]) => to.map((id) => DIRECT[id] ?? 'slack:C0UNKNOWN');

beforeEach(async () => {
  closers = [];
  events = [];
  clock = new FakeClock(Date.now());
  slack = await slackStandIn(closers);
  store = new MemoryStore({ clock });
  coordinator = refundCoordinator(store);
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

async function channelsOn(host: ResumeCoordinator, extra: Partial<ChannelsOptions> = {}): Promise<Channels> {
  const channels = await createChannels({
    host,
    platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
    principalOf,
    route,
    escalationRoute,
    clock,
    onDelivery: (event) => events.push(event),
    ...extra,
  });
  closers.push(() => channels.close());
  return channels;
}

/** Suspends an escalating refund asked by finance:cy: its id and when its escalation comes due. */
async function suspend(on: ResumeCoordinator = coordinator): Promise<{ id: string; at: number }> {
  const result = await on.execute('refund_escalating', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  const escalation = (await store.get(id))?.request.data?.escalation as { at: string; to: string[] };
  expect(escalation.to).toEqual(['director:dee']);
  return { id, at: Date.parse(escalation.at) };
}

const postsTo = (channel: string) => slack.of('chat.postMessage').filter((call) => call.body.channel === channel);
const text = (call: { body: Record<string, unknown> }) => `${String(call.body.text)} ${JSON.stringify(call.body.blocks)}`;

it('notifies the escalation principal once, when the escalation comes due on the clock; their click on the notice answers it', async () => {
  const channels = await channelsOn(coordinator);
  const { id, at } = await suspend();
  await channels.refresh(id);
  expect(postsTo('C0FINANCE')).toHaveLength(1);
  expect(postsTo('D0DEE')).toHaveLength(0);
  expect(await channels.deliver()).toEqual({ queued: 0, worked: 0 });

  clock.advance(at - clock.now() - 1);
  await channels.deliver();
  expect(postsTo('D0DEE')).toHaveLength(0);
  clock.advance(1);
  expect(await channels.deliver()).toEqual({ queued: 0, worked: 1 });
  const [notice] = postsTo('D0DEE');
  expect(text(notice!)).toContain('*Escalated to*\\ndirector:dee');
  expect(text(notice!)).toContain('Escalated approval: refund');
  expect(text(notice!)).toContain('toolnexus.approve');
  expect(notice!.raw).not.toContain(CARD_NUMBER);
  expect(events.at(-1)).toMatchObject({ type: 'posted', callId: id, target: 'slack:D0DEE', escalation: true });
  // Once: later ticks post nothing more; the finance card is edited to say it escalated (its next check).
  clock.advance(60_000);
  await channels.deliver();
  await channels.deliver();
  expect(postsTo('D0DEE')).toHaveLength(1);
  expect(postsTo('C0FINANCE')).toHaveLength(1);
  expect(JSON.stringify(slack.of('chat.update').at(-1)?.body.blocks)).toContain('*Escalated to*\\ndirector:dee');

  // The director's click on the notice answers it (the escalation lets them), and both cards show the outcome.
  const webhook = await listening(createServer(channels.nodeHandler('slack')), closers);
  const ts = String(notice!.reply?.ts);
  const body = clickBody({ user: 'U0DEE', channel: 'D0DEE', ts, actionId: 'toolnexus.approve', value: id });
  expect((await fetch(`${webhook}/slack`, { method: 'POST', headers: slackHeaders(body), body })).status).toBe(200);
  const settled = await store.get(id);
  expect(settled).toMatchObject({ status: 'resolved', answeredBy: { id: 'director:dee' } });
  const updated = slack.of('chat.update').filter((call) => JSON.stringify(call.body.blocks).includes('Approved by director:dee'));
  expect(updated.map((call) => call.body.channel).sort()).toEqual(['C0FINANCE', 'D0DEE']);
});

it('two workers at the moment it comes due post one notice', async () => {
  const one = await channelsOn(coordinator);
  const two = await channelsOn(refundCoordinator(store)); // another worker over the same store
  const { id, at } = await suspend();
  await one.refresh(id);
  clock.advance(at - clock.now());
  await Promise.all([one.deliver(), two.deliver(), one.deliver(), two.deliver()]);
  expect(postsTo('D0DEE')).toHaveLength(1);
  const notices = (await store.deliveries.listDeliveries({ callId: id })).filter((d) => d.escalation);
  expect(notices.map((d) => [d.target, d.done, d.message?.id])).toEqual([['slack:D0DEE', false, String(postsTo('D0DEE')[0]!.reply?.ts)]]);
});

it('a worker that died before it came due leaves the notice to the next one, and one that died before recording it too', async () => {
  const dying = await channelsOn(coordinator);
  const recorded = await suspend();
  await dying.refresh(recorded.id);
  await dying.close(); // gone before the escalation came due; its notice is in the store
  const unrecorded = await suspend(refundCoordinator(store)); // suspended where no channel ran: nothing recorded
  expect(await store.deliveries.listDeliveries({ callId: unrecorded.id })).toEqual([]);

  const next = await channelsOn(refundCoordinator(store));
  expect(await next.deliver()).toEqual({ queued: 2, worked: 1 }); // the unrecorded call's card and notice; its card posted
  expect(postsTo('D0DEE')).toHaveLength(0);
  clock.advance(Math.max(recorded.at, unrecorded.at) - clock.now());
  // The two notices, and the two cards' checks (a minute on: each is edited to say it escalated).
  expect(await next.deliver()).toEqual({ queued: 0, worked: 4 });
  expect(
    postsTo('D0DEE')
      .map((call) => (text(call).includes(recorded.id) ? 'recorded' : 'unrecorded'))
      .sort(),
  ).toEqual(['recorded', 'unrecorded']);
  await next.deliver();
  expect(postsTo('D0DEE')).toHaveLength(2);
});

it('a call settled before its escalation came due notifies nobody', async () => {
  const channels = await channelsOn(coordinator);
  const { id, at } = await suspend();
  await channels.refresh(id);
  await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'finance:ann' } });
  clock.advance(at - clock.now() + 60_000);
  await channels.deliver();
  await channels.deliver();
  expect(postsTo('D0DEE')).toHaveLength(0);
  const notice = (await store.deliveries.listDeliveries({ callId: id })).find((d) => d.escalation);
  expect(notice).toMatchObject({ done: true });
  expect(notice?.message).toBeUndefined();
});

it('without escalationRoute the notice goes where route sends the card; a sweep that finds it due posts it at once', async () => {
  const channels = await channelsOn(coordinator, { escalationRoute: undefined });
  const { id, at } = await suspend();
  await channels.refresh(id);
  clock.advance(at - clock.now());
  // No tick: the coordinator's sweep tells its observers, and the channel delivers then.
  expect((await coordinator.sweep()).escalated).toEqual([id]);
  for (let i = 0; i < 500 && postsTo('C0FINANCE').length < 2; i++) await new Promise((resolve) => setImmediate(resolve));
  const posts = postsTo('C0FINANCE');
  expect(posts).toHaveLength(2);
  expect(text(posts[1]!)).toContain('Escalated approval: refund');
  await channels.deliver();
  expect(postsTo('C0FINANCE')).toHaveLength(2);
});
