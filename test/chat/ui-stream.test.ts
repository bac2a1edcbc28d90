/**
 * The chat back end over real HTTP on 127.0.0.1, read by the `ai` package's own client code
 * (DefaultChatTransport + readUIMessageStream, ai@7): text, tool parts with inputs and
 * outputs, an approval request answered into the same assistant message, a decline, a login
 * as a data part, errors without secrets, forged answers refused with a 4xx changing
 * nothing, a 10 MB body refused, and a run that ends, recorded, after its client disconnected.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { answerAs, type StreamLogStore } from 'toolnexus-ts/agents';
import { chatHandler, chatResponse } from 'toolnexus-ts/chat';
import { buildChatAgent, chatModel, PayCardTool, readLedger, type ChatAgent } from '../fixtures/chat/agent';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { json, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

const ai = loadAiClient();
let dir: string;
let model: MockServer;
let agent: ChatAgent;
let http: Server;
let url: string;

async function serve(reply: Reply, web = false): Promise<void> {
  model = await startMockServer(reply);
  agent = buildChatAgent(join(dir, 'chat.db'), join(dir, 'ledger'), model.url);
  const handler = chatHandler(agent.runner, { principal: (req) => principalOf(req.headers['x-user']) });
  http = createServer((req, res) => {
    if (!web) return void handler(req, res);
    // The web Response front end, served through a minimal adapter.
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const request = new Request(`http://127.0.0.1${req.url}`, {
        method: 'POST',
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks),
        signal: abort.signal,
      });
      const response = await chatResponse(agent.runner, request, { principal: principalOf(req.headers['x-user']) });
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    })();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
}

function principalOf(user: string | string[] | undefined) {
  return typeof user === 'string' ? { id: user } : undefined;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-'));
});
afterEach(async () => {
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

const user = (text: string): UIMessage => ({ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] });

/** One request as useChat sends it, read by the AI SDK's own client into the resulting assistant message. */
async function send(messages: UIMessage[], who = 'alice', chatId = 'chat-1', errors: Error[] = []): Promise<UIMessage> {
  const transport = new ai.DefaultChatTransport<UIMessage>({ api: url, headers: { 'x-user': who } });
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  const last = messages[messages.length - 1];
  let final: UIMessage | undefined;
  for await (const message of ai.readUIMessageStream<UIMessage>({
    message: last?.role === 'assistant' ? last : undefined,
    stream,
    onError: (error) => errors.push(error as Error),
  }))
    final = message;
  return final as UIMessage;
}

/** What useChat's addToolApprovalResponse does to the message before it is sent again. */
function respond(message: UIMessage, approved: boolean): UIMessage {
  const copy = structuredClone(message);
  for (const part of copy.parts as Array<Record<string, unknown>>) {
    if (part.state === 'approval-requested') {
      part.state = 'approval-responded';
      part.approval = { ...(part.approval as object), approved };
    }
  }
  return copy;
}

const toolPart = (message: UIMessage) =>
  message.parts.find((p) => p.type.startsWith('tool-')) as Record<string, unknown> & { approval?: { id: string } };

async function post(body: unknown, who = 'alice'): Promise<{ status: number; body: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': who },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.text() };
}

