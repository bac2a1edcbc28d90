/**
 * A stored chat given back as UI messages (`chatThread`, and its GET route over real HTTP on
 * 127.0.0.1), on a real SQLite file: a halted run's open approval is the tool part the stream
 * sent, with its suspension's id, its prompt and the call's `@Sensitive()` argument masked;
 * another principal's chat and a chat that does not exist are empty; a request without a
 * principal or a chat id is refused.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatThread, chatThreadHandler, type ChatToolUIPart } from 'toolnexus-ts/chat';
import { buildChatAgent, chatModel, PayCardTool, type ChatAgent } from '../fixtures/chat/agent';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const CANARY = '4111-CANARY-1881';
let dir: string;
let model: MockServer;
let agent: ChatAgent;
let http: Server;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-thread-'));
  model = await startMockServer(chatModel);
  agent = buildChatAgent(join(dir, 'chat.db'), join(dir, 'ledger'), model.url);
  agent.runner.toolkit.register(new PayCardTool());
  const handler = chatThreadHandler(agent.runner, {
    principal: (req) => (typeof req.headers['x-user'] === 'string' ? { id: req.headers['x-user'] } : undefined),
  });
  http = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
});
afterEach(async () => {
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(query: string, user?: string): Promise<{ status: number; body: unknown }> {
  const port = (http.address() as AddressInfo).port;
  const response = await fetch(`http://127.0.0.1:${port}/api/chat${query}`, { headers: user ? { 'x-user': user } : {} });
  return { status: response.status, body: await response.json() };
}

it('a halted chat: the open approval as the stream sent it, its id the stored request, prompt and argument masked', async () => {
  const halted = await agent.runner.run(`pay ${CANARY} 2500`, { session: 'alice:chat-pay', runId: 'run-pay' });
  expect(halted.status).toBe('halted');
  const thread = await chatThread(agent.runner, 'chat-pay', { id: 'alice' });
  expect(thread.map((m) => [m.id, m.role])).toEqual([
    ['stored-0', 'user'],
    ['msg-run-pay', 'assistant'],
  ]);
  const tool = thread[1]?.parts.find((part): part is ChatToolUIPart => part.type === 'tool-pay_card');
  expect(tool).toEqual({
    type: 'tool-pay_card',
    toolCallId: 'call_pay',
    state: 'approval-requested',
    input: { card: '[redacted]', cents: 2500 },
    approval: { id: halted.pending?.id, requestReason: 'Charge 2500 cents to card [redacted]?' },
  });
  // The user's own message quoted it too: nothing of it is given back.
  expect(JSON.stringify(thread)).not.toContain(CANARY);

  const served = await get('?id=chat-pay', 'alice');
  expect(served).toEqual({ status: 200, body: thread });
});

it("another principal's chat and an unknown chat are empty; no principal is 401, no chat id 400", async () => {
  await agent.runner.run('refund o-1 100', { session: 'alice:chat-1' });
  expect(await get('?id=chat-1', 'bob')).toEqual({ status: 200, body: [] });
  expect(await get('?id=nothing-here', 'alice')).toEqual({ status: 200, body: [] });
  expect((await get('?id=chat-1')).status).toBe(401);
  expect(await get('', 'alice')).toMatchObject({ status: 400, body: { error: { reason: 'bad_body' } } });
});
