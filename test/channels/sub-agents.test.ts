/**
 * A sub-agent's request in the channels (docs/channels.md, "A sub-agent's request"), with the
 * real Chat SDK and Slack adapter against the Slack stand-in: a root agent calls `research`, a
 * sub-agent whose `refund` needs an approval; the child halts, and the root halts with the
 * request the sub-agent surfaced (`sub-<child's id>`, tool `research`). The store holds both
 * while they are open.
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import { IsInt, IsString, Min } from 'class-validator';
import { success, Tool, Toolkit } from 'toolnexus-ts';
import { AgentRunner, type RunResult } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FunctionModel } from 'toolnexus-ts/models';
import { createChannels, type Channels, type RouteAnswerers } from 'toolnexus-ts/channels';
import { ResumeCoordinator, rulesPolicy, type SuspendedCall } from 'toolnexus-ts/suspension';
import { listening } from '../fixtures/listen';
import { BOT_TOKEN, clickBody, SIGNING_SECRET, slackHeaders, slackStandIn, type SlackStandIn } from '../fixtures/channels/slack';
import { principalOf } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

class RefundArgs {
  @IsString() customer!: string;
  @IsInt() @Min(1) cents!: number;
}

let ran: number[];

@Tool({ name: 'refund', description: 'Refunds', args: RefundArgs, approval: { prompt: 'Refund 200 cents to ACME?' } })
class RefundTool {
  run(args: RefundArgs) {
    ran.push(args.cents);
    return success(`refunded ${args.cents}`);
  }
}

/** Finance may approve refunds, whoever surfaces them; nobody may approve `research` itself. */
const policy = () => rulesPolicy([{ principals: ['finance:ann', 'finance:ben', 'finance:cy'], tools: ['refund'] }]);

let closers: Array<() => Promise<void>>;
let slack: SlackStandIn;
let store: MemoryStore;
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
  store = new MemoryStore();
  const childTools = new Toolkit().register(RefundTool);
  const child = new AgentRunner({
    model: new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool')
        ? 'refund done'
        : { toolCalls: [{ id: 'r1', name: 'refund', arguments: { customer: 'ACME', cents: 200 } }] },
    ),
    toolkit: childTools,
    coordinator: new ResumeCoordinator({ toolkit: childTools, store, policy: policy() }),
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
  return { run, surfaced: pending.find((c) => c.tool === 'research')!, own: pending.find((c) => c.tool === 'refund')! };
}

/** The card posted for a call: its `ts`, if one was posted. */
function cardOf(id: string): string | undefined {
  const post = slack.of('chat.postMessage').find((p) => JSON.stringify(p.body.blocks).includes(`"value":"${id}"`));
  return post ? String(post.reply?.ts) : undefined;
}

async function click(user: string, id: string, ts: string): Promise<void> {
  const body = clickBody({ user, channel: 'C0FINANCE', ts, actionId: 'toolnexus.approve', value: id });
  expect((await fetch(`${webhook}/slack`, { method: 'POST', headers: slackHeaders(body), body })).status).toBe(200);
}

const cards = () => slack.of('chat.postMessage');
const updatesOf = (ts: string) => slack.of('chat.update').filter((u) => u.body.ts === ts);

describe('today (before one card per request)', () => {
  it('two cards are posted: the child’s own request (tool refund) and the one surfaced to the root (tool research)', async () => {
    const { surfaced, own } = await halted();
    expect(surfaced.request.id).toBe(`sub-${own.request.id}`);
    expect(cards()).toHaveLength(2);
    expect(cardOf(own.request.id)).toBeDefined();
    expect(cardOf(surfaced.request.id)).toBeDefined();
    expect(routed.map((r) => r.tool).sort()).toEqual(['refund', 'research', 'research']);
    expect(routed.find((r) => r.tool === 'refund')!.answerers.asking).toBeUndefined();
    expect(routed.find((r) => r.tool === 'research')!.answerers.asking).toEqual({ tool: 'refund', path: ['research'] });
  });

  it('a click on the surfaced card settles it, resumes the child (its own request settles too) and the root, once; the child’s card still offers Approve', async () => {
    const { surfaced, own } = await halted();
    const ownCard = cardOf(own.request.id)!;
    await click('U0ANN', surfaced.request.id, cardOf(surfaced.request.id)!);
    expect(ran).toEqual([200]);
    expect((await store.get(surfaced.request.id))?.status).toBe('resolved');
    expect((await store.get(own.request.id))?.status).toBe('resolved');
    expect(continued).toBe(1);
    expect(failures).toEqual([]);
    // The child's coordinator is not the one the channels observe: its card is left as it was.
    expect(updatesOf(ownCard)).toEqual([]);
  });

  it('a click on the child’s own card cannot be answered by the root’s runner: the clicker is told to try again, nothing changes', async () => {
    const { surfaced, own } = await halted();
    await click('U0ANN', own.request.id, cardOf(own.request.id)!);
    expect(String(slack.of('chat.postEphemeral').at(-1)?.body.text)).toContain('could not be recorded');
    expect(failures.map(String).join()).toContain('"refund" is not registered in this process');
    expect((await store.get(own.request.id))?.status).toBe('pending');
    expect((await store.get(surfaced.request.id))?.status).toBe('pending');
    expect(ran).toEqual([]);
    expect(continued).toBe(0);
  });
});