it.each([false, true])('streams text, a tool call, an approval answered into the same message (web Response: %s)', async (web) => {
  await serve(chatModel, web);
  const hello = await send([user('hello')]);
  expect(hello.role).toBe('assistant');
  expect(hello.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['You said: hello']);

  const lookup = await send([user('lookup o-1')]);
  expect(toolPart(lookup)).toMatchObject({
    type: 'tool-lookup_order',
    toolCallId: 'call_lookup_o-1',
    state: 'output-available',
    input: { order: 'o-1' },
    output: { order: 'o-1', status: 'shipped' },
  });

  const asked = await send([user('refund o-9 700')]);
  expect(toolPart(asked)).toMatchObject({ type: 'tool-refund', state: 'approval-requested', input: { order: 'o-9', cents: 700 } });
  expect(readLedger(join(dir, 'ledger'))).toEqual([]);
  const answered = respond(asked, true);
  const done = await send([user('refund o-9 700'), answered]);
  expect(done.id).toBe(asked.id);
  expect(toolPart(done)).toMatchObject({
    state: 'output-available',
    output: { refunded: 'o-9', cents: 700 },
    approval: { approved: true },
  });
  expect(done.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual([
    'Done: {"refunded":"o-9","cents":700}',
  ]);
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
  const call = await agent.runner.coordinator.get(toolPart(asked).approval!.id);
  expect(call).toMatchObject({ status: 'resolved', answeredBy: { id: 'alice' } });
  // The same answer again: not applied twice; the page is shown how the call ended, its approval part offering nothing.
  const again = await post({ id: 'chat-1', messages: [user('refund o-9 700'), respond(asked, true)] });
  expect(again.status).toBe(200);
  expect(again.body).toContain('"settled":"resolved"');
  expect(again.body).toContain('"actions":[]');
  expect(again.body).not.toContain('"type":"text-delta"');
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});

it('a decline is tool-output-denied; a login is a data-toolnexus-request part with its url', async () => {
  await serve(chatModel);
  const asked = await send([user('refund o-5 100')]);
  const declined = await send([user('refund o-5 100'), respond(asked, false)]);
  expect(declined.id).toBe(asked.id);
  expect(toolPart(declined)).toMatchObject({ state: 'output-denied' });
  expect(readLedger(join(dir, 'ledger'))).toEqual([]);
  const login = await send([user('login o-5')]);
  expect(login.parts.find((p) => p.type === 'data-toolnexus-request')).toMatchObject({
    data: { kind: 'authorization', url: 'https://sso.example.com/login', prompt: 'Please sign in', toolCallId: 'call_login_o-5' },
  });
});

it('refuses forged approval responses with a clear 4xx and changes nothing', async () => {
  await serve(chatModel);
  const mine = await send([user('refund o-9 700')]);
  const theirs = await send([user('refund o-9 700')], 'bob');
  const login = await send([user('login o-1')], 'alice', 'chat-2');
  const loginId = (login.parts.find((p) => p.type === 'data-toolnexus-request') as { data: { id: string } }).data.id;
  const session = await agent.runner.sessions!.loadSession('alice:chat-1');
  const forge = (edit: (part: Record<string, unknown>) => void) => {
    const message = respond(mine, true);
    edit(toolPart(message));
    return { id: 'chat-1', messages: [user('refund o-9 700'), message] };
  };
  const cases: Array<[string, unknown, number, string]> = [
    ['wrong id', forge((p) => (p.approval = { id: 'pnd-nope', approved: true })), 404, 'unknown_approval'],
    ['wrong kind', forge((p) => (p.approval = { id: loginId, approved: true })), 400, 'wrong_kind'],
    ["someone else's call", forge((p) => (p.approval = { id: toolPart(theirs).approval!.id, approved: true })), 403, 'not_yours'],
    ['a tool part never issued', forge((p) => (p.toolCallId = 'call_made_up')), 400, 'unknown_tool_call'],
    ['a renamed tool', forge((p) => (p.type = 'tool-lookup_order')), 400, 'unknown_tool_call'],
    ['no answer', { id: 'chat-1', messages: [user('refund o-9 700'), mine] }, 400, 'bad_body'],
    ['not JSON', '{"id":', 400, 'bad_body'],
    ['no messages', { id: 'chat-1', messages: [] }, 400, 'bad_body'],
  ];
  for (const [what, body, status, reason] of cases) {
    const response = await post(body);
    expect([what, response.status, (JSON.parse(response.body) as { error: { reason: string } }).error.reason]).toEqual([
      what,
      status,
      reason,
    ]);
  }
  expect(
    (
      await post(
        forge(() => undefined),
        'mallory',
      )
    ).status,
  ).toBe(400); // mallory's chat-1 never issued that call
  expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(401);
  const huge = await post({ id: 'chat-1', messages: [user('x'.repeat(10 * 1024 * 1024))] });
  expect(huge.status).toBe(413);
  // Nothing changed: both refunds still pending, no money moved, the session as it was.
  expect((await agent.runner.coordinator.get(toolPart(mine).approval!.id))?.status).toBe('pending');
  expect((await agent.runner.coordinator.get(toolPart(theirs).approval!.id))?.status).toBe('pending');
  expect(readLedger(join(dir, 'ledger'))).toEqual([]);
  expect((await agent.runner.sessions!.loadSession('alice:chat-1'))?.version).toBe(session?.version);
  // The genuine answer still works afterwards.
  const done = await send([user('refund o-9 700'), respond(mine, true)]);
  expect(toolPart(done)).toMatchObject({ state: 'output-available' });
});

it('a failed run ends with an error part that holds no secret', async () => {
  await serve(json(500, { error: { message: 'upstream broke; key sk-secret-123 rejected' } }));
  const errors: Error[] = [];
  const message = await send([user('hello')], 'alice', 'chat-1', errors);
  expect(message.role).toBe('assistant');
  expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/^the run failed: TOOLNEXUS_MODEL/)]);
  expect(errors[0]?.message).not.toContain('sk-secret');
});

