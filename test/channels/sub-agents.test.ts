/**
 * A sub-agent's request in the channels (docs/channels.md, "A sub-agent's request"), with the
 * real Chat SDK and Slack adapter against the Slack stand-in: a root agent calls `research`, a
 * sub-agent whose `refund` needs an approval; the child halts, and the root halts with the
 * request the sub-agent surfaced (`sub-<child's id>`, tool `research`). The store holds both
 * while they are open; the channels post one card, the surfaced request's (the one
 * docs/agents.md says is answered), routed by the tool that asked, and its click answers it
 * once through the policy of that tool: the child and the root continue once. Before this
 * (commit c5648f3) both got a card, and the child's could not be answered by the root's runner.
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import { IsInt, IsString, Min } from 'class-validator';
import { pendingOf, success, Tool, Toolkit } from 'toolnexus-ts';
import { AgentRunner, answerAs, type RunResult } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FunctionModel } from 'toolnexus-ts/models';
import { createChannels, type Channels, type RouteAnswerers } from 'toolnexus-ts/channels';
import { InvalidAnswerError, ResumeCoordinator, rulesPolicy, type SuspendedCall } from 'toolnexus-ts/suspension';
import { listening } from '../fixtures/listen';
import { FakeClock } from '../fixtures/fake-clock';
import { BOT_TOKEN, clickBody, SIGNING_SECRET, slackHeaders, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { principalOf } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

class RefundArgs {
  @IsString() customer!: string;
  @IsInt() @Min(1) cents!: number;
}

let ran: number[];

/** Its approver may change its arguments where it is asked directly (Edit); a surfaced request takes none. */
@Tool({ name: 'refund', description: 'Refunds', args: RefundArgs, approval: { prompt: 'Refund 200 cents to ACME?', editable: true } })
class RefundTool {
  run(args: RefundArgs) {
    ran.push(args.cents);
    return success(`refunded ${args.cents}`);
  }
}

/**
 * Finance may approve refunds, whoever surfaces them. The director may approve `research`, which
 * never approves the refund a sub-agent surfaced under that name (docs/who-may-answer.md).
 */
const policy = () =>
  rulesPolicy([
    { principals: ['finance:ann', 'finance:ben', 'finance:cy'], tools: ['refund'] },
    { principals: ['director:dee'], tools: ['research'] },
  ]);

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let store: MemoryStore;
let clock: FakeClock;
let childCoordinator: ResumeCoordinator;
let root: AgentRunner;
let channels: Channels;
let webhook: string;
let routed: Array<{ tool: string; answerers: RouteAnswerers }>;
let failures: unknown[];
/** How many times the root's model was asked for its last turn: the run continuing. */
let continued: number;

