/**
 * Who may answer, as the chat page sees it (docs/chat.md, "Who may answer in the chat"): each
 * approval part carries what the response's principal may do with it, decided by the
 * coordinator's answer policy; an approval may carry edited arguments, judged and validated by
 * the coordinator's one answer path; and a refused approval is explained in the stream. A
 * support desk's shared chat (the session is the chat's), over real HTTP, read by ai@7's own client.
 */
import 'reflect-metadata';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { Tool, success } from 'toolnexus-ts';
import { CHAT_REFUSED_HEADER, chatHandler, chatThreadHandler, type ChatApprovalData, type ChatUIMessage } from 'toolnexus-ts/chat';
import { rulesPolicy, type AnswerPolicy } from 'toolnexus-ts/suspension';
import { buildChatAgent, chatModel, readLedger, type ChatAgent } from '../fixtures/chat/agent';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { openaiCalls, openaiStream, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

class CappedArgs {
  @IsString() order!: string;
  @IsInt() @Min(1) @Max(5000) cents!: number;
}

@Tool({
  name: 'capped_refund',
  description: 'Refunds at most 5000 cents',
  args: CappedArgs,
  approval: { prompt: (args: CappedArgs) => `Refund ${args.cents} cents on order ${args.order}?`, editable: true },
})
class CappedRefundTool {
  constructor(private readonly ledger: string) {}
  run(args: CappedArgs) {
    appendFileSync(this.ledger, `capped ${args.order} ${args.cents}\n`);
    return success({ refunded: args.order, cents: args.cents });
  }
}

@Tool({
  name: 'wire',
  description: 'Wires money out',
  args: CappedArgs,
  approval: { prompt: 'Wire it?', quorum: { of: 2, from: ['manager:ann', 'manager:ben', 'manager:cy'] } },
})
class WireTool {
  constructor(private readonly ledger: string) {}
  run(args: CappedArgs) {
    appendFileSync(this.ledger, `wire ${args.order} ${args.cents}\n`);
    return success({ wired: args.cents });
  }
}

/** The chat fixture's model, and "capped ORDER CENTS" / "wire ORDER CENTS" ask for capped_refund / wire. */
const model: Reply = (res, req, index) => {
  const messages = (req.body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const last = messages[messages.length - 1];
  const asked = last?.role === 'user' && typeof last.content === 'string' ? /^(capped|wire) (\S+) (\d+)$/.exec(last.content) : null;
  if (!asked) return chatModel(res, req, index);
  const name = asked[1] === 'capped' ? 'capped_refund' : 'wire';
  const call = { id: `call_${asked[1]}_${asked[2]}`, name, args: { order: asked[2], cents: Number(asked[3]) } };
  return (req.body.stream === true ? openaiStream([], [call]) : openaiCalls([call]))(res, req, index);
};

const ai = loadAiClient();
let dir: string;
let ledger: string;
let models: MockServer;
let agent: ChatAgent;
let server: Server;
let url: string;
let withdrawn: 'none' | 'after-check' | 'now' = 'none';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-parts-'));
  ledger = join(dir, 'ledger');
  models = await startMockServer(model);
  // Only managers approve; the customer may answer nothing.
  const rules = rulesPolicy([{ principals: ['manager:ann', 'manager:ben'], kinds: ['approval'] }]);
  // Armed by a test: Ben's next approval passes the chat's check, and his right is withdrawn before the claim.
  const policy: AnswerPolicy = (question) => {
    if (withdrawn === 'none' || question.principal.id !== 'manager:ben' || !question.answer.ok) return rules(question);
    if (withdrawn === 'after-check') {
      withdrawn = 'now';
      return rules(question);
    }
    return { deny: 'manager:ben’s approval right was withdrawn' };
  };
  agent = buildChatAgent(join(dir, 'chat.db'), ledger, models.url, {}, policy);
  agent.runner.toolkit.register(new CappedRefundTool(ledger), new WireTool(ledger));
  const principal = (request: { headers: Record<string, unknown> }) => {
    const user = request.headers['x-user'];
    return typeof user === 'string' ? { id: user } : undefined;
  };
  // A support desk's shared chat: the session is the chat's, so a manager answers in the customer's thread.
  const post = chatHandler(agent.runner, { sessionOf: (chatId) => chatId, principal });
  const get = chatThreadHandler(agent.runner, { sessionOf: (chatId) => chatId, principal });
  server = createServer((request, response) => void (request.method === 'GET' ? get : post)(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await models.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends through ai@7's transport, as `useChat` does, and reads the assistant message (continuing `last` when given). */
async function send(user: string, chatId: string, messages: UIMessage[], body?: object): Promise<UIMessage> {
  const transport = new ai.DefaultChatTransport<UIMessage>({ api: url, headers: { 'x-user': user } });
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
    ...(body ? { body } : {}),
  });
  const last = messages[messages.length - 1];
  let final: UIMessage | undefined;
  for await (const message of ai.readUIMessageStream<UIMessage>({ stream, ...(last?.role === 'assistant' ? { message: last } : {}) }))
    final = message;
  return final as UIMessage;
}

type AnyPart = { type: string; state?: string; id?: string; data?: unknown; approval?: { id: string }; output?: unknown };

function approvalDataIn(message: { parts: unknown[] }): ChatApprovalData | undefined {
  return (message.parts as AnyPart[]).find((p) => p.type === 'data-toolnexus-approval')?.data as ChatApprovalData | undefined;
}

function approvalIdIn(message: UIMessage): string {
  return (message.parts as AnyPart[]).find((p) => p.state === 'approval-requested')?.approval?.id as string;
}

async function thread(user: string, chatId: string): Promise<ChatUIMessage[]> {
  const response = await fetch(`${url}?id=${chatId}`, { headers: { 'x-user': user } });
  expect(response.status).toBe(200);
  return (await response.json()) as ChatUIMessage[];
}

/** The page's message with every open approval answered (and nothing else changed). */
function responded(message: UIMessage, approved: boolean): UIMessage {
  const copy = structuredClone(message);
  for (const part of copy.parts as Array<Record<string, unknown>>) {
    if (part.state !== 'approval-requested') continue;
    part.state = 'approval-responded';
    part.approval = { ...(part.approval as object), approved };
  }
  return copy;
}

const userMessage = (text: string): UIMessage => ({ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] });

describe('the approval part carries what the principal may do', () => {
  it('shows the requester nothing they may do, and a manager approve and decline', async () => {
    const asked = await send('customer:rita', 'c-rights', [userMessage('refund o-7 2500')]);
    const id = approvalIdIn(asked);
    expect(id).toMatch(/^pnd-/);
    // Streamed to the customer who asked: separation of duties and the policy leave them nothing.
    expect(approvalDataIn(asked)).toEqual({ id, toolCallId: 'call_refund_o-7', actions: [] });

    const [, managerView] = await thread('manager:ann', 'c-rights');
    const toolPart = managerView?.parts.find((p) => p.type === 'tool-refund') as AnyPart | undefined;
    expect([toolPart?.state, toolPart?.approval?.id]).toEqual(['approval-requested', id]);
    expect(approvalDataIn(managerView as ChatUIMessage)).toEqual({ id, toolCallId: 'call_refund_o-7', actions: ['approve', 'decline'] });
    // The customer's reload says the same as their stream did.
    expect(approvalDataIn((await thread('customer:rita', 'c-rights'))[1] as ChatUIMessage)?.actions).toEqual([]);

    // The manager's approval, in the same chat, runs it once.
    const done = await send('manager:ann', 'c-rights', [userMessage('refund o-7 2500'), responded(asked, true)]);
    expect((done.parts as AnyPart[]).find((p) => p.type === 'tool-refund')?.state).toBe('output-available');
    expect(readLedger(ledger).filter((line) => line.startsWith('refund o-7 2500'))).toHaveLength(1);
  });

  it('offers edit where the request allows it', async () => {
    await send('customer:rita', 'c-edit-offer', [userMessage('capped o-1 3000')]);
    const [, view] = await thread('manager:ann', 'c-edit-offer');
    expect(approvalDataIn(view as ChatUIMessage)?.actions).toEqual(['approve', 'edit', 'decline']);
  });

  it('offers a quorum’s signers sign, with its progress, and not a second signature to who signed', async () => {
    await send('customer:rita', 'c-wire', [userMessage('wire o-2 100')]);
    const [user, view] = await thread('manager:ann', 'c-wire');
    const id = (approvalDataIn(view as ChatUIMessage) as ChatApprovalData).id;
    expect(approvalDataIn(view as ChatUIMessage)).toEqual({
      id,
      toolCallId: 'call_wire_o-2',
      actions: ['sign', 'decline'],
      quorum: { of: 2, signed: 0, byYou: false },
    });

    // Ann signs in the chat: the approval is asked again, with its progress.
    const page = { ...(view as ChatUIMessage), parts: (view as ChatUIMessage).parts.filter((p) => p.type !== 'data-toolnexus-approval') };
    const signed = await send('manager:ann', 'c-wire', [user as UIMessage, responded(page as UIMessage, true)]);
    expect((signed.parts as AnyPart[]).find((p) => p.type === 'tool-wire')?.state).toBe('approval-requested');
    expect(approvalDataIn(signed)).toEqual({
      id,
      toolCallId: 'call_wire_o-2',
      actions: ['decline'],
      quorum: { of: 2, signed: 1, byYou: true },
    });
    expect(readLedger(ledger).filter((line) => line.startsWith('wire'))).toEqual([]);
    // Ben sees one signature and may give the second.
    const [, forBen] = await thread('manager:ben', 'c-wire');
    expect(approvalDataIn(forBen as ChatUIMessage)?.actions).toEqual(['sign', 'decline']);
    expect(approvalDataIn(forBen as ChatUIMessage)?.quorum).toEqual({ of: 2, signed: 1, byYou: false });
  });
});

async function post(user: string, chatId: string, messages: UIMessage[], extra: object = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-user': user },
    body: JSON.stringify({ id: chatId, messages, ...extra }),
  });
}