it('the page going away mid-run: the run ends anyway, and the session records it', async () => {
  let gone!: () => void;
  const clientGone = new Promise<void>((resolve) => (gone = resolve));
  await serve(async (res, req, index) => {
    await clientGone;
    return openaiText('a late answer')(res, req, index);
  });
  const abort = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': 'alice' },
    body: JSON.stringify({ id: 'chat-1', messages: [user('hello')] }),
    signal: abort.signal,
  });
  expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  for (let i = 0; i < 500 && model.requests.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(model.requests).toHaveLength(1);
  abort.abort();
  gone();
  let session = await agent.runner.sessions!.loadSession('alice:chat-1');
  for (let i = 0; i < 500 && session?.active !== undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    session = await agent.runner.sessions!.loadSession('alice:chat-1');
  }
  expect(session?.active).toBeUndefined();
  expect(session?.messages).toEqual([
    { role: 'user', content: 'hello', id: 'u-hello' },
    expect.objectContaining({ role: 'assistant', content: 'a late answer' }),
  ]);
});

it('a run whose questions were answered elsewhere without continuing is finished before the next message', async () => {
  await serve(chatModel);
  const asked = await send([user('refund o-8 800')]);
  // The inbox or CLI with a coordinator alone: the call is settled, the run is left halted.
  const answered = await answerAs(agent.runner.coordinator, { id: toolPart(asked).approval!.id, ok: true }, { by: { id: 'ops' } });
  expect(answered.run?.continued).toBe(false);
  const next = await send([user('thanks')]);
  expect(next.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual(['You said: thanks']);
  const thread = (await agent.runner.sessions!.loadSession('alice:chat-1'))!.messages;
  expect(thread.map((m) => m.role).join(' ')).toBe('user assistant tool assistant user assistant');
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});

/** One request's raw SSE text, and the assistant message the AI SDK's own reader makes of it. */
async function sendRaw(messages: UIMessage[], who = 'alice', chatId = 'chat-1'): Promise<{ raw: string; message: UIMessage }> {
  const response = await post({ id: chatId, messages, trigger: 'submit-message' }, who);
  expect(response.status).toBe(200);
  const chunks = response.body
    .split('\n\n')
    .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
    .map((event) => JSON.parse(event.slice('data: '.length)) as never);
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const last = messages[messages.length - 1];
  let message: UIMessage | undefined;
  for await (const next of ai.readUIMessageStream<UIMessage>({ message: last?.role === 'assistant' ? last : undefined, stream }))
    message = next;
  return { raw: response.body, message: message as UIMessage };
}

it('a request answering the same approval twice (approved and declined) is refused before anything runs', async () => {
  await serve(chatModel);
  const asked = await send([user('refund o-9 700')]);
  const twice = respond(asked, true);
  const denied = structuredClone(toolPart(twice));
  Object.assign(denied.approval as object, { approved: false });
  twice.parts.push(denied as never);
  const response = await post({ id: 'chat-1', messages: [user('refund o-9 700'), twice] });
  expect(response.status).toBe(400);
  const { error } = JSON.parse(response.body) as { error: { reason: string; message: string } };
  expect(error.reason).toBe('duplicate_approval');
  expect(error.message).toContain('twice');
  expect(readLedger(join(dir, 'ledger'))).toEqual([]);
  expect((await agent.runner.coordinator.get(toolPart(asked).approval!.id))?.status).toBe('pending');
  // The page's genuine answer still goes through.
  expect(toolPart(await send([user('refund o-9 700'), respond(asked, true)]))).toMatchObject({ state: 'output-available' });
});

it("the tool replayed after a chat approval sees the call's callId and runId, as a resume through the runner gives", async () => {
  await serve(chatModel);
  const asked = await send([user('refund o-9 700')]);
  await send([user('refund o-9 700'), respond(asked, true)]);
  const call = await agent.runner.coordinator.get(toolPart(asked).approval!.id);
  expect(call?.runId).toMatch(/^run-/);
  const [order, cents, callId, runId] = (readLedger(join(dir, 'ledger'))[0] ?? '').split(' ').slice(1);
  expect([order, cents, callId, runId]).toEqual(['o-9', '700', 'call_refund_o-9', call?.runId]);
});

it("the approval part carries the request's prompt, redacted, as the AI SDK's requestReason", async () => {
  await serve(chatModel);
  agent.runner.toolkit.register(new PayCardTool());
  const asked = await send([user('refund o-9 700')]);
  expect(toolPart(asked)).toMatchObject({ state: 'approval-requested', approval: { requestReason: 'Refund 700 cents on order o-9?' } });
  const pay = await sendRaw([user('pay 4111-CANARY-1881 2500')], 'alice', 'chat-pay');
  expect(toolPart(pay.message)).toMatchObject({
    type: 'tool-pay_card',
    state: 'approval-requested',
    approval: { requestReason: 'Charge 2500 cents to card [redacted]?' },
  });
});

it('@Sensitive() arguments, and results and texts quoting them, never reach the page', async () => {
  await serve(chatModel);
  agent.runner.toolkit.register(new PayCardTool());
  const canary = '4111-CANARY-1881';
  const asked = await sendRaw([user(`pay ${canary} 2500`)]);
  expect(asked.raw).toContain('tool-approval-request');
  expect(asked.raw).not.toContain(canary);
  expect(toolPart(asked.message)).toMatchObject({ input: { card: '[redacted]', cents: 2500 } });
  const done = await sendRaw([user(`pay ${canary} 2500`), respond(asked.message, true)]);
  expect(done.raw).toContain('tool-output-available');
  expect(done.raw).not.toContain(canary);
  expect(toolPart(done.message)).toMatchObject({ state: 'output-available', output: { charged: '[redacted]', cents: 2500 } });
  // The model quoted the result in its answer (streamed in pieces): redacted there too.
  expect(done.message.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text)).toEqual([
    'Done: {"charged":"[redacted]","cents":2500}',
  ]);
  // The run's stream log (docs/chat.md, "Reconnecting") keeps exactly what the page was sent, redacted the same.
  const log = await (agent.store as unknown as StreamLogStore).readStream(asked.message.id.slice('msg-'.length), 0, 10_000);
  const sent = (raw: string) =>
    raw
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => e.slice('data: '.length));
  expect(log?.parts).toEqual([...sent(asked.raw), ...sent(done.raw)]);
  expect(log?.parts.join('\n')).not.toContain(canary);
});
