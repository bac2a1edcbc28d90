/**
 * The chat back end after a crash, with real server processes (test/fixtures/chat/crash-child.ts)
 * on a shared SQLite file and on PostgreSQL (issue 32, items 1 and 13):
 *
 * - a server SIGKILLed after the approved tool ran and before its outcome was stored: once the
 *   lease has lapsed by the store's clock, the next answer (or message) takes the call over
 *   under a new fence; an idempotent tool runs again (its effect, keyed on `ctx.callId`,
 *   happens once), any other raises a `recovery` request; the chat goes on and its session is
 *   given back;
 * - a new message after such a crash of a tool that is not idempotent: the recovery request it
 *   raises is listed in the 409 (issue 45), the message not taken;
 * - two approvals of the same call sent to two servers at once: exactly one goes on.
 *
 * Leases are long (10 minutes) so nothing lapses by itself on a loaded machine: a test that
 * needs a lease lapsed moves it into the past in the store itself (`lapse`), as the store's
 * clock passing it would. Before that, the dead server's claim holds, whatever the load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerAs } from 'toolnexus-ts/agents';
import { startChild, until, type Started } from '../fixtures/children';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { readLedger } from '../fixtures/chat/agent';
import { buildCrashAgent, crashModel } from '../fixtures/chat/crash-agent';
import { dropSchema, postgresUrl, sqlRow, uniqueSchema } from '../fixtures/pg/server';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { sqliteDrivers, sqliteSpec } from '../fixtures/sqlite-drivers';

const LEASE_MS = 600_000;
const ai = loadAiClient();

let dir: string;
let pgUrl: string;
let model: MockServer;
const schemas: string[] = [];
const children: Started[] = [];

beforeAll(async () => {
  pgUrl = await postgresUrl();
  model = await startMockServer(crashModel);
});
afterAll(async () => {
  await model.close();
  for (const schema of schemas) await dropSchema(pgUrl, schema);
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-crash-'));
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGTERM');
    await child.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Store {
  spec: string;
  /** Moves the claim of suspension `id` past its lease, as the store's clock passing it would. */
  lapse(id: string): Promise<void>;
}

const STORES: Array<[string, () => Store]> = [
  ...sqliteDrivers().map((driver): [string, () => Store] => [
    `SQLite, ${driver.name}`,
    () => {
      const file = join(dir, 'chat.db');
      return {
        spec: sqliteSpec(file, driver.name),
        lapse: async (id) => {
          const db = driver.open(file);
          try {
            const { changes } = db.prepare("UPDATE suspensions SET lease_until = 0 WHERE id = ? AND status = 'resolving'").run(id) as {
              changes: number | bigint;
            };
            expect(Number(changes)).toBe(1);
          } finally {
            db.close();
          }
        },
      };
    },
  ]),
  [
    'PostgreSQL',
    () => {
      const schema = uniqueSchema('chatcrash');
      schemas.push(schema);
      return {
        spec: `pg:${pgUrl}#${schema}`,
        lapse: async (id) => {
          const table = `"${schema}".toolnexus_suspensions`;
          await sqlRow(pgUrl, `UPDATE ${table} SET lease_until_ms = 0 WHERE id = $1 AND status = 'resolving' RETURNING id`, [id]);
        },
      };
    },
  ],
];

async function server(spec: string, ledger: string, crash = false): Promise<{ child: Started; url: string }> {
  const child = startChild('chat/crash-child.ts', [spec, ledger, model.url, String(LEASE_MS), ...(crash ? ['crash'] : [])]);
  children.push(child);
  await until(() => child.stdout().includes('\n'), 30_000, 'the chat server to listen');
  const { port } = JSON.parse(child.stdout().split('\n')[0] as string) as { port: number };
  return { child, url: `http://127.0.0.1:${port}/api/chat` };
}

type Part = Record<string, unknown> & { type: string };

async function post(url: string, body: unknown): Promise<{ status: number; parts: Part[]; text: string; refused: string | null }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const refused = response.headers.get('x-toolnexus-refused');
  const text = await response.text();
  const parts =
    response.status === 200
      ? text
          .split('\n\n')
          .filter((event) => event.startsWith('data: {'))
          .map((event) => JSON.parse(event.slice('data: '.length)) as Part)
      : [];
  return { status: response.status, parts, text, refused };
}

/** The text the parts stream, deltas joined. */
const textOf = (parts: readonly Part[]): string =>
  parts
    .filter((part) => part.type === 'text-delta')
    .map((part) => part.delta as string)
    .join('');

const userMessage = (chatId: string, text: string) => ({
  id: chatId,
  messages: [{ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] }],
});

