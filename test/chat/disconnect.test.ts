/**
 * The page going away after a tool ran (issue 32, item 2): a real HTTP client disconnects once
 * the tool-result part has arrived; the run goes on to its end, the session records the call
 * and its result, and sending the same message again does not run the tool again: it is
 * answered from the session (issue 45; test/chat/resend.test.ts has the AI SDK's own client).
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatHandler } from 'toolnexus-ts/chat';
import { readLedger } from '../fixtures/chat/agent';
import { buildCrashAgent, crashModel } from '../fixtures/chat/crash-agent';

import { startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

let dir: string;
let model: MockServer;
let http: Server;
let agent: ReturnType<typeof buildCrashAgent>;

afterEach(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** POSTs `body` and resolves when a part of `type` arrives, then tears the connection down (the page went away). */
function postUntil(url: string, body: unknown, type: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const seen: string[] = [];
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let buffered = '';
      res.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        const events = buffered.split('\n\n');
        buffered = events.pop() ?? '';
        for (const event of events) {
          if (!event.startsWith('data: {')) continue;
          const part = JSON.parse(event.slice('data: '.length)) as { type: string };
          seen.push(part.type);
          if (part.type === type) {
            req.destroy();
            resolve(seen);
          }
        }
      });
      res.on('error', () => undefined);
      res.on('end', () => reject(new Error(`the stream ended before a ${type} part: ${seen.join(', ')}`)));
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify(body));
  });
}

it('a client gone after the tool result: the run ends anyway, the session holds the call and its result, a resend does not transfer again', async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-gone-'));
  const ledger = join(dir, 'ledger');
  let gone!: () => void;
  const clientGone = new Promise<void>((resolve) => (gone = resolve));
  // After the tool result, the model answers only once the client has gone.
  const reply: Reply = async (res, req, index) => {
    const messages = (req.body.messages ?? []) as Array<{ role: string }>;
    if (messages[messages.length - 1]?.role === 'tool') await clientGone;
    return crashModel(res, req, index);
  };
  model = await startMockServer(reply);
  agent = buildCrashAgent(`sqlite:${join(dir, 'chat.db')}`, ledger, model.url, 60_000);
  const handler = chatHandler(agent.runner, { principal: () => ({ id: 'alice' }) });
  const closed: Promise<void>[] = [];
  http = createServer((req, res) => {
    closed.push(new Promise((resolve) => res.on('close', () => resolve())));
    void handler(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
  const message = { id: 'c-1', messages: [{ id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'transfer o-1 700' }] }] };

  const seen = await postUntil(url, message, 'tool-output-available');
  expect(seen).toContain('tool-input-available');
  await Promise.all(closed);
  gone();
  expect(readLedger(ledger)).toHaveLength(1);

  // The run goes on without its client, and gives the session back with what ran.
  const sessions = agent.runner.sessions!;
  let session = await sessions.loadSession('alice:c-1');
  for (let i = 0; i < 500 && session?.active !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    session = await sessions.loadSession('alice:c-1');
  }
  expect(session?.active).toBeUndefined();
  const messages = session?.messages ?? [];
  expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  expect(messages[1]).toMatchObject({ toolCalls: [{ id: 'call_transfer_o-1', name: 'transfer' }] });
  expect(messages[2]).toMatchObject({ role: 'tool', callId: 'call_transfer_o-1' });

  // The page sends the same message again: answered from the session; neither the model nor the transfer runs.
  const asked = model.requests.length;
  const again = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(message) });
  expect(again.status).toBe(200);
  const text = await again.text();
  expect(text).toContain('"type":"tool-output-available","toolCallId":"call_transfer_o-1"');
  expect(model.requests).toHaveLength(asked);
  expect(readLedger(ledger)).toHaveLength(1);
});
