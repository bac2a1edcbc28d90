/**
 * One takeover rule at every door (docs/suspension.md, "After a crash: the takeover rule";
 * issue 45): the same crash — an approval claimed by a process that ran the tool and died
 * before storing its outcome — reached through the inbox, `answerAs`, the CLI, the chat, A2A,
 * the recovery loop and MCP ends the same way. A tool that is not idempotent never runs again: its
 * call becomes a `recovery` request, and answering that settles the run; an idempotent one is
 * replayed with the same idempotency key and the run finishes with no person asked.
 *
 * The dead holder is a claim taken on the real SQLite file and never completed, after the
 * tool's effect was written (what a SIGKILL at that point leaves; test/nest/crash.process.test.ts
 * kills a real Nest process there). Each door is its real entry point: the inbox, chat and A2A
 * handlers on 127.0.0.1, the CLI as a child process. The lease is short and waited out on the
 * store's own clock (SQLite's is this host's).
 */
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerAs, InvalidResumeError, type AgentRunner, type RunStore } from 'toolnexus-ts/agents';
import type { SuspensionStore } from 'toolnexus-ts/suspension';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { chatHandler } from 'toolnexus-ts/chat';
import { pendingOf } from 'toolnexus-ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { serveMcp } from 'toolnexus-ts/mcp';
import { startChild, until } from '../fixtures/children';
import { listening } from '../fixtures/listen';
import { readLedger } from '../fixtures/chat/agent';
import { buildCrashAgent, crashModel } from '../fixtures/chat/crash-agent';
import { clientOf, data, send, text } from '../fixtures/a2a/harness';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const LEASE_MS = 300;
const ALICE = { id: 'alice' };
const TOKEN = 'alice-token-0123456789abcdef';

