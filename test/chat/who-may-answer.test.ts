/**
 * The chat door and who may answer (docs/who-may-answer.md): the chat's run is made on behalf
 * of its signed-in principal, so with an answer policy the customer who asked for a refund
 * cannot approve it themselves (separation of duties, on by default with a policy): the
 * response explains the refusal in the stream (header `x-toolnexus-refused: answer_refused`),
 * nothing runs, nothing stored changes. A manager answering the same request
 * elsewhere (here `answerAs`, as the inbox does) runs it once. Read by ai@7's own client.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { answerAs } from 'toolnexus-ts/agents';
import { CHAT_REFUSED_HEADER, chatHandler, type ChatApprovalData } from 'toolnexus-ts/chat';
import { rulesPolicy } from 'toolnexus-ts/suspension';
import { buildChatAgent, chatModel, readLedger, withRefunder, type ChatAgent } from '../fixtures/chat/agent';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const ai = loadAiClient();
let dir: string;
let model: MockServer;
let agent: ChatAgent;
let server: Server;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-who-'));
  model = await startMockServer(chatModel);
  // Everyone may answer anything: only separation of duties stands between the customer and their refund.
  agent = buildChatAgent(join(dir, 'chat.db'), join(dir, 'ledger'), model.url, {}, rulesPolicy([{ principals: '*' }]));
  const route = chatHandler(agent.runner, {
    principal: (request) => {
      const user = request.headers['x-user'];
      return typeof user === 'string' ? { id: user } : undefined;
    },
  });
  server = createServer((request, response) => void route(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await model.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function send(messages: UIMessage[]): Promise<UIMessage> {
  const transport = new ai.DefaultChatTransport<UIMessage>({ api: url, headers: { 'x-user': 'customer:rita' } });
  const stream = await transport.sendMessages({
    chatId: 'c',
    messages,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  let final: UIMessage | undefined;
  for await (const message of ai.readUIMessageStream<UIMessage>({ stream })) final = message;
  return final as UIMessage;
}

function approved(message: UIMessage): UIMessage {
  const copy = structuredClone(message);
  for (const part of copy.parts as Array<Record<string, unknown>>) {
    if (part.state !== 'approval-requested') continue;
    part.state = 'approval-responded';
    part.approval = { ...(part.approval as object), approved: true };
  }
  return copy;
}

/** The parts of a UI message stream response. */
async function partsOf(response: Response): Promise<Array<{ type: string; data?: unknown }>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
    .map((event) => JSON.parse(event.slice('data: '.length)) as { type: string; data?: unknown });
}

/** The refusal the response's approval data part explains. */
async function refusalIn(response: Response): Promise<ChatApprovalData['refusal']> {
  expect(response.status).toBe(200);
  expect(response.headers.get(CHAT_REFUSED_HEADER)).toBe('answer_refused');
  const data = (await partsOf(response)).find((part) => part.type === 'data-toolnexus-approval')?.data as ChatApprovalData;
  return data.refusal;
}

it('refuses the requester’s own approval, explained in the stream, and runs nothing; a manager’s approval runs it once', async () => {
  const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'refund o-7 2500' }] };
  const asked = await send([user]);
  const approval = (asked.parts as Array<{ state?: string; approval?: { id: string } }>).find((p) => p.state === 'approval-requested');
  const id = approval?.approval?.id as string;
  expect((await agent.store.get(id))?.requestedBy).toEqual({ id: 'customer:rita' });

  const self = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': 'customer:rita' },
    body: JSON.stringify({ id: 'c', messages: [user, approved(asked)] }),
  });
  const refusal = await refusalIn(self);
  expect(refusal?.code).toBe('TOOLNEXUS_ANSWER_REFUSED');
  expect(refusal?.reason).toContain('separation of duties');
  expect(readLedger(join(dir, 'ledger'))).toEqual([]);
  expect((await agent.store.get(id))?.status).toBe('pending');

  const manager = await answerAs(agent.runner, { id, ok: true }, { by: { id: 'manager:ann' } });
  expect(manager.won).toBe(true);
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});

describe('a sub-agent’s refund in the chat', () => {
  let subDir: string;
  let subAgent: ChatAgent;
  let subServer: Server;
  let subUrl: string;

  beforeAll(async () => {
    subDir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-who-sub-'));
    // Only managers may approve refunds; the customer may answer the wrapper tool's other requests.
    const policy = rulesPolicy([
      { principals: ['manager:ann'], tools: ['refund'] },
      { principals: '*', tools: ['delegate', 'lookup_order'] },
    ]);
    subAgent = withRefunder(
      buildChatAgent(join(subDir, 'chat.db'), join(subDir, 'ledger'), model.url, {}, policy),
      model.url,
      join(subDir, 'ledger'),
      policy,
    );
    // A support desk's shared chat: the session is the chat's, so a clerk answers in the customer's thread.
    const route = chatHandler(subAgent.runner, {
      sessionOf: (chatId) => chatId,
      principal: (request) => {
        const user = request.headers['x-user'];
        return typeof user === 'string' ? { id: user } : undefined;
      },
    });
    subServer = createServer((request, response) => void route(request, response));
    await new Promise<void>((resolve) => subServer.listen(0, '127.0.0.1', resolve));
    subUrl = `http://127.0.0.1:${(subServer.address() as AddressInfo).port}/api/chat`;
  });
  afterAll(async () => {
    subServer.closeAllConnections();
    await new Promise<void>((resolve) => subServer.close(() => resolve()));
    await subAgent.store.close();
    rmSync(subDir, { recursive: true, force: true });
  });

  it('is judged by the refund that asked, not by the sub-agent tool: a clerk is refused, a manager’s approval runs it', async () => {
    const user: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'delegate refund o-8 2500' }] };
    const transport = new ai.DefaultChatTransport<UIMessage>({ api: subUrl, headers: { 'x-user': 'customer:rita' } });
    const stream = await transport.sendMessages({
      chatId: 's',
      messages: [user],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let asked: UIMessage | undefined;
    for await (const message of ai.readUIMessageStream<UIMessage>({ stream })) asked = message;
    const part = (asked?.parts as Array<{ type: string; state?: string; approval?: { id: string } }>).find(
      (p) => p.state === 'approval-requested',
    );
    expect(part?.type).toBe('tool-delegate');
    const id = part?.approval?.id as string;

    const self = await fetch(subUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': 'clerk:carl' },
      body: JSON.stringify({ id: 's', messages: [user, approved(asked as UIMessage)] }),
    });
    expect((await refusalIn(self))?.reason).toBe('clerk:carl may not answer approval requests of refund');
    expect(readLedger(join(subDir, 'ledger'))).toEqual([]);
    expect((await subAgent.store.list({ status: 'pending' })).length).toBe(2);

    const manager = await answerAs(subAgent.runner, { id, ok: true }, { by: { id: 'manager:ann' } });
    expect(manager.won).toBe(true);
    expect(readLedger(join(subDir, 'ledger'))).toHaveLength(1);
  });
});
