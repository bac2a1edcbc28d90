import type { Toolkit } from '../toolkit/toolkit';
import { REDACTED } from '../toolkit/redaction';
import type { ChatMessage } from '../models/types';
import type { RunResult } from './core/types';

/** Shorter sensitive values are redacted in arguments but not searched for in free text, where they would mask common words. */
const MIN_SEARCHED_LENGTH = 3;

/**
 * A copy of `result` fit to return to a client (an HTTP body, a log): every tool call's
 * arguments, in `toolCalls` and in the transcript, pass through `toolkit.redact` (fields
 * marked `@Sensitive()` read `"[redacted]"`; a tool `toolkit` does not know, all of its
 * arguments), and every copy of a redacted value elsewhere (a tool's result or prompt that
 * quoted it, the model's text, a pending request) is replaced by `"[redacted]"` too. A
 * typed answer (`output`) is copied as JSON. The run's own result is not changed.
 * docs/agents.md, "Returning a run to a client".
 */
export function redactRun<TOutput>(result: RunResult<TOutput>, toolkit: Toolkit): RunResult<unknown> {
  const copy = JSON.parse(JSON.stringify(result)) as RunResult<unknown>;
  return redactCopy(copy, copy.messages, copy.toolCalls, toolkit);
}

/**
 * A copy of a transcript fit to show, as {@link redactRun} redacts a run's: every tool call's
 * arguments through `toolkit.redact`, and every copy of a redacted value elsewhere in it (a
 * tool result that quoted it, the model's text) replaced by `"[redacted]"`. What evaluation
 * data keeps of a run's context (docs/operating.md, "Decisions as evaluation data").
 */
export function redactTranscript(messages: readonly ChatMessage[], toolkit: Toolkit): ChatMessage[] {
  const copy = JSON.parse(JSON.stringify(messages)) as ChatMessage[];
  return redactCopy(copy, copy, [], toolkit);
}

/** Redacts `copy` (a fresh JSON copy), whose `messages` and `toolCalls` are the calls to redact by field. */
function redactCopy<T>(copy: T, messages: ChatMessage[], toolCalls: Array<{ name: string; arguments: string }>, toolkit: Toolkit): T {
  const secrets = new Set<string>();
  const redactCall = (call: { name: string; arguments: string }): void => {
    call.arguments = redactArguments(toolkit, call.name, call.arguments, secrets);
  };
  for (const message of messages) if (message.role === 'assistant') message.toolCalls?.forEach(redactCall);
  toolCalls.forEach(redactCall);
  const searched = [...secrets].filter((s) => s.length >= MIN_SEARCHED_LENGTH).sort((a, b) => b.length - a.length);
  return searched.length === 0 ? copy : (replaceIn(copy, searched) as T);
}

/** A call's argument text with its sensitive values redacted; those values are added to `secrets`. */
function redactArguments(toolkit: Toolkit, name: string, text: string, secrets: Set<string>): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text; // malformed: redacted whole when the tool has anything sensitive, or is unknown
  }
  const redacted = toolkit.redact(name, parsed);
  collect(parsed, redacted, secrets, 0);
  return typeof redacted === 'string' ? redacted : JSON.stringify(redacted);
}

/** The values of `original` that `redacted` redacts, as the strings they show as in text. */
function collect(original: unknown, redacted: unknown, secrets: Set<string>, depth: number): void {
  if (depth > 64) return;
  if (redacted === REDACTED && original !== REDACTED) {
    leaves(original, secrets, depth);
    return;
  }
  if (typeof original !== 'object' || original === null || typeof redacted !== 'object' || redacted === null) return;
  for (const key of Object.keys(original)) {
    collect((original as Record<string, unknown>)[key], (redacted as Record<string, unknown>)[key], secrets, depth + 1);
  }
}

function leaves(value: unknown, secrets: Set<string>, depth: number): void {
  if (depth > 64) return;
  if (typeof value === 'string') {
    secrets.add(value);
    // As it appears inside JSON text (a transcript's argument string, a stored result).
    secrets.add(JSON.stringify(value).slice(1, -1));
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    secrets.add(String(value));
  } else if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) leaves(child, secrets, depth + 1);
    secrets.add(JSON.stringify(value));
  }
}

/** `value` with every occurrence of each secret in any string (keys included) replaced. */
function replaceIn(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return secrets.reduce((text, secret) => text.split(secret).join(REDACTED), value);
  if (Array.isArray(value)) return value.map((item) => replaceIn(item, secrets));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[replaceIn(key, secrets) as string] = replaceIn(child, secrets);
  return out;
}