/** The page's answer: the assistant message with its tool part approved, as useChat sends it. */
function approvalMessage(chatId: string, asked: Part, tool: string) {
  return {
    id: chatId,
    messages: [
      {
        id: 'a-1',
        role: 'assistant',
        parts: [
          {
            type: `tool-${tool}`,
            toolCallId: asked.toolCallId,
            state: 'approval-responded',
            approval: { id: asked.approvalId, approved: true },
          },
        ],
      },
    ],
  };
}

async function askApproval(url: string, chatId: string, text: string): Promise<Part> {
  const asked = await post(url, userMessage(chatId, text));
  expect(asked.status).toBe(200);
  const request = asked.parts.find((part) => part.type === 'tool-approval-request');
  expect(request).toBeDefined();
  return request as Part;
}

/** Crashes a server in the approved tool's replay; returns the approval, and the server to answer next. */
async function crashInReplay(store: Store, ledger: string, tool: string, chatId: string): Promise<{ asked: Part; url: string }> {
  const crashing = await server(store.spec, ledger, true);
  const asked = await askApproval(crashing.url, chatId, `${tool} o-1 500`);
  await expect(post(crashing.url, approvalMessage(chatId, asked, tool))).rejects.toThrow();
  expect((await crashing.child.exited).signal).toBe('SIGKILL');
  expect(readLedger(ledger)).toHaveLength(1);
  const next = await server(store.spec, ledger);
  return { asked, url: next.url };
}

