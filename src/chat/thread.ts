import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidArgumentError } from '../errors';
import type { ChatMessage, ToolMedia } from '../models/types';
import type { AgentRunner } from '../runner/agent-runner';
import type { StoredSession } from '../sessions/store';
import type { Principal } from '../suspension/audit';
import type { SuspendedCall } from '../suspension/store';
import { ChatRequestError, errorBody, refusal, signedIn } from './errors';
import type { ChatHandlerOptions, ChatOptions, ChatResponseOptions } from './handler';
import type { ChatApprovalData, ChatRequestData } from './parts';
import { approvalDataOf } from './approval-data';
import { jsonOrText } from '../runner/redact-run';
import { StreamRedactor } from './redact';
import { checkPrincipalOption, defaultSessionOf } from './request';
import { filePartOf, messageIdOf, requestParts } from './ui-stream';

/** A tool part of a {@link ChatUIMessage}, as `useChat` keeps one (`part.type` is `tool-<name>`). */
export interface ChatToolUIPart {
  type: `tool-${string}`;
  toolCallId: string;
  /** `approval-requested`: an open approval, answered with `addToolApprovalResponse`; `input-available`: called, no result yet. */
  state: 'input-available' | 'approval-requested' | 'output-available' | 'output-error';
  input: unknown;
  output?: unknown;
  errorText?: string;
  /** The open approval: `id` is the suspension's, `requestReason` its prompt, redacted (what `tool-approval-request` sends). */
  approval?: { id: string; requestReason?: string };
}

/** A part of a {@link ChatUIMessage}: the shapes of the AI SDK's `UIMessage` parts that a stored thread holds. */
export type ChatUIPart =
  | { type: 'step-start' }
  | { type: 'text'; text: string; state: 'done' }
  | ChatToolUIPart
  | { type: 'data-toolnexus-request'; id: string; data: ChatRequestData }
  | { type: 'data-toolnexus-approval'; id: string; data: ChatApprovalData }
  /** An image or file a tool result showed (a `data:` URL of its bytes, or its URL). */
  | { type: 'file'; url: string; mediaType: string };

/** A message of a stored chat as an AI SDK `UIMessage`: what `useChat({ messages })` starts from. */
export interface ChatUIMessage {
  id: string;
  role: 'user' | 'assistant';
  parts: ChatUIPart[];
}

/**
 * The chat `chatId` of `principal` as the page shows it (docs/chat.md, "A returning
 * customer"): the stored thread as UI messages, each user message one, and each exchange's
 * model turns and tool results one assistant message (a `step-start` per turn). An open
 * request of a halted run is there as the stream sent it: an approval as the tool part in
 * `approval-requested` with its `approval.id`, so the page can answer it after a reload, any
 * other request as a `data-toolnexus-request` part. Redacted as the stream is: `@Sensitive()`
 * arguments and every copy of their values (in results, prompts, text) read `"[redacted]"`.
 * A chat that does not exist is empty.
 *
 * Message ids: the halted exchange's is `msg-<runId>`, the id its continuation streams into;
 * the others are made from their place in the thread.
 */
export async function chatThread(
  runner: AgentRunner,
  chatId: string,
  principal: Principal,
  options: Pick<ChatOptions, 'sessionOf'> = {},
): Promise<ChatUIMessage[]> {
  const sessions = runner.sessions;
  if (!sessions) throw new InvalidArgumentError('a chat back end needs a runner whose store keeps sessions');
  if (typeof chatId !== 'string' || chatId === '' || chatId.length > 100)
    throw new ChatRequestError(400, 'bad_body', 'the chat id must be a string of 1 to 100 characters');
  const session = await sessions.loadSession((options.sessionOf ?? defaultSessionOf)(chatId, principal));
  return session ? uiThread(runner, session, principal) : [];
}

/**
 * The stored thread of `session` as UI messages for `principal` (see {@link chatThread}): what a
 * reload gives, and what a message sent again is answered from (docs/chat.md, "Retries and
 * regenerate").
 */
export async function uiThread(runner: AgentRunner, session: StoredSession, principal: Principal): Promise<ChatUIMessage[]> {
  const halted = session.active?.phase === 'halted' ? session.active.runId : undefined;
  const open = halted ? await runner.coordinator.store.list({ runId: halted, status: 'pending' }) : [];
  // What this principal may do with each open approval, as the stream tells it.
  const approvals = new Map<string, ChatApprovalData>();
  for (const call of open) {
    if (call.request.kind === 'approval' && call.callId !== undefined)
      approvals.set(call.request.id, await approvalDataOf(runner.coordinator, principal, call, call.callId));
  }
  return uiMessagesOf(session.messages, new StreamRedactor(runner.toolkit), {
    open: new Map(open.map((call) => [call.callId, call])),
    approvals,
    ...(halted ? { lastId: messageIdOf(halted) } : {}),
  });
}

