/**
 * Steering a chat's run from another server process on the same store (issue 49; docs/chat.md,
 * "Steering"), on a SQLite file shared by two processes and on PostgreSQL: the test's server
 * drives the run (durable steps: it is checkpointed while it runs), its model waiting at a gate
 * on the first turn; a second tab of the same chat posts to the other process
 * (test/fixtures/chat/stream-child.ts), which steers the message through the run store's queue
 * instead of answering 409 `busy`. The gate opens: the run's own response shows the message
 * `taken` once, the model's next request carries it once, and the thread keeps it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { chatHandler } from 'toolnexus-ts/chat';
import { startChild, until, type Started } from '../fixtures/children';
import { loadAiClient, pageChat } from '../fixtures/chat/ai-client';
import { buildStreamAgent, gatedModel } from '../fixtures/chat/stream-agent';
import { SHARED_STORES } from '../fixtures/store-spec';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const ai = loadAiClient();
const STEERED = 'only the third quarter';

describe.each(SHARED_STORES)('steering a chat’s run from another server process, on $name', ({ make }) => {
  let dir: string;
  let drop: () => Promise<void>;
  let model: MockServer;
  let open: () => void;
  let agent: ReturnType<typeof buildStreamAgent>;
  let http: Server;
  let handled: Promise<void>[];
  let urlA: string;
  let urlB: string;
  let child: Started;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-steer-'));
    const made = await make(dir);
    drop = () => made.drop();
    const gate = new Promise<void>((resolve) => (open = resolve));
    model = await startMockServer(gatedModel(() => gate));
    agent = buildStreamAgent(made.spec, join(dir, 'ledger'), model.url, 'step');
    const handler = chatHandler(agent.runner, { principal: (req) => ({ id: String(req.headers['x-user'] ?? 'alice') }) });
    handled = [];
    http = createServer((req, res) => void handled.push(handler(req, res)));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    urlA = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
    // The store's tables exist before the other process opens it (each would make them; one does).
    await agent.runner.sessions?.loadSession('warm-up');
    child = startChild('chat/stream-child.ts', [made.spec, join(dir, 'ledger'), model.url]);
    await until(() => child.stdout().includes('\n') || child.hasExited(), 60_000, 'the chat server process to listen');
    const { port } = JSON.parse(child.stdout().split('\n')[0] as string) as { port: number };
    urlB = `http://127.0.0.1:${port}/api/chat`;
  }, 90_000);
  afterAll(async () => {
    open();
    await Promise.all(handled);
    child.kill('SIGTERM');
    await child.exited;
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await model.close();
    await (agent.store as unknown as { close(): Promise<void> }).close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the other process queues it, and the driving process’s next turn takes it once', async () => {
    const first = pageChat<UIMessage>(ai, { id: 'c-steer', api: urlA });
    const sending = first.chat.sendMessage({ text: 'report' });
    await until(() => model.requests.length === 1, 30_000, 'the first model request');
    // The run is checkpointed while it runs before the second tab sends.
    await until(() => first.state.messages.some((message) => message.role === 'assistant'), 30_000, 'the first parts');

    const second = pageChat<UIMessage>(ai, { id: 'c-steer', api: urlB });
    await second.chat.sendMessage({ text: STEERED });
    expect(second.chat.error).toBeUndefined();
    const id = (second.state.messages[0] as UIMessage).id;
    const steerOf = (messages: readonly UIMessage[]) =>
      messages.flatMap((message) => message.parts).filter((part) => part.type === 'data-toolnexus-steer');
    expect(steerOf(second.state.messages)).toEqual([
      { type: 'data-toolnexus-steer', id: `steer-${id}`, data: { messageId: id, text: STEERED, state: 'queued' } },
    ]);

    open();
    await sending;
    expect(first.chat.error).toBeUndefined();
    expect(steerOf(first.state.messages)).toEqual([
      { type: 'data-toolnexus-steer', id: `steer-${id}`, data: { messageId: id, text: STEERED, state: 'taken' } },
    ]);
    const carried = model.requests.map(
      (request) =>
        (request.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user' && m.content === STEERED)
          .length,
    );
    expect(carried[0]).toBe(0);
    expect(carried.slice(1).every((count) => count === 1)).toBe(true);
    expect(carried.length).toBeGreaterThan(1);
    const session = await agent.runner.sessions?.loadSession('alice:c-steer');
    expect(session?.messages.filter((message) => message.role === 'user' && message.content === STEERED)).toEqual([
      { role: 'user', content: STEERED, id },
    ]);
  }, 120_000);
});
