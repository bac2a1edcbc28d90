/**
 * ToolnexusChannelsModule in a real Nest app on 127.0.0.1 (docs/channels.md, "In a Nest app"):
 * over the module's runner, a run's refund approval is posted to the Slack stand-in, and signed
 * clicks through the Nest route (`/channels/slack`) answer it, so the run continues here; the
 * outbox ticks from the application's bootstrap to its shutdown, on the channels' clock.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { pendingOf } from 'toolnexus-ts';
import { AgentRunner } from 'toolnexus-ts/agents';
import { Channels } from 'toolnexus-ts/channels';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FunctionModel } from 'toolnexus-ts/models';
import { rulesPolicy } from 'toolnexus-ts/suspension';
import { ToolnexusChannelsModule, ToolnexusModule, ToolnexusModuleError, type ToolnexusChannelsModuleOptions } from 'toolnexus-ts/nest';
import { FakeClock } from '../fixtures/fake-clock';
import { BOT_TOKEN, clickBody, SIGNING_SECRET, slackHeaders, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { CARD_NUMBER, principalOf, RefundSoonTool, RefundTool, refundCoordinator, route } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let clock: FakeClock;
let store: MemoryStore;

beforeEach(async () => {
  closers = [];
  clock = new FakeClock(Date.now());
  slack = await slackStandIn(closers);
  store = new MemoryStore({ clock });
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

/** The model asks for the refund, then reports what it returned. */
const model = new FunctionModel(({ messages }) => {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return `Done: ${last.content}`;
  return { toolCalls: [{ name: 'refund', arguments: { customer: 'ACME', cents: 25_000, card: CARD_NUMBER } }] };
});

/** A Nest app with ToolnexusModule and the channels module, listening on 127.0.0.1: its base URL. */
async function app(
  extra: Partial<ToolnexusChannelsModuleOptions> = {},
  nest: { rawBody?: boolean } = { rawBody: true },
): Promise<{ app: INestApplication; url: string }> {
  @Module({
    imports: [
      ToolnexusModule.forRoot({
        model,
        store,
        clock,
        recovery: false,
        closeStoreOnShutdown: false,
        policy: rulesPolicy([{ principals: ['finance:ann', 'finance:ben', 'finance:cy'], tools: ['refund', 'refund_soon'] }]),
      }),
      ToolnexusChannelsModule.forRoot({
        platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
        principalOf,
        route,
        clock,
        ...extra,
      }),
    ],
    providers: [RefundTool, RefundSoonTool],
  })
  class AppModule {}
  const nestApp = await NestFactory.create(AppModule, { logger: false, ...nest });
  await nestApp.listen(0, '127.0.0.1');
  const url = (await nestApp.getUrl()).replace('[::1]', '127.0.0.1');
  closers.push(() => nestApp.close());
  return { app: nestApp, url };
}

