import type { Message, Part } from '@a2a-js/sdk';
import type { Answer } from '../../results/wire';
import { MAX_COMMENT_LENGTH } from '../../suspension/audit';
import type { SuspendedCall } from '../../suspension/store';
import { A2ARequestError } from './errors';

/** A client's reply to an `input-required` task, read: the call it answers, the answer, and the answerer's words. */
export interface ReadReply {
  call: SuspendedCall;
  answer: Answer;
  comment?: string;
}

const YES = /^(y|yes|ok|approve|approved|accept)$/i;
const NO = /^(n|no|decline|declined|deny|denied|reject)$/i;

const bad = (message: string) => new A2ARequestError('bad_answer', message);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads the reply `message` as the answer to one of `open` (docs/a2a.md, "Answering"). A data
 * part is preferred: `{ ok, data?, reason?, comment?, args?, id? }` is an answer (`id` picks
 * the request when several wait); any other object is the `data` of an `ok` answer. Text is
 * accepted where the request allows: yes/no for an approval, the value of an input request
 * whose schema has one string property (or none). The coordinator validates the result.
 */
export function readReply(message: Message, open: readonly SuspendedCall[]): ReadReply {
  const data = message.parts.find((part) => part.content?.$case === 'data')?.content?.value as unknown;
  if (data !== undefined) {
    if (!isObject(data)) throw bad('the data part of an answer must be a JSON object');
    return fromData(data, pick(open, data.id));
  }
  const text = textOf(message.parts).trim();
  if (text === '') throw bad('the reply answers nothing: send a data part { ok, data? } or text');
  return fromText(text, pick(open, undefined));
}

/** The text of a message's text parts, joined. */
export function textOf(parts: readonly Part[]): string {
  return parts
    .filter((part) => part.content?.$case === 'text')
    .map((part) => part.content?.value as string)
    .join('\n');
}

function pick(open: readonly SuspendedCall[], id: unknown): SuspendedCall {
  if (id === undefined) return open[0] as SuspendedCall;
  const call = open.find((candidate) => candidate.request.id === id);
  if (!call) throw bad(`the task waits on no request ${JSON.stringify(id)}`);
  return call;
}

function fromData(data: Record<string, unknown>, call: SuspendedCall): ReadReply {
  const id = call.request.id;
  if (typeof data.ok !== 'boolean') {
    const { id: _id, ...value } = data;
    return { call, answer: { id, ok: true, data: value } };
  }
  if (data.data !== undefined && !isObject(data.data)) throw bad('data must be a JSON object');
  if (data.args !== undefined && !isObject(data.args)) throw bad('args must be a JSON object');
  if (data.comment !== undefined && typeof data.comment !== 'string') throw bad('comment must be a string');
  if (data.reason !== undefined && data.reason !== 'declined' && data.reason !== 'cancelled')
    throw bad('reason must be "declined" or "cancelled"');
  const answer: Answer = data.ok
    ? { id, ok: true, ...(data.data ? { data: data.data } : {}), ...(data.args ? { args: data.args } : {}) }
    : { id, ok: false, reason: data.reason ?? 'declined', ...(data.data ? { data: data.data } : {}) };
  const comment = data.comment === undefined ? undefined : data.comment.slice(0, MAX_COMMENT_LENGTH);
  return { call, answer, ...(comment ? { comment } : {}) };
}

function fromText(text: string, call: SuspendedCall): ReadReply {
  const { request } = call;
  const id = request.id;
  if (request.kind === 'approval') {
    if (YES.test(text)) return { call, answer: { id, ok: true } };
    if (NO.test(text)) return { call, answer: { id, ok: false, reason: 'declined' } };
    throw bad('an approval is answered "yes" or "no" (or a data part { ok })');
  }
  const schema = request.data?.schema;
  if (schema === undefined) return { call, answer: { id, ok: true, data: { text } } };
  const properties = isObject(schema) && isObject(schema.properties) ? Object.entries(schema.properties) : [];
  const only = properties.length === 1 ? properties[0] : undefined;
  if (only && isObject(only[1]) && only[1].type === 'string') return { call, answer: { id, ok: true, data: { [only[0]]: text } } };
  throw bad(`request ${id} asks for data matching its schema: send a data part`);
}
