/**
 * A halted chat whose recovery fails is logged (issue 32, item 1): the page is told the chat is
 * busy, and the host's logger gets the run and the error's code, never its message (which may
 * quote a secret).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerAs } from 'toolnexus-ts/agents';
import { chatHandler } from 'toolnexus-ts/chat';
import { buildChatAgent, type ChatAgent } from '../fixtures/chat/agent';
import { json, openaiCalls, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

let dir: string;
let model: MockServer;
let agent: ChatAgent;
let http: Server;

afterEach(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a recovery that fails is logged by code, without the secret its message quotes, and the page gets 409', async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-log-'));
  model = await startMockServer([
    openaiCalls([{ id: 'call_refund_o-1', name: 'refund', args: { order: 'o-1', cents: 100 } }]),
    json(500, { error: { message: 'upstream said sk-secret-123' } }),
  ]);
  agent = buildChatAgent(join(dir, 'chat.db'), join(dir, 'ledger'), model.url);
  const logged: string[] = [];
  const handler = chatHandler(agent.runner, { principal: () => ({ id: 'alice' }), logger: { error: (message) => logged.push(message) } });
  http = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
  const send = (text: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c-1', messages: [{ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] }] }),
    });

  expect(await (await send('refund o-1 100')).text()).toContain('tool-approval-request');
  const [call] = await agent.runner.coordinator.list({ status: 'pending' });
  // Settled without the runner (the inbox with a coordinator alone): the run is left halted.
  await answerAs(agent.runner.coordinator, { id: call!.request.id, ok: true }, { by: { id: 'ops' } });

  const next = await send('hello');
  expect(next.status).toBe(409);
  expect(logged).toEqual([`toolnexus chat: run ${call!.runId}: recovering the run failed: TOOLNEXUS_MODEL_HTTP`]);
  expect(logged.join('\n')).not.toContain('sk-secret');
});