/** The page's view of a thread without the approval data parts (the page sends back what it shows). */
function pageOf(message: ChatUIMessage): UIMessage {
  return { ...message, parts: message.parts.filter((p) => p.type !== 'data-toolnexus-approval') } as UIMessage;
}

describe('an edit in the chat', () => {
  it('refuses an edit outside the DTO with a clear error and stores nothing; one inside it runs once, as the model is told', async () => {
    await send('customer:rita', 'c-edit', [userMessage('capped o-9 3000')]);
    const [user, view] = (await thread('manager:ann', 'c-edit')) as [ChatUIMessage, ChatUIMessage];
    const id = (approvalDataIn(view) as ChatApprovalData).id;
    const approvedPage = responded(pageOf(view), true);

    const tooMuch = await post('manager:ann', 'c-edit', [user as UIMessage, approvedPage], {
      edits: { [id]: { order: 'o-9', cents: 9000 } },
    });
    expect(tooMuch.status).toBe(400);
    const refusal = ((await tooMuch.json()) as { error: { reason: string; message: string } }).error;
    expect(refusal.reason).toBe('invalid_edit');
    expect(refusal.message).toContain(`the edited arguments of ${id} are invalid`);
    expect(refusal.message).toContain('cents must not be greater than 5000');
    const untouched = await agent.store.get(id);
    expect([untouched?.status, untouched?.answer, untouched?.answeredBy]).toEqual(['pending', undefined, undefined]);
    expect(readLedger(ledger).filter((line) => line.startsWith('capped o-9'))).toEqual([]);

    // useChat: addToolApprovalResponse({ id, approved: true, options: { body: { edits } } }).
    const done = await send('manager:ann', 'c-edit', [user as UIMessage, approvedPage], { edits: { [id]: { order: 'o-9', cents: 2000 } } });
    const output = (done.parts as AnyPart[]).find((p) => p.type === 'tool-capped_refund')?.output;
    expect(output).toContain('The approver edited the arguments; the call ran with {"order":"o-9","cents":2000}');
    expect(readLedger(ledger).filter((line) => line.startsWith('capped o-9'))).toEqual(['capped o-9 2000']);
    const stored = await agent.store.get(id);
    expect(stored?.args).toEqual({ order: 'o-9', cents: 3000 });
    expect(stored?.answer?.args).toEqual({ order: 'o-9', cents: 2000 });
    expect(stored?.answeredBy).toEqual({ id: 'manager:ann' });
    // The model's next request carries the arguments that ran.
    const toolMessages = models.requests.flatMap((r) => (r.body.messages ?? []) as Array<{ role: string; content?: unknown }>);
    expect(toolMessages.some((m) => m.role === 'tool' && String(m.content).includes('ran with {"order":"o-9","cents":2000}'))).toBe(true);
  });

  it('refuses an edit of a request that allows none, of a declined call, or with a user message', async () => {
    await send('customer:rita', 'c-no-edit', [userMessage('refund o-4 100')]);
    const [user, view] = (await thread('manager:ann', 'c-no-edit')) as [ChatUIMessage, ChatUIMessage];
    const id = (approvalDataIn(view) as ChatApprovalData).id;
    const edits = { [id]: { order: 'o-4', cents: 50 } };

    const notEditable = await post('manager:ann', 'c-no-edit', [user as UIMessage, responded(pageOf(view), true)], { edits });
    expect(notEditable.status).toBe(400);
    expect(((await notEditable.json()) as { error: { reason: string; message: string } }).error).toMatchObject({
      reason: 'invalid_edit',
      message: `${id} does not allow edited arguments`,
    });
    const declined = await post('manager:ann', 'c-no-edit', [user as UIMessage, responded(pageOf(view), false)], { edits });
    expect(declined.status).toBe(400);
    expect(((await declined.json()) as { error: { message: string } }).error.message).toContain('only an approval is edited');
    const stray = await post('manager:ann', 'c-no-edit', [userMessage('hello')], { edits });
    expect(stray.status).toBe(400);
    const notAnObject = await post('manager:ann', 'c-no-edit', [user as UIMessage, responded(pageOf(view), true)], {
      edits: { [id]: [1] },
    });
    expect(notAnObject.status).toBe(400);
    expect((await agent.store.get(id))?.status).toBe('pending');
  });
});