beforeEach(async () => {
  closers = [];
  ran = [];
  routed = [];
  failures = [];
  continued = 0;
  slack = await slackStandIn(closers);
  clock = new FakeClock(Date.now());
  store = new MemoryStore({ clock });
  const childTools = new Toolkit().register(RefundTool);
  childCoordinator = new ResumeCoordinator({ toolkit: childTools, store, policy: policy() });
  const child = new AgentRunner({
    model: new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool')
        ? 'refund done'
        : { toolCalls: [{ id: 'r1', name: 'refund', arguments: { customer: 'ACME', cents: 200 } }] },
    ),
    toolkit: childTools,
    coordinator: childCoordinator,
  });
  const tools = new Toolkit().register(child.asTool({ name: 'research', description: 'Researches, as an agent' }));
  root = new AgentRunner({
    model: new FunctionModel(({ messages }) => {
      if (!messages.some((m) => m.role === 'tool')) return { toolCalls: [{ id: 'c1', name: 'research', arguments: { input: 'look' } }] };
      continued++;
      return 'all done';
    }),
    toolkit: tools,
    coordinator: new ResumeCoordinator({ toolkit: tools, store, policy: policy() }),
  });
  channels = await createChannels({
    host: root,
    platforms: { slack: { signingSecret: SIGNING_SECRET, botToken: BOT_TOKEN, apiUrl: slack.apiUrl } },
    principalOf,
    route: (call, answerers) => {
      routed.push({ tool: call.tool, answerers });
      return ['slack:C0FINANCE'];
    },
    onError: (error) => failures.push(error),
    clock,
  });
  closers.push(() => channels.close());
  webhook = await listening(createServer(channels.nodeHandler('slack')), closers);
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

/** The root run, halted on the request its sub-agent surfaced; the channels' tick delivers. */
async function halted(): Promise<{ run: RunResult; surfaced: SuspendedCall; own: SuspendedCall }> {
  const run = await root.run('refund ACME', { runId: 'root-1', principal: { id: 'finance:cy' } });
  expect(run.status).toBe('halted');
  await channels.deliver();
  const pending = await store.list({ status: 'pending' });
  const surfaced = pending.find((c) => c.tool === 'research')!;
  // The root's coordinator told the channels of it at once: that delivery may still be in flight.
  await channels.refresh(surfaced.request.id);
  return { run, surfaced, own: pending.find((c) => c.tool === 'refund')! };
}

/** The card posted for a call: its `ts`, if one was posted. */
function cardOf(id: string): string | undefined {
  const post = slack.of('chat.postMessage').find((p) => JSON.stringify(p.body.blocks).includes(`"value":"${id}"`));
  return post ? String(post.reply?.ts) : undefined;
}

async function click(user: string, id: string, ts: string, actionId = 'toolnexus.approve'): Promise<void> {
  const body = clickBody({ user, channel: 'C0FINANCE', ts, actionId, value: id });
  expect((await fetch(`${webhook}/slack`, { method: 'POST', headers: slackHeaders(body), body })).status).toBe(200);
}

const cards = () => slack.of('chat.postMessage');
const told = () => String(slack.of('chat.postEphemeral').at(-1)?.body.text);

it('one card: the request the root’s run surfaced, routed by the tool that asked; the child’s own request gets none', async () => {
  const { surfaced, own } = await halted();
  expect(surfaced.request.id).toBe(`sub-${own.request.id}`);
  expect(cards()).toHaveLength(1);
  expect(cardOf(surfaced.request.id)).toBeDefined();
  expect(cardOf(own.request.id)).toBeUndefined();
  // The answer that resumes the child carries no arguments: the surfaced request is not editable
  // (the runner leaves `editable` out, so no door offers an edit), and its card has no Edit.
  expect(own.request.data?.editable).toBe(true);
  expect(surfaced.request.data?.editable).toBeUndefined();
  expect(JSON.stringify(cards()[0]!.body.blocks)).not.toContain('toolnexus.edit');
  expect(await store.deliveries.listDeliveries({ callId: own.request.id })).toEqual([]);
  expect(new Set(routed.map((r) => r.tool))).toEqual(new Set(['research']));
  expect(routed[0]!.answerers).toEqual({ principals: ['finance:ann', 'finance:ben'], asking: { tool: 'refund', path: ['research'] } });
  // Ticks after it post nothing more.
  clock.advance(60_000);
  await channels.deliver();
  expect(cards()).toHaveLength(1);
});

it('its click answers the request once, judged by the policy of the tool that asked: the child and the root continue once', async () => {
  const { surfaced, own } = await halted();
  const ts = cardOf(surfaced.request.id)!;
  // The director may approve `research`, not the refund it surfaced; the requester not their own.
  await click('U0DEE', surfaced.request.id, ts);
  expect(told()).toContain('You may not answer this request');
  await click('U0CY', surfaced.request.id, ts);
  expect(told()).toContain('You may not answer this request');
  expect((await store.get(surfaced.request.id))?.status).toBe('pending');
  expect(ran).toEqual([]);
  await click('U0ANN', surfaced.request.id, ts);
  expect(ran).toEqual([200]);
  expect(await store.get(surfaced.request.id)).toMatchObject({ status: 'resolved', answeredBy: { id: 'finance:ann' } });
  expect((await store.get(own.request.id))?.status).toBe('resolved');
  expect(continued).toBe(1);
  expect(JSON.stringify(slack.of('chat.update').at(-1)?.body.blocks)).toContain('Approved by finance:ann');
  // A second approver, or the same click again: told, and nothing runs again.
  await click('U0BEN', surfaced.request.id, ts);
  expect(told()).toContain('Already answered by finance:ann');
  await click('U0ANN', surfaced.request.id, ts);
  expect(ran).toEqual([200]);
  expect(continued).toBe(1);
  expect(failures).toEqual([]);
  expect(cards()).toHaveLength(1);
});

it('a card of the child’s own request posted before its run surfaced it answers the surfaced request, once', async () => {
  const { surfaced, own } = await halted();
  // As an earlier version posted it (or a tick in the instant before the parent surfaced it).
  const ts = '1700009999.000100';
  await store.deliveries.insertDelivery({
    id: `${own.request.id} slack:C0FINANCE`,
    callId: own.request.id,
    platform: 'slack',
    target: 'slack:C0FINANCE',
    version: 1,
    message: { threadId: `slack:C0FINANCE:${ts}`, id: ts },
    done: false,
    attempts: 0,
    dueAt: clock.now() + 60_000,
  });
  // It offers no edit of the child's arguments: the answer that resumes the child carries none.
  await click('U0ANN', own.request.id, ts, 'toolnexus.edit');
  expect(told()).toContain('can no longer be edited');
  expect(slack.of('views.open')).toEqual([]);
  await click('U0ANN', own.request.id, ts);
  expect(ran).toEqual([200]);
  expect(await store.get(surfaced.request.id)).toMatchObject({ status: 'resolved', answeredBy: { id: 'finance:ann' } });
  expect((await store.get(own.request.id))?.status).toBe('resolved');
  expect(continued).toBe(1);
  expect(failures).toEqual([]);
  // Both cards show the outcome.
  const updated = slack.of('chat.update').map((u) => String(u.body.ts));
  expect(updated).toContain(ts);
  expect(updated).toContain(cardOf(surfaced.request.id));
  await click('U0BEN', own.request.id, ts);
  expect(ran).toEqual([200]);
  expect(continued).toBe(1);
});

it('a request in a sub-agent’s run that nobody surfaced yet waits a moment, then is delivered as it is', async () => {
  const asked = await childCoordinator.execute('refund', { customer: 'ACME', cents: 300 }, undefined, {
    runId: 'root-9/c9',
    callId: 'r9',
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(asked)!.id;
  await channels.deliver();
  expect(cardOf(id)).toBeUndefined();
  clock.advance(11_000);
  await channels.deliver();
  expect(cardOf(id)).toBeDefined();
  expect(routed.at(-1)).toEqual({ tool: 'refund', answerers: { principals: ['finance:ann', 'finance:ben'] } });
});

it('the surfaced request takes no edited arguments through any door: `answerAs` refuses them, and the call stays open', async () => {
  const { surfaced } = await halted();
  await expect(
    answerAs(root, { id: surfaced.request.id, ok: true, args: { customer: 'ACME', cents: 1 } }, { by: { id: 'finance:ann' } }),
  ).rejects.toBeInstanceOf(InvalidAnswerError);
  expect((await store.get(surfaced.request.id))?.status).toBe('pending');
  expect(ran).toEqual([]);
  // Its plain approval still runs the child's call with the arguments asked.
  await answerAs(root, { id: surfaced.request.id, ok: true }, { by: { id: 'finance:ann' } });
  expect(ran).toEqual([200]);
});