describe.each(STORES)('after a crash mid-replay (%s)', (_name, makeStore) => {
  it('an idempotent tool: the next answer takes over under fence 2, runs it again, its effect happens once, the chat goes on', async () => {
    const store = makeStore();
    const ledger = join(dir, 'ledger');
    const { asked, url } = await crashInReplay(store, ledger, 'credit', 'c-credit');
    const agent = buildCrashAgent(store.spec, ledger, model.url, LEASE_MS);
    try {
      const stuck = await agent.store.get(asked.approvalId as string);
      expect(stuck).toMatchObject({ status: 'resolving', fence: 1 });
      // Before the lease lapses, the claim of the dead server still holds.
      expect((await post(url, approvalMessage('c-credit', asked, 'credit'))).status).toBe(409);
      await store.lapse(asked.approvalId as string);

      const answered = await post(url, approvalMessage('c-credit', asked, 'credit'));
      expect(answered.status).toBe(200);
      expect(answered.parts).toContainEqual(expect.objectContaining({ type: 'tool-output-available', toolCallId: asked.toolCallId }));
      expect(answered.parts).toContainEqual(expect.objectContaining({ type: 'finish' }));
      expect(await agent.store.get(asked.approvalId as string)).toMatchObject({ status: 'resolved', fence: 2 });
      expect(readLedger(ledger)).toHaveLength(1);
      const session = await agent.runner.sessions?.loadSession('alice:c-credit');
      expect(session?.active).toBeUndefined();
      expect(session?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);

      const next = await post(url, userMessage('c-credit', 'hello'));
      expect(next.status).toBe(200);
      expect(textOf(next.parts)).toBe('You said: hello');
    } finally {
      await agent.store.close();
    }
  });

  it('a tool that is not idempotent: the takeover raises a recovery request instead of running it again', async () => {
    const store = makeStore();
    const ledger = join(dir, 'ledger');
    const { asked, url } = await crashInReplay(store, ledger, 'refund', 'c-refund');
    const agent = buildCrashAgent(store.spec, ledger, model.url, LEASE_MS);
    try {
      await store.lapse(asked.approvalId as string);
      const answered = await post(url, approvalMessage('c-refund', asked, 'refund'));
      expect(answered.status).toBe(200);
      const recovery = answered.parts.find((part) => part.type === 'data-toolnexus-request') as unknown as {
        data: { id: string; kind: string };
      };
      expect(recovery.data.kind).toBe('recovery');
      // The approval's own part, sent again with its id, offers nothing any more: the call is settled, a recovery follows it.
      expect(answered.parts).toContainEqual({
        type: 'data-toolnexus-approval',
        id: asked.approvalId,
        data: { id: asked.approvalId, toolCallId: asked.toolCallId, actions: [], settled: 'resolved' },
      });
      expect(await agent.store.get(asked.approvalId as string)).toMatchObject({ status: 'resolved', fence: 2, next: recovery.data.id });
      expect(readLedger(ledger)).toHaveLength(1);
      // The chat waits for the operator, and says so in a body the page (the AI SDK's client) shows:
      // the open recovery request, and that the message was not taken (the page keeps it).
      const transport = new ai.DefaultChatTransport({ api: url });
      const busy = (await transport
        .sendMessages({
          chatId: 'c-refund',
          messages: [{ id: 'u-hello', role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
          trigger: 'submit-message',
          messageId: undefined,
          abortSignal: undefined,
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        )) as { statusCode?: number; responseBody?: string } | undefined;
      expect(busy?.statusCode).toBe(409);
      const { error } = JSON.parse(busy?.responseBody ?? '{}') as { error: { reason: string; message: string; open: unknown[] } };
      expect(error.reason).toBe('busy');
      expect(error.message).toContain('not taken');
      expect(error.open).toEqual([expect.objectContaining({ id: recovery.data.id, kind: 'recovery', toolCallId: asked.toolCallId })]);

      // The operator says it did take effect: not again. The run goes on, the session is given back.
      const declined = await answerAs(agent.runner, { id: recovery.data.id, ok: false, reason: 'declined' }, { by: { id: 'ops' } });
      expect(declined.run?.result?.status).toBe('done');
      expect(readLedger(ledger)).toHaveLength(1);
      expect((await agent.runner.sessions?.loadSession('alice:c-refund'))?.active).toBeUndefined();
      expect((await post(url, userMessage('c-refund', 'hello'))).status).toBe(200);
    } finally {
      await agent.store.close();
    }
  });

  it('a new message takes the call over once the lease lapsed, finishes the run, then answers', async () => {
    const store = makeStore();
    const ledger = join(dir, 'ledger');
    const { asked, url } = await crashInReplay(store, ledger, 'credit', 'c-msg');
    const agent = buildCrashAgent(store.spec, ledger, model.url, LEASE_MS);
    try {
      await store.lapse(asked.approvalId as string);
      const next = await post(url, userMessage('c-msg', 'hello'));
      expect(next.status).toBe(200);
      expect(textOf(next.parts)).toBe('You said: hello');
      expect(await agent.store.get(asked.approvalId as string)).toMatchObject({ status: 'resolved', fence: 2 });
      expect(readLedger(ledger)).toHaveLength(1);
      const session = await agent.runner.sessions?.loadSession('alice:c-msg');
      expect(session?.active).toBeUndefined();
      expect(session?.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    } finally {
      await agent.store.close();
    }
  });

  it('a new message after a crash in a tool that is not idempotent: the recovery it raises is listed in the 409, the message kept by the page', async () => {
    const store = makeStore();
    const ledger = join(dir, 'ledger');
    const { asked, url } = await crashInReplay(store, ledger, 'refund', 'c-next');
    const agent = buildCrashAgent(store.spec, ledger, model.url, LEASE_MS);
    try {
      await store.lapse(asked.approvalId as string);
      const busy = await post(url, userMessage('c-next', 'hello'));
      expect(busy.status).toBe(409);
      const { error } = JSON.parse(busy.text) as { error: { message: string; open: Array<{ id: string; kind: string }> } };
      expect(error.message).toContain('not taken');
      expect(error.open).toEqual([expect.objectContaining({ kind: 'recovery', toolCallId: asked.toolCallId })]);
      expect(await agent.store.get(asked.approvalId as string)).toMatchObject({ status: 'resolved', fence: 2, next: error.open[0]?.id });
      expect(readLedger(ledger)).toHaveLength(1);

      // The operator confirms it ran; the page sends its message again, and it is taken.
      await answerAs(agent.runner, { id: error.open[0]?.id as string, ok: false, reason: 'declined' }, { by: { id: 'ops' } });
      const again = await post(url, userMessage('c-next', 'hello'));
      expect(again.status).toBe(200);
      expect(textOf(again.parts)).toBe('You said: hello');
      expect(readLedger(ledger)).toHaveLength(1);
    } finally {
      await agent.store.close();
    }
  });

  it('two approvals of one call sent to two servers at once: exactly one goes on, the other is not applied', async () => {
    const store = makeStore();
    const ledger = join(dir, 'ledger');
    const [a, b] = await Promise.all([server(store.spec, ledger), server(store.spec, ledger)]);
    const chats = ['r-1', 'r-2', 'r-3', 'r-4'];
    const asked = await Promise.all(chats.map((chatId) => askApproval(a.url, chatId, `credit ${chatId} 100`)));
    const raced = await Promise.all(
      chats.map((chatId, i) => Promise.all([a.url, b.url].map((url) => post(url, approvalMessage(chatId, asked[i]!, 'credit'))))),
    );
    for (const pair of raced) {
      // The loser either met the winner's claim (409) or found the call settled: shown its outcome, nothing applied.
      const applied = pair.filter((response) => response.status === 200 && response.refused === null);
      expect(applied).toHaveLength(1);
      const loser = pair.find((response) => !applied.includes(response));
      expect(loser?.status === 409 ? loser.text : loser?.refused).toContain('not_pending');
    }
    expect(readLedger(ledger)).toHaveLength(chats.length);
  });
});
