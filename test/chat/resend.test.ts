/**
 * What the session already has is not run again (issue 45), with the AI SDK's own client
 * (`AbstractChat` over `DefaultChatTransport`, what `useChat` is) against a real chat handler
 * on 127.0.0.1 and a SQLite file:
 *
 * - a page that lost its connection after a non-idempotent `transfer` ran sends the same message
 *   again (same id): it is answered from the session and nothing runs; `regenerate()` runs a new
 *   turn whose model is sent the transfer's call and result; other text under the same id is an
 *   edit, a new turn;
 * - an approval settled elsewhere (another tab, the inbox) and then approved on the page is not
 *   applied twice: the page's approval part is sent again with the same id, settled, offering
 *   nothing; one approved in the chat is updated the same way;
 * - a message to a chat waiting for an answer is refused 409 with the open requests listed, kept
 *   by the page, and taken when sent again once they are answered.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { answerAs } from 'toolnexus-ts/agents';
import { CHAT_REFUSED_HEADER, chatHandler, type ChatApprovalData } from 'toolnexus-ts/chat';
import { loadAiClient, pageChat } from '../fixtures/chat/ai-client';
import { readLedger } from '../fixtures/chat/agent';
import { buildCrashAgent, crashModel } from '../fixtures/chat/crash-agent';
import { startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

const ai = loadAiClient();

let dir: string;
let ledger: string;
let model: MockServer;
let http: Server;
let url: string;
let agent: ReturnType<typeof buildCrashAgent>;
/** Each request's handling, which ends when its run has ended and its session is written. */
let handled: Promise<void>[];
/** The headers of each chat response the page got. */
let responses: Headers[];
/** Releases the model's answer after a tool result (the page has gone by then). */
let release: () => void;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-chat-resend-'));
  ledger = join(dir, 'ledger');
  const released = new Promise<void>((resolve) => (release = resolve));
  const reply: Reply = async (res, req, index) => {
    const messages = (req.body.messages ?? []) as Array<{ role: string }>;
    if (messages[messages.length - 1]?.role === 'tool') await released;
    return crashModel(res, req, index);
  };
  model = await startMockServer(reply);
  agent = buildCrashAgent(`sqlite:${join(dir, 'chat.db')}`, ledger, model.url, 600_000);
  const handler = chatHandler(agent.runner, { principal: () => ({ id: 'alice' }) });
  handled = [];
  responses = [];
  http = createServer((req, res) => void handled.push(handler(req, res)));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/chat`;
});
afterEach(async () => {
  release();
  await Promise.all(handled);
  http.closeAllConnections();
  await new Promise((resolve) => http.close(resolve));
  await model.close();
  await agent.store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The page's fetch: the browser's, whose response headers the test reads. */
const pageFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  responses.push(response.headers);
  return response;
};

type Part = UIMessage['parts'][number] & Record<string, unknown>;
const partsOf = (messages: readonly UIMessage[]): Part[] => messages.flatMap((message) => message.parts as Part[]);
const textOf = (message: UIMessage | undefined): string =>
  (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
const approvalData = (messages: readonly UIMessage[], id: string): ChatApprovalData[] =>
  partsOf(messages)
    .filter((part) => part.type === 'data-toolnexus-approval' && part.id === id)
    .map((part) => part.data as ChatApprovalData);

it('the same message sent again after a lost connection is answered from the session; regenerate runs a new turn that sees the transfer', async () => {
  const { chat, state } = pageChat(ai, { id: 'c-1', api: url, fetch: pageFetch });
  const sending = chat.sendMessage({ text: 'transfer o-1 700' });
  // The transfer ran and the page shows it; then its connection drops before the answer.
  await state.until((messages) => partsOf(messages).some((part) => part.type === 'tool-transfer' && part.state === 'output-available'));
  await chat.stop();
  await sending;
  release();
  await Promise.all(handled);
  expect(readLedger(ledger)).toHaveLength(1);
  expect(model.requests).toHaveLength(2);
  const sent = state.messages[0] as UIMessage;

  // The page sends it again, as it was (same id, same text): answered from the session, nothing runs.
  await chat.sendMessage({ text: 'transfer o-1 700', messageId: sent.id });
  expect(chat.error).toBeUndefined();
  expect(model.requests).toHaveLength(2);
  expect(readLedger(ledger)).toHaveLength(1);
  expect(state.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  const reply = state.messages[1] as UIMessage;
  expect(partsOf([reply])).toContainEqual(
    expect.objectContaining({ type: 'tool-transfer', state: 'output-available', output: { transferred: 'o-1' } }),
  );
  expect(textOf(reply)).toBe('Done: {"transferred":"o-1"}');

  // regenerate() asks for a new turn: the model is sent what ran (the call and its result) and says so.
  await chat.regenerate();
  expect(chat.error).toBeUndefined();
  expect(model.requests).toHaveLength(3);
  const wire = (model.requests[2]?.body.messages ?? []) as Array<{ role: string; tool_call_id?: string }>;
  expect(wire).toContainEqual(expect.objectContaining({ role: 'tool', tool_call_id: 'call_transfer_o-1' }));
  expect(textOf(state.messages[1])).toBe('Already done: call_transfer_o-1');
  expect(readLedger(ledger)).toHaveLength(1);

  // Other text under the same id is an edit: a new turn.
  await chat.sendMessage({ text: 'hello', messageId: sent.id });
  expect(model.requests).toHaveLength(4);
  expect(textOf(state.messages[1])).toBe('You said: hello');
  const thread = (await agent.runner.sessions?.loadSession('alice:c-1'))?.messages ?? [];
  expect(thread.filter((message) => message.role === 'user')).toEqual([
    { role: 'user', content: 'transfer o-1 700', id: sent.id },
    { role: 'user', content: 'transfer o-1 700', id: sent.id },
    { role: 'user', content: 'hello', id: sent.id },
  ]);
});

/** A page (sending approvals as soon as they are given, as the guide's does) that asked for a refund: its approval's id. */
async function askedRefund(chatId: string, order: string) {
  const page = pageChat(ai, {
    id: chatId,
    api: url,
    fetch: pageFetch,
    sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  await page.chat.sendMessage({ text: `refund ${order} 500` });
  const asked = partsOf(page.state.messages).find((part) => part.type === 'tool-refund') as { approval: { id: string } };
  return { ...page, id: asked.approval.id };
}

it('an approval settled elsewhere and then approved on the page is not applied twice; its part says how it ended', async () => {
  release();
  const { chat, state, id } = await askedRefund('c-2', 'o-2');
  expect(approvalData(state.messages, id)).toEqual([{ id, toolCallId: 'call_refund_o-2', actions: ['approve', 'decline'] }]);

  // Another tab (or the inbox) approves it first; the run goes on there.
  await answerAs(agent.runner, { id, ok: true }, { by: { id: 'alice' } });
  expect(readLedger(ledger)).toHaveLength(1);

  // This page's button is pressed now: nothing is applied; the part stops offering buttons.
  await chat.addToolApprovalResponse({ id, approved: true });
  await state.until((messages) => approvalData(messages, id)[0]?.settled !== undefined);
  expect(approvalData(state.messages, id)).toEqual([{ id, toolCallId: 'call_refund_o-2', actions: [], settled: 'resolved' }]);
  expect(partsOf(state.messages)).toContainEqual(
    expect.objectContaining({ type: 'tool-refund', state: 'output-available', output: { refunded: 'o-2' } }),
  );
  expect(responses[responses.length - 1]?.get(CHAT_REFUSED_HEADER)).toBe('not_pending');
  expect(readLedger(ledger)).toHaveLength(1);
});

it('an approval given in the chat: its part is sent again with the same id, settled', async () => {
  release();
  const { chat, state, id } = await askedRefund('c-3', 'o-3');
  await chat.addToolApprovalResponse({ id, approved: true });
  await state.until((messages) => textOf(messages[messages.length - 1]).startsWith('Done'));
  expect(approvalData(state.messages, id)).toEqual([{ id, toolCallId: 'call_refund_o-3', actions: [], settled: 'resolved' }]);
  expect(responses[responses.length - 1]?.get(CHAT_REFUSED_HEADER)).toBeNull();
  expect(readLedger(ledger)).toHaveLength(1);
});

it('a message to a chat waiting for an answer is not taken and not lost: the 409 lists the open request, the page keeps the message and sends it again once answered', async () => {
  release();
  const { chat, state, id } = await askedRefund('c-4', 'o-4');
  await chat.sendMessage({ text: 'hello' });
  // The AI SDK's client gives the page the 409 as its error, the body as the server wrote it.
  const error = chat.error as unknown as { statusCode?: number; responseBody?: string } | undefined;
  expect(error?.statusCode).toBe(409);
  const body = JSON.parse(error?.responseBody ?? '{}') as { error: { reason: string; message: string; open: unknown[] } };
  expect(body.error.reason).toBe('busy');
  expect(body.error.message).toContain('Your message was not taken');
  expect(body.error.open).toEqual([{ id, toolCallId: 'call_refund_o-4', kind: 'approval', prompt: 'Refund 500 on o-4?' }]);
  const kept = state.messages[state.messages.length - 1] as UIMessage;
  expect([kept.role, textOf(kept)]).toEqual(['user', 'hello']);
  expect(model.requests.filter((request) => JSON.stringify(request.body).includes('hello'))).toHaveLength(0);

  // Answered elsewhere (the inbox); the page sends the kept message again: now it is taken.
  await answerAs(agent.runner, { id, ok: false, reason: 'declined' }, { by: { id: 'alice' } });
  await chat.sendMessage({ text: 'hello', messageId: kept.id });
  expect(chat.error).toBeUndefined();
  expect(textOf(state.messages[state.messages.length - 1])).toBe('You said: hello');
  expect(readLedger(ledger)).toHaveLength(0);
});
