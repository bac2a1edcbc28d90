/**
 * The channel across processes on one PostgreSQL (docs/channels.md): two finance users click
 * the same card at once in two worker processes, and a worker dies between the suspension and
 * its card's post. The Slack Web API is the stand-in of test/fixtures/channels/slack.ts.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf } from 'toolnexus-ts';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { createChannels, type Channels } from 'toolnexus-ts/channels';
import type { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { startChild, until, type Started } from '../fixtures/children';
import { FakeClock } from '../fixtures/fake-clock';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { BOT_TOKEN, clickBody, SIGNING_SECRET, slackHeaders, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { CARD_NUMBER, principalOf, refundCoordinator, route } from '../fixtures/channels/refund';

jest.setTimeout(180_000);

let dir: string;
let closers: Array<() => Promise<void>>;
let children: Started[];
let slack: SlackStandIn;
let url: string;
let schema: string;
let store: PostgresStore;
let coordinator: ResumeCoordinator;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-channels-'));
  closers = [];
  children = [];
  slack = await slackStandIn(closers);
  url = await postgresUrl();
  schema = uniqueSchema('channels');
  store = new PostgresStore({ connectionString: url, schema });
  await store.ensureSchema();
  coordinator = refundCoordinator(store);
});

afterEach(async () => {
  for (const child of children) if (!child.hasExited()) child.kill('SIGKILL');
  await Promise.all(children.map((child) => child.exited));
  for (const close of closers.reverse()) await close();
  await store.close();
  await dropSchema(url, schema);
  rmSync(dir, { recursive: true, force: true });
});

async function channelsHere(clock?: FakeClock): Promise<Channels> {
  const channels = await createChannels({
    host: coordinator,
    platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
    principalOf,
    route,
    ...(clock ? { clock } : {}),
  });
  closers.push(() => channels.close());
  return channels;
}

function worker(mode: 'serve' | 'suspend', log: string): Started {
  const child = startChild('channels/worker.ts', [mode, `pg:${url}#${schema}`, slack.apiUrl], { REFUND_LOG: log });
  children.push(child);
  return child;
}

async function urlOf(child: Started): Promise<string> {
  await until(() => child.stdout().includes('listening ') || child.hasExited(), 90_000, 'a worker listening');
  const line = /listening (\S+)/.exec(child.stdout());
  if (!line) throw new Error(`the worker did not start: ${child.stderr()}`);
  return line[1] as string;
}

function click(base: string, user: string, id: string, ts: string): Promise<Response> {
  const body = clickBody({ user, channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  return fetch(`${base}/slack`, { method: 'POST', headers: slackHeaders(body), body });
}

it('two finance clicks at once in two workers: one replay, both signatures, the card approved by both; a third click does nothing', async () => {
  const log = join(dir, 'refunds.log');
  const channels = await channelsHere();
  const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  const ts = String(slack.of('chat.postMessage')[0]?.reply?.ts);
  const [a, b] = await Promise.all([urlOf(worker('serve', log)), urlOf(worker('serve', log))]);
  const responses = await Promise.all([click(a, 'U0ANN', id, ts), click(b, 'U0BEN', id, ts)]);
  expect(responses.map((r) => r.status)).toEqual([200, 200]);
  const settled = await store.get(id);
  expect(settled?.status).toBe('resolved');
  expect(settled?.signatures?.map((s) => s.by.id).sort()).toEqual(['finance:ann', 'finance:ben']);
  expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
  expect(readFileSync(log, 'utf8').split(' ')[1]?.trim().split(',').sort()).toEqual(['finance:ann', 'finance:ben']);
  const last = () => JSON.stringify(slack.of('chat.update').at(-1)?.body.blocks ?? '');
  await until(() => /Approved by both finance:(ann|ben) and finance:(ann|ben)/.test(last()), 60_000, 'the card approved by both');
  expect(slack.of('chat.postMessage')).toHaveLength(1);
  // A third click, after the quorum settled it: the call stays as it is, nothing runs again.
  expect((await click(b, 'U0ANN', id, ts)).status).toBe(200);
  expect(await store.get(id)).toEqual(settled);
  expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
  for (const call of slack.calls) expect(call.raw).not.toContain(CARD_NUMBER);
});

it('a worker killed between the suspension and the post: the restarted channel posts the card once', async () => {
  const log = join(dir, 'refunds.log');
  slack.hold(true);
  const dying = worker('suspend', log);
  await until(() => dying.stdout().includes('suspended ') || dying.hasExited(), 90_000, 'the suspension');
  const id = /suspended (\S+)/.exec(dying.stdout())?.[1] as string;
  expect(id).toBeDefined();
  await until(() => slack.of('chat.postMessage').length === 1, 60_000, 'the post in flight');
  dying.kill('SIGKILL');
  await dying.exited;
  slack.hold(false);
  // The restarted process, later than the dead worker's lease on the delivery.
  const clock = new FakeClock(Date.now() + 120_000);
  const channels = await channelsHere(clock);
  expect((await channels.deliver()).worked).toBe(1);
  const answered = slack.of('chat.postMessage').filter((call) => call.reply !== undefined);
  expect(answered).toHaveLength(1);
  expect(JSON.stringify(answered[0]!.body.blocks)).toContain(id);
  expect(await channels.deliver()).toEqual({ queued: 0, worked: 0 });
  expect(slack.of('chat.postMessage').filter((call) => call.reply !== undefined)).toHaveLength(1);
  expect(existsSync(log)).toBe(false);
});
