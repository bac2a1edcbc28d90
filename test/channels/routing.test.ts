/**
 * Routing from the policy (docs/channels.md, "Routing"): `route(call, { principals })` is told
 * who may answer as far as the request and the answer policy can say (a quorum's `from`, a
 * rulesPolicy's principals, an escalation's `to` once due), and the real Chat SDK and Slack adapter post
 * a direct message to each against the Slack stand-in.
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { pendingOf, success, Tool, Toolkit } from 'toolnexus-ts';
import { AgentRunner } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FunctionModel } from 'toolnexus-ts/models';
import { FakeClock } from '../fixtures/fake-clock';
import { createChannels, type RouteAnswerers } from 'toolnexus-ts/channels';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { BOT_TOKEN, SIGNING_SECRET, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { CARD_NUMBER, principalOf, refundCoordinator } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

class PayArgs {
  @IsString() customer!: string;
  @IsInt() @Min(1) cents!: number;
}

@Tool({
  name: 'pay_two',
  description: 'Pays, once two of finance approve',
  args: PayArgs,
  approval: { prompt: 'Pay?', quorum: { of: 2, from: ['finance:ann', 'finance:ben'] } },
})
class PayTwoTool {
  run(args: PayArgs) {
    return success({ paid: args.cents });
  }
}

@Tool({ name: 'pay', description: 'Pays, once approved', args: PayArgs, approval: { prompt: 'Pay?' } })
class PayTool extends PayTwoTool {}

/** Each principal's direct message with the app. */
const DIRECT: Record<string, string> = {
  'finance:ann': 'D0ANN',
  'finance:ben': 'D0BEN',
  'finance:cy': 'D0CY',
  'director:dee': 'D0DEE',
};

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let routed: RouteAnswerers[];

beforeEach(async () => {
  closers = [];
  routed = [];
  slack = await slackStandIn(closers);
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

async function deliverAll(coordinator: ResumeCoordinator): Promise<string[]> {
  const channels = await createChannels({
    host: coordinator,
    platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
    principalOf,
    route: (_call, answerers) => {
      routed.push(answerers);
      return answerers.principals.map((id) => `slack:${DIRECT[id] ?? 'C0NOBODY'}`);
    },
  });
  closers.push(() => channels.close());
  await channels.deliver();
  return slack
    .of('chat.postMessage')
    .map((call) => String(call.body.channel))
    .sort();
}

it("a quorum's `from` names who may answer: the route DMs ann and ben", async () => {
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(PayTwoTool), store });
  expect(pendingOf(await coordinator.execute('pay_two', { customer: 'ACME', cents: 500 }))).toBeDefined();
  expect(await deliverAll(coordinator)).toEqual(['D0ANN', 'D0BEN']);
  expect(routed).toEqual([{ principals: ['finance:ann', 'finance:ben'] }]);
});

it("a rulesPolicy's principals without the requester (separation of duties), and the escalation's `to` once it is due", async () => {
  // At this instant: a declared escalation's time is set from the system clock when the tool asks.
  const clock = new FakeClock(Date.now());
  const store = new MemoryStore({ clock });
  const coordinator = refundCoordinator(store, clock);
  const result = await coordinator.execute('refund_escalating', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  // Before the escalation is due the director may not answer, so is not named: the escalation
  // notice tells them when it comes due.
  expect(await coordinator.answerersOf((await store.get(id))!)).toEqual(['finance:ann', 'finance:ben']);
  expect(await deliverAll(coordinator)).toEqual(['D0ANN', 'D0BEN']);
  expect(routed[0]).toEqual({ principals: ['finance:ann', 'finance:ben'] });
  clock.advance(120_000); // past the minute, whatever real time the test took before it
  expect(await coordinator.answerersOf((await store.get(id))!)).toEqual(['finance:ann', 'finance:ben', 'director:dee']);
});

it('a quorum narrowed by the policy; nothing named when a rule grants anyone or a policy cannot list', async () => {
  const narrowed = new ResumeCoordinator({
    toolkit: new Toolkit().register(PayTwoTool),
    store: new MemoryStore(),
    policy: rulesPolicy([{ principals: ['finance:ben', 'finance:cy'], tools: ['pay_two'] }]),
  });
  pendingOf(await narrowed.execute('pay_two', { customer: 'ACME', cents: 500 }));
  expect(await deliverAll(narrowed)).toEqual(['D0BEN']);

  const anyone = new ResumeCoordinator({
    toolkit: new Toolkit().register(PayTool),
    store: new MemoryStore(),
    policy: rulesPolicy([
      { principals: ['finance:ann'], tools: ['pay'] },
      { principals: '*', kinds: ['approval'] },
    ]),
  });
  const asked = pendingOf(await anyone.execute('pay', { customer: 'ACME', cents: 500 }))!;
  expect(await anyone.answerersOf((await anyone.get(asked.id))!)).toEqual([]);

  const judged = new ResumeCoordinator({ toolkit: new Toolkit().register(PayTool), store: new MemoryStore(), policy: () => 'allow' });
  const open = pendingOf(await judged.execute('pay', { customer: 'ACME', cents: 500 }))!;
  expect(await judged.answerersOf((await judged.get(open.id))!)).toEqual([]);
  // A rule for other tools or for cancelling only names nobody for this one.
  const other = rulesPolicy([
    { principals: ['x'], tools: ['refund'] },
    { principals: ['y'], actions: ['cancel'] },
  ]);
  expect(other.principalsFor?.((await judged.get(open.id))!)).toEqual([]);
});

it('a request a sub-agent surfaced is routed by the tool that asked, not the sub-agent’s', async () => {
  const store = new MemoryStore();
  const ran: number[] = [];
  @Tool({ name: 'refund', description: 'Refunds', args: PayArgs, approval: { prompt: 'Refund?' } })
  class RefundTool {
    run(args: PayArgs) {
      ran.push(args.cents);
      return success(`refunded ${args.cents}`);
    }
  }
  const childTools = new Toolkit().register(RefundTool);
  const child = new AgentRunner({
    model: new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool')
        ? 'refunded'
        : { toolCalls: [{ id: 'r1', name: 'refund', arguments: { customer: 'ACME', cents: 200 } }] },
    ),
    toolkit: childTools,
    coordinator: new ResumeCoordinator({ toolkit: childTools, store }),
  });
  const tools = new Toolkit().register(child.asTool({ name: 'research', description: 'Researches, as an agent' }));
  const coordinator = new ResumeCoordinator({ toolkit: tools, store });
  const parent = new AgentRunner({
    model: new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ id: 'c1', name: 'research', arguments: { input: 'look' } }] },
    ),
    toolkit: tools,
    coordinator,
  });
  const halted = await parent.run('refund ACME');
  expect(halted.status).toBe('halted');
  const surfaced = (await store.list({ status: 'pending' })).filter((call) => call.tool === 'research');
  expect(surfaced).toHaveLength(1);

  await deliverAll(coordinator);
  // The store holds the child's own request too, which gets no card (docs/channels.md, "A
  // sub-agent's request"): the one the sub-agent surfaced (tool `research`) names the tool that asked.
  expect(routed).toEqual([{ principals: [], asking: { tool: 'refund', path: ['research'] } }]);
  expect(ran).toEqual([]);
});