describe('a refused approval explained in the stream', () => {
  it('asks the approval again with the policy’s code and reason, marks the response refused, and keeps the call for someone allowed', async () => {
    const asked = await send('customer:rita', 'c-refused', [userMessage('refund o-5 100')]);
    const id = approvalIdIn(asked);

    // The customer approves their own refund, as useChat sends it.
    const transport = new ai.DefaultChatTransport<UIMessage>({ api: url, headers: { 'x-user': 'customer:rita' } });
    const stream = await transport.sendMessages({
      chatId: 'c-refused',
      messages: [userMessage('refund o-5 100'), responded(asked, true)],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let page: UIMessage | undefined;
    for await (const message of ai.readUIMessageStream<UIMessage>({ stream, message: responded(asked, true) })) page = message;
    // The page's tool part is open again, and says why: the buttons it renders are none.
    const tool = (page?.parts as AnyPart[]).find((p) => p.type === 'tool-refund');
    expect([tool?.state, tool?.approval?.id]).toEqual(['approval-requested', id]);
    expect(approvalDataIn(page as UIMessage)).toEqual({
      id,
      toolCallId: 'call_refund_o-5',
      actions: [],
      refusal: {
        code: 'TOOLNEXUS_ANSWER_REFUSED',
        reason: 'customer:rita requested this call and may not approve it (separation of duties)',
      },
    });
    expect(readLedger(ledger).filter((line) => line.startsWith('refund o-5'))).toEqual([]);
    const stored = await agent.store.get(id);
    expect([stored?.status, stored?.answeredBy]).toEqual(['pending', undefined]);

    // A plain HTTP client tells it by the header, before reading the stream.
    const plain = await post('customer:rita', 'c-refused', [userMessage('refund o-5 100'), responded(asked, true)]);
    expect(plain.status).toBe(200);
    expect(plain.headers.get(CHAT_REFUSED_HEADER)).toBe('answer_refused');
    expect(plain.headers.get('content-type')).toBe('text/event-stream');
    expect(await plain.text()).toContain('"type":"finish"');

    // Someone allowed answers it in the same chat: it runs once, and the response is not marked refused.
    const managerPost = await post('manager:ann', 'c-refused', [userMessage('refund o-5 100'), responded(asked, true)]);
    expect(managerPost.headers.get(CHAT_REFUSED_HEADER)).toBeNull();
    expect(await managerPost.text()).toContain('"type":"tool-output-available"');
    expect(readLedger(ledger).filter((line) => line.startsWith('refund o-5'))).toHaveLength(1);
  });

  it('explains a refusal found only at the claim, when the policy changed since the check', async () => {
    const asked = await send('customer:rita', 'c-withdrawn', [userMessage('refund o-6 100')]);
    const id = approvalIdIn(asked);
    withdrawn = 'after-check';
    try {
      const response = await post('manager:ben', 'c-withdrawn', [userMessage('refund o-6 100'), responded(asked, true)]);
      expect(withdrawn).toBe('now');
      expect(response.status).toBe(200);
      expect(response.headers.get(CHAT_REFUSED_HEADER)).toBe('answer_refused');
      const parts = (await response.text())
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice('data: '.length)) as { type: string; data?: ChatApprovalData });
      expect(parts.find((part) => part.type === 'data-toolnexus-approval')?.data).toEqual({
        id,
        toolCallId: 'call_refund_o-6',
        actions: ['decline'],
        refusal: { code: 'TOOLNEXUS_ANSWER_REFUSED', reason: 'manager:ben’s approval right was withdrawn' },
      });
      expect(parts.some((part) => part.type === 'tool-output-available')).toBe(false);
    } finally {
      withdrawn = 'none';
    }
    expect((await agent.store.get(id))?.status).toBe('pending');
    expect(readLedger(ledger).filter((line) => line.startsWith('refund o-6'))).toEqual([]);
  });
});