let dir: string;
let model: MockServer;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  model = await startMockServer(crashModel);
});
afterAll(async () => model.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-takeover-'));
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

interface Agent {
  runner: AgentRunner;
  store: SuspensionStore & RunStore;
  file: string;
  ledger: string;
}

const listen = (handle: (req: IncomingMessage, res: import('node:http').ServerResponse) => void): Promise<string> =>
  listening(createServer(handle), closers);

/** Where the run is started and how the approval is given again after the crash: one door. */
interface Door {
  /** Who answers through it (the CLI's `--as alice` is `cli:alice`): the dead holder's claim was theirs. */
  by?: { id: string };
  /** Starts the run that asks for `text`'s approval; its run and the approval's id. */
  start(agent: Agent, message: string): Promise<{ runId: string; id: string }>;
  /** Gives the same approval again through this door (or, for the loop, no answer at all). */
  answer(agent: Agent, runId: string, id: string): Promise<void>;
}

const viaRunner = async (agent: Agent, message: string) => {
  const result = await agent.runner.run(message);
  expect(result.status).toBe('halted');
  return { runId: result.runId, id: result.pending?.id as string };
};

const DOORS: Array<[string, () => Promise<Door>]> = [
  [
    'answerAs',
    async () => ({
      start: viaRunner,
      answer: async (agent, _runId, id) => void (await answerAs(agent.runner, { id, ok: true }, { by: ALICE })),
    }),
  ],
  [
    'the inbox JSON API',
    async () => {
      let base = '';
      return {
        async start(agent, message) {
          const inbox = createInbox({ runner: agent.runner, authorize: bearerTokens([{ token: TOKEN, principal: ALICE }]) });
          closers.push(async () => inbox.close());
          base = await listen((req, res) => void inbox(req, res));
          return viaRunner(agent, message);
        },
        async answer(_agent, _runId, id) {
          const response = await fetch(`${base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ ok: true }),
          });
          expect(response.status).toBe(200);
        },
      };
    },
  ],
  [
    'the CLI',
    async () => ({
      by: { id: 'cli:alice' },
      start: viaRunner,
      async answer(agent, _runId, id) {
        const tools = join(__dirname, '..', 'fixtures', 'takeover-tools.ts');
        const exit = await startChild(
          join('..', '..', 'src', 'cli', 'main.ts'),
          ['pending', 'approve', id, '--as', 'alice', '--tools', tools, '--store', `sqlite:${agent.file}`],
          { CRASH_LEDGER: agent.ledger, CRASH_MODEL_URL: model.url, CRASH_LEASE_MS: String(LEASE_MS) },
        ).exited;
        expect([exit.code, exit.stderr]).toEqual([0, '']);
      },
    }),
  ],
  [
    'the chat',
    async () => {
      let url = '';
      let asked: { toolCallId: string; approvalId: string; tool: string } | undefined;
      return {
        async start(agent, message) {
          const handler = chatHandler(agent.runner, { principal: () => ALICE });
          url = `${await listen((req, res) => void handler(req, res))}/api/chat`;
          const body = { id: 'chat-1', messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text: message }] }] };
          const parts = await chatPost(url, body);
          const request = parts.find((part) => part.type === 'tool-approval-request') as unknown as {
            toolCallId: string;
            approvalId: string;
          };
          asked = { ...request, tool: message.split(' ')[0] as string };
          const call = await agent.store.get(request.approvalId);
          return { runId: call?.runId as string, id: request.approvalId };
        },
        async answer() {
          const { toolCallId, approvalId, tool } = asked as NonNullable<typeof asked>;
          const part = { type: `tool-${tool}`, toolCallId, state: 'approval-responded', approval: { id: approvalId, approved: true } };
          await chatPost(url, { id: 'chat-1', messages: [{ id: 'a-1', role: 'assistant', parts: [part] }] });
        },
      };
    },
  ],
  [
    'A2A',
    async () => {
      let task: { id: string; contextId: string } | undefined;
      let client: Awaited<ReturnType<typeof clientOf>> | undefined;
      return {
        async start(agent, message) {
          // Its own process: the A2A SDK is ESM, which jest on Node 20 cannot load in process.
          const child = startChild('takeover-a2a-child.ts', [agent.file, agent.ledger, model.url, String(LEASE_MS)]);
          closers.push(async () => {
            child.kill('SIGTERM');
            await child.exited;
          });
          await until(() => child.stdout().includes('\n'), 30_000, 'the A2A server to listen');
          const { port } = JSON.parse(child.stdout().split('\n')[0] as string) as { port: number };
          client = await clientOf(`http://127.0.0.1:${port}`, 'alice');
          const waiting = await send(client, [text(message)]);
          task = { id: waiting.id, contextId: waiting.contextId };
          const [open] = await agent.store.list({ runId: waiting.id, status: 'pending' });
          return { runId: waiting.id, id: open?.request.id as string };
        },
        async answer() {
          await send(client!, [data({ ok: true })], task);
        },
      };
    },
  ],
  [
    'the recovery loop',
    async () => ({
      start: viaRunner,
      async answer(agent) {
        const recovery = agent.runner.startRecovery({ intervalMs: 60_000 });
        closers.push(() => recovery.stop());
        await recovery.tick();
      },
    }),
  ],
];

type Part = Record<string, unknown> & { type: string };

async function chatPost(url: string, body: unknown): Promise<Part[]> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const raw = await response.text();
  expect(response.status).toBe(200);
  return raw
    .split('\n\n')
    .filter((event) => event.startsWith('data: {'))
    .map((event) => JSON.parse(event.slice('data: '.length)) as Part);
}

function openAgent(): Agent {
  const file = join(dir, 'app.db');
  const ledger = join(dir, 'ledger');
  const { runner, store } = buildCrashAgent(`sqlite:${file}`, ledger, model.url, LEASE_MS);
  closers.push(() => store.close());
  return { runner, store, file, ledger };
}

/**
 * What a process SIGKILLed right after the approved tool's effect leaves: the approval claimed
 * (by alice, who approved), the effect in the ledger, no outcome. Then its lease lapses.
 */
async function crashAfterEffect(agent: Agent, id: string, effect: string, by: { id: string } = ALICE): Promise<void> {
  const claim = await agent.store.claim(id, { id, ok: true }, LEASE_MS, { by });
  expect(claim?.fence).toBe(1);
  appendFileSync(agent.ledger, `${effect} ${process.pid}\n`);
  const until = Date.parse(claim?.call.leaseUntil as string);
  while (Date.now() <= until) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The run's checkpoint caught up with the store, as any process with its runner leaves it. */
async function caughtUp(agent: Agent, runId: string) {
  await agent.runner.continue(runId).catch((error: unknown) => {
    if (!(error instanceof InvalidResumeError)) throw error;
  });
  const loaded = await agent.store.loadRun(runId);
  return loaded?.state as { phase: string; halted?: { calls: Array<{ pendingId?: string }> } };
}

describe.each(DOORS)('the same crash reached through %s', (_door, makeDoor) => {
  it('a tool that is not idempotent: not run again, its call becomes a recovery request, and answering it settles the run', async () => {
    const door = await makeDoor();
    const agent = openAgent();
    const { runId, id } = await door.start(agent, 'refund o-1 500');
    await crashAfterEffect(agent, id, 'refund o-1 call_refund_o-1', door.by);

    await door.answer(agent, runId, id);
    expect(readLedger(agent.ledger)).toHaveLength(1);
    const taken = await agent.store.get(id);
    expect(taken).toMatchObject({ status: 'resolved', fence: 2, answeredBy: door.by ?? ALICE });
    const recovery = await agent.store.get(taken?.next as string);
    expect(recovery).toMatchObject({ status: 'pending', tool: 'refund', request: { kind: 'recovery' } });
    expect(recovery?.request.prompt).toContain('may have taken effect');
    expect(pendingOf(taken!.outcome)?.id).toBe(recovery?.request.id);
    const state = await caughtUp(agent, runId);
    expect(state.phase).toBe('halted');
    expect(state.halted?.calls.map((call) => call.pendingId)).toEqual([recovery?.request.id]);

    // The operator checked: it did take effect. The run goes on without running it again.
    const settled = await answerAs(agent.runner, { id: recovery!.request.id, ok: false, reason: 'declined' }, { by: { id: 'ops' } });
    expect(settled.run?.result?.status).toBe('done');
    expect(readLedger(agent.ledger)).toHaveLength(1);
    expect(await agent.store.list({ status: 'resolving' })).toEqual([]);
  });

  it('an idempotent tool: replayed with the same idempotency key, the run finishes, nobody is asked', async () => {
    const door = await makeDoor();
    const agent = openAgent();
    const { runId, id } = await door.start(agent, 'credit o-2 500');
    const first = await agent.store.get(id);
    await crashAfterEffect(agent, id, `credit o-2 ${first?.callId as string}`, door.by);

    await door.answer(agent, runId, id);
    // Its effect is keyed on the call: the replay found it done and added nothing.
    expect(readLedger(agent.ledger)).toHaveLength(1);
    const taken = await agent.store.get(id);
    expect(taken).toMatchObject({ status: 'resolved', fence: 2, outcome: { isError: false } });
    expect(taken?.next).toBeUndefined();
    expect((await caughtUp(agent, runId)).phase).toBe('done');
    expect(await agent.store.list({ status: 'pending' })).toEqual([]);
    expect(await agent.store.list({ status: 'resolving' })).toEqual([]);
  });
});

/**
 * MCP answers inside the tool call that asked (an elicitation), so the crash reaches it there:
 * another process claimed the approval, ran the tool and died while this client was still asked.
 * The client's accept then meets the lapsed claim; the rule applies as at every other door.
 */
describe('the same crash reached through MCP (serveMcp, the SDK client’s elicitation)', () => {
  async function mcpClient(agent: Agent, onElicit: (message: string) => Promise<{ action: 'accept' | 'decline'; content?: object }>) {
    const server = await serveMcp(agent.runner.coordinator, {
      transport: 'http',
      authorize: bearerTokens([{ token: TOKEN, principal: ALICE }]),
    });
    closers.push(() => server.close());
    const client = new Client({ name: 'takeover', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request) => onElicit(request.params.message));
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }),
    );
    closers.push(() => client.close());
    return client;
  }

  it('a tool that is not idempotent: not run again; the recovery request is put to the client, whose decline settles the call', async () => {
    const agent = openAgent();
    const asked: string[] = [];
    const client = await mcpClient(agent, async (message) => {
      asked.push(message);
      if (asked.length > 1) return { action: 'decline' };
      const [open] = await agent.store.list({ status: 'pending' });
      await crashAfterEffect(agent, open!.request.id, 'refund o-3 -');
      return { action: 'accept', content: {} };
    });
    const result = (await client.callTool({ name: 'refund', arguments: { order: 'o-3', cents: 500 } })) as { isError?: boolean };
    expect(asked).toHaveLength(2);
    expect(asked[1]).toContain('may have taken effect');
    expect(result.isError).toBe(true);
    expect(readLedger(agent.ledger)).toHaveLength(1);
    const [taken] = await agent.store.history({ tool: 'refund', status: 'resolved' });
    expect(taken).toMatchObject({ fence: 2, answeredBy: ALICE });
    expect(await agent.store.get(taken?.next as string)).toMatchObject({ status: 'declined', request: { kind: 'recovery' } });
    expect(await agent.store.list({ status: 'resolving' })).toEqual([]);
  });

  it('an idempotent tool: replayed under the takeover, nobody asked again', async () => {
    const agent = openAgent();
    const asked: string[] = [];
    const client = await mcpClient(agent, async (message) => {
      asked.push(message);
      const [open] = await agent.store.list({ status: 'pending' });
      await crashAfterEffect(agent, open!.request.id, 'credit o-4 -');
      return { action: 'accept', content: {} };
    });
    const result = (await client.callTool({ name: 'credit', arguments: { order: 'o-4', cents: 500 } })) as { isError?: boolean };
    expect(asked).toHaveLength(1);
    expect(result.isError).toBeFalsy();
    expect(readLedger(agent.ledger)).toHaveLength(1);
    const [taken] = await agent.store.history({ tool: 'credit' });
    expect(taken).toMatchObject({ status: 'resolved', fence: 2 });
    expect(taken?.next).toBeUndefined();
  });
});