function uiMessagesOf(
  thread: readonly ChatMessage[],
  redactor: StreamRedactor,
  halted: { open: ReadonlyMap<string | undefined, SuspendedCall>; approvals: ReadonlyMap<string, ChatApprovalData>; lastId?: string },
): ChatUIMessage[] {
  // Every call's values are learnt first: a later result may quote an earlier call, and an
  // earlier text a value only a later call marks sensitive.
  const results = new Map<string, { content: string; isError: boolean; media?: ToolMedia[] }>();
  for (const message of thread) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) redactor.call(call.name, call.arguments);
    if (message.role === 'tool') results.set(message.callId, message);
  }
  // A user message keeps the page's id; a regenerated one was sent twice under it, and only its
  // latest copy keeps it, so ids stay unique.
  const latest = new Map<string, number>();
  thread.forEach((message, index) => {
    if (message.role === 'user' && message.id !== undefined) latest.set(message.id, index);
  });
  const out: ChatUIMessage[] = [];
  let assistant: ChatUIMessage | undefined;
  thread.forEach((message, index) => {
    if (message.role === 'user') {
      assistant = undefined;
      const id = message.id !== undefined && latest.get(message.id) === index ? message.id : `stored-${index}`;
      out.push({ id, role: 'user', parts: [{ type: 'text', text: redactor.text(message.content), state: 'done' }] });
      return;
    }
    if (message.role !== 'assistant') return;
    if (!assistant) {
      assistant = { id: `stored-${index}`, role: 'assistant', parts: [] };
      out.push(assistant);
    }
    assistant.parts.push({ type: 'step-start' });
    if (message.content !== '') assistant.parts.push({ type: 'text', text: redactor.text(message.content), state: 'done' });
    for (const call of message.toolCalls ?? []) {
      const part: ChatToolUIPart = {
        type: `tool-${call.name}`,
        toolCallId: call.id,
        state: 'input-available',
        input: redactor.call(call.name, call.arguments),
      };
      assistant.parts.push(part);
      const result = results.get(call.id);
      if (result?.isError) Object.assign(part, { state: 'output-error', errorText: redactor.text(result.content) });
      else if (result) Object.assign(part, { state: 'output-available', output: redactor.value(jsonOrText(result.content)) });
      for (const media of result?.media ?? []) {
        const file = filePartOf(media);
        if (file) assistant.parts.push(file);
      }
      const waiting = result ? undefined : halted.open.get(call.id);
      if (!waiting) continue;
      for (const request of requestParts(call.id, waiting.request)) {
        if (request.type === 'tool-approval-request') {
          part.state = 'approval-requested';
          part.approval = {
            id: request.approvalId,
            ...(request.reason !== undefined ? { requestReason: redactor.text(request.reason) } : {}),
          };
          const data = halted.approvals.get(request.approvalId);
          if (data) assistant.parts.push({ type: 'data-toolnexus-approval', id: data.id, data: redactor.value(data) });
        } else if (request.type === 'data-toolnexus-request') {
          assistant.parts.push({ type: request.type, id: request.id, data: redactor.value(request.data) });
        }
      }
    }
  });
  const last = out[out.length - 1];
  if (halted.lastId !== undefined && last?.role === 'assistant') last.id = halted.lastId;
  return out;
}

/** The chat id a thread request names: `?id=` of its URL. */
function chatIdOf(url: string | undefined): string {
  const id = new URL(url ?? '/', 'http://localhost').searchParams.get('id');
  if (id === null) throw new ChatRequestError(400, 'bad_body', 'name the chat: ?id=<chat id>');
  return id;
}

/**
 * A GET route for a web `Request` (`/api/chat?id=<chat id>`): the chat's {@link chatThread}
 * as JSON (an array of UI messages, for `useChat({ id, messages })`), or a JSON refusal with
 * its 4xx status.
 */
export async function chatThreadResponse(runner: AgentRunner, request: Request, options: ChatResponseOptions): Promise<Response> {
  try {
    const principal = signedIn(options.principal);
    const messages = await chatThread(runner, chatIdOf(request.url), principal, options);
    return new Response(JSON.stringify(messages), {
      status: 200,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    });
  } catch (error) {
    const refused = refusal(error);
    return new Response(errorBody(refused), { status: refused.status, headers: { 'content-type': 'application/json' } });
  }
}

/**
 * {@link chatThreadResponse} for node:http and Express
 * (`app.get('/api/chat', chatThreadHandler(runner, { principal }))`).
 */
export function chatThreadHandler(
  runner: AgentRunner,
  options: ChatHandlerOptions,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  checkPrincipalOption(options, 'chatThreadHandler');
  return async (request, response) => {
    let status = 200;
    let body: string;
    try {
      const principal = signedIn(await options.principal(request));
      body = JSON.stringify(await chatThread(runner, chatIdOf(request.url), principal, options));
    } catch (error) {
      const refused = refusal(error);
      status = refused.status;
      body = errorBody(refused);
    }
    response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    response.end(body);
  };
}
