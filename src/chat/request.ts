import { InvalidArgumentError } from '../errors';
import type { ChatMessage } from '../models/types';
import type { StoredSession } from '../sessions/store';
import { ChatRequestError } from './errors';

/** What the page sent, as far as this back end reads it: the chat's id and its last message. */
export interface ChatBody {
  chatId: string;
  last: UIMessageIn;
  /** Edited arguments by approval id (the body's `edits`): each approves its call with them instead of the asked ones. */
  edits?: ReadonlyMap<string, Record<string, unknown>>;
  /** `useChat`'s `regenerate()` (`trigger: 'regenerate-message'`): a new turn, even for a message the session has. */
  regenerate: boolean;
}

/** The longest message id kept with the thread (a page's ids are far shorter). */
const MAX_MESSAGE_ID = 200;

/** The most approvals one message may edit: as many as one turn's calls can reasonably ask. */
const MAX_EDITS = 100;

/** The subset of an AI SDK `UIMessage` read here. */
export interface UIMessageIn {
  id: string;
  role: 'user' | 'assistant' | 'system';
  parts: Array<Record<string, unknown>>;
}

/** A tool part of the page's last assistant message. */
export interface ToolPartIn {
  toolCallId: string;
  toolName: string;
  state: string;
  approval?: { id: string; approved?: boolean; reason?: string };
}

/** Checks a route's `principal` option (the host's auth, a function of the request) when `entry` is made. */
export function checkPrincipalOption(options: { principal?: unknown } | undefined, entry: string): void {
  if (typeof options?.principal !== 'function')
    throw new InvalidArgumentError(`${entry} needs principal: (request) => Principal | undefined`);
}

const bad = (message: string): ChatRequestError => new ChatRequestError(400, 'bad_body', message);

/** Checks the body `DefaultChatTransport` sends (`{ id, messages, trigger, ... }`) and picks out what is needed. */
export function readChatBody(raw: unknown): ChatBody {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('the body must be a JSON object { id, messages }');
  const body = raw as { id?: unknown; messages?: unknown; edits?: unknown; trigger?: unknown };
  if (typeof body.id !== 'string' || body.id === '' || body.id.length > 100)
    throw bad('id must be the chat id: a string of 1 to 100 characters');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw bad('messages must be a non-empty array of UI messages');
  const last = body.messages[body.messages.length - 1] as Partial<UIMessageIn> | null;
  if (typeof last !== 'object' || last === null || typeof last.id !== 'string' || !Array.isArray(last.parts))
    throw bad('the last message must be a UI message { id, role, parts }');
  if (last.id === '' || last.id.length > MAX_MESSAGE_ID) throw bad(`the last message's id must be 1 to ${MAX_MESSAGE_ID} characters`);
  if (last.role !== 'user' && last.role !== 'assistant') throw bad("the last message must be the user's or the assistant's");
  for (const part of last.parts) if (typeof part !== 'object' || part === null) throw bad('every message part must be an object');
  const edits = editsOf(body.edits);
  if (body.trigger !== undefined && typeof body.trigger !== 'string') throw bad('trigger must be a string');
  const regenerate = body.trigger === 'regenerate-message';
  return { chatId: body.id, last: last as UIMessageIn, regenerate, ...(edits ? { edits } : {}) };
}

/** The body's `edits`, `{ [approvalId]: args }`, checked for shape; their size and content are the coordinator's to check. */
function editsOf(raw: unknown): Map<string, Record<string, unknown>> | undefined {
  if (raw === undefined || raw === null) return undefined;
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(raw)) throw bad('edits must be an object { [approval id]: the edited arguments }');
  const entries = Object.entries(raw);
  if (entries.length > MAX_EDITS) throw bad(`edits may name at most ${MAX_EDITS} approvals`);
  for (const [id, args] of entries) if (!isObject(args)) throw bad(`the edited arguments of ${id} must be an object`);
  return new Map(entries as Array<[string, Record<string, unknown>]>);
}

/** The text of the user's message. */
export function userText(message: UIMessageIn): string {
  const text = message.parts
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join('');
  if (text.trim() === '') throw bad('the user message has no text');
  return text;
}

/** The tool parts of an assistant message (`tool-NAME` and `dynamic-tool`), each checked for shape. */
export function toolParts(message: UIMessageIn): ToolPartIn[] {
  const parts: ToolPartIn[] = [];
  for (const part of message.parts) {
    const type = part.type;
    if (typeof type !== 'string' || !(type.startsWith('tool-') || type === 'dynamic-tool')) continue;
    const toolName = type === 'dynamic-tool' ? part.toolName : type.slice('tool-'.length);
    if (typeof part.toolCallId !== 'string' || typeof toolName !== 'string' || typeof part.state !== 'string')
      throw bad('a tool part needs toolCallId, a tool name and state');
    const tool: ToolPartIn = { toolCallId: part.toolCallId, toolName, state: part.state };
    const approval = part.approval as ToolPartIn['approval'] | undefined;
    if (approval !== undefined) {
      if (typeof approval !== 'object' || approval === null || typeof approval.id !== 'string')
        throw bad(`the approval of tool call ${part.toolCallId} needs an id`);
      if (approval.approved !== undefined && typeof approval.approved !== 'boolean') throw bad('approval.approved must be a boolean');
      if (approval.reason !== undefined && typeof approval.reason !== 'string') throw bad('approval.reason must be a string');
      tool.approval = approval;
    }
    parts.push(tool);
  }
  return parts;
}

/**
 * Every tool part must be a call this back end issued in this session, under its own name:
 * a part the server never sent is refused, so nothing the page makes up reaches a tool.
 */
export function checkIssued(parts: readonly ToolPartIn[], session: StoredSession | undefined): void {
  const issued = new Map<string, string>();
  for (const message of session?.messages ?? []) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) issued.set(call.id, call.name);
  }
  for (const part of parts) {
    if (issued.get(part.toolCallId) !== part.toolName)
      throw new ChatRequestError(400, 'unknown_tool_call', `tool call ${part.toolCallId} (${part.toolName}) was never issued in this chat`);
  }
}

/** The session id of a chat: the principal's own, so one user never reaches another's thread. */
export function defaultSessionOf(chatId: string, principal: { id: string }): string {
  const id = `${encodeURIComponent(principal.id)}:${encodeURIComponent(chatId)}`;
  if (id.length > 200) throw new InvalidArgumentError('the principal id and chat id are too long for a session id');
  return id;
}

export type { ChatMessage };