function click(url: string, user: string, id: string, ts: string, path = 'channels/slack'): Promise<Response> {
  const body = clickBody({ user, channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  return fetch(`${url}/${path}`, { method: 'POST', headers: slackHeaders(body), body });
}

async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(await done()).toBe(true);
}

it("posts a run's approval, and signed clicks through the Nest route answer it: the run continues in this process", async () => {
  const { app: nestApp, url } = await app();
  const runner = nestApp.get(AgentRunner);
  const halted = await runner.run('refund ACME', { principal: { id: 'finance:cy' } });
  expect(halted.status).toBe('halted');
  const id = halted.pending!.id;
  // Posted at once by the channels' observer of the module's coordinator.
  await until(() => slack.of('chat.postMessage').length === 1);
  const post = slack.of('chat.postMessage')[0]!;
  expect(post.body.channel).toBe('C0FINANCE');
  expect(post.raw).not.toContain(CARD_NUMBER);
  const ts = String(post.reply?.ts);

  expect((await click(url, 'U0ANN', id, ts)).status).toBe(200);
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  expect((await click(url, 'U0BEN', id, ts)).status).toBe(200);
  const settled = await store.get(id);
  expect(settled?.status).toBe('resolved');
  expect(settled?.outcome?.output).toBe('{"refunded":25000}');
  const run = await store.loadRun(halted.runId);
  expect(run?.state.phase).toBe('done');
  expect(JSON.stringify(slack.of('chat.update').at(-1)?.body.blocks)).toContain('Approved by both finance:ann and finance:ben');
  // The Channels the module built is a provider.
  expect(nestApp.get(Channels)).toBeInstanceOf(Channels);
  // A click signed with another secret is refused by the adapter, through the same route.
  const body = clickBody({ user: 'U0ANN', channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  const forged = await fetch(`${url}/channels/slack`, { method: 'POST', headers: slackHeaders(body, 'not-the-secret'), body });
  expect(forged.status).toBe(401);
});

it('ticks from bootstrap to shutdown: a call no observer saw is posted by the tick, and none after app.close()', async () => {
  const { app: nestApp } = await app({ tickMs: 1000, path: 'hooks' });
  const elsewhere = refundCoordinator(store); // another process's coordinator: no observer here sees its calls
  const suspend = async () =>
    pendingOf(
      await elsewhere.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
        principal: { id: 'finance:cy' },
      }),
    )!.id;
  const first = await suspend();
  expect(slack.of('chat.postMessage')).toHaveLength(0);
  clock.advance(1000);
  await until(() => slack.of('chat.postMessage').length === 1);
  expect(JSON.stringify(slack.of('chat.postMessage')[0]!.body.blocks)).toContain(first);
  await nestApp.close();
  await suspend();
  clock.advance(60_000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(slack.of('chat.postMessage')).toHaveLength(1);
  expect(clock.timers).toHaveLength(0);
});

it('serves each platform at <path>/<platform>: another path is not the route', async () => {
  const { app: nestApp, url } = await app({ path: 'hooks', tickMs: false });
  const result = await nestApp
    .get(AgentRunner)
    .coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, { principal: { id: 'finance:cy' } });
  const id = pendingOf(result)!.id;
  await until(() => slack.of('chat.postMessage').length === 1);
  const ts = String(slack.of('chat.postMessage')[0]!.reply?.ts);
  expect((await click(url, 'U0ANN', id, ts, 'channels/slack')).status).toBe(404);
  expect((await click(url, 'U0ANN', id, ts, 'hooks/teams')).status).toBe(404);
  expect((await store.get(id))?.signatures).toBeUndefined();
  expect((await click(url, 'U0ANN', id, ts, 'hooks/slack')).status).toBe(200);
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  // No tick was started (`tickMs: false`): the fake clock holds no timer of the channels.
  expect(clock.timers).toHaveLength(0);
});

it('without the raw body (Nest parsed it first), a click is refused with a 500 that says how to keep it, and nothing changes', async () => {
  const { app: nestApp, url } = await app({ tickMs: false }, {});
  const result = await nestApp
    .get(AgentRunner)
    .coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, { principal: { id: 'finance:cy' } });
  const id = pendingOf(result)!.id;
  await until(() => slack.of('chat.postMessage').length === 1);
  const response = await click(url, 'U0ANN', id, String(slack.of('chat.postMessage')[0]!.reply?.ts));
  expect(response.status).toBe(500);
  expect(await response.text()).toContain('rawBody: true');
  expect((await store.get(id))?.signatures).toBeUndefined();
});

it('refuses bad options at forRoot, and a boot without ToolnexusModule says what is missing', async () => {
  expect(() => ToolnexusChannelsModule.forRoot({} as never)).toThrow(ToolnexusModuleError);
  const base = { platforms: { slack: {} }, principalOf, route };
  expect(() => ToolnexusChannelsModule.forRoot({ ...base, tickMs: 0 })).toThrow(/tickMs/);
  expect(() => ToolnexusChannelsModule.forRoot({ ...base, path: 'a/:b' })).toThrow(/plain URL path/);
  @Module({
    imports: [
      ToolnexusChannelsModule.forRoot({
        platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
        principalOf,
        route,
      }),
    ],
  })
  class Lonely {}
  await expect(NestFactory.create(Lonely, { logger: false, abortOnError: false })).rejects.toThrow(/needs ToolnexusModule/);
});
