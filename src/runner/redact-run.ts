import type { Toolkit } from '../toolkit/toolkit';
import { REDACTED } from '../toolkit/redaction';
import type { ChatMessage } from '../models/types';
import type { RunResult } from './core/types';

/** Shorter sensitive values are redacted in arguments but not searched for in free text, where they would mask common words. */
const MIN_SEARCHED_LENGTH = 3;
/** How deep a value is walked: deeper parts are redacted whole, so a hostile value cannot exhaust the stack. */
const MAX_DEPTH = 64;

/**
 * The one redaction of what a run shows (docs/deploying.md, "What is redacted where"): a tool
 * call's `@Sensitive()` arguments read `"[redacted]"` (by `toolkit.redact`, the one field plan;
 * a tool the toolkit does not know, all of its arguments), and every value so redacted is
 * replaced wherever else it shows: a result, an error, a prompt, the model's text quoting it.
 * Values are learnt call by call ({@link learn}), so what is replaced afterwards ({@link text},
 * {@link value}) covers every call learnt so far. {@link redactRun} redacts a finished run with
 * it; a chat response, the parts it streams.
 */
export class RunRedactor {
  private readonly secrets = new Set<string>();
  /** The learnt values searched for in text, longest first (so a value inside another is not cut out of it first). */
  private sorted: string[] = [];
  /** Whether values were learnt since {@link sorted} was built: it is rebuilt when next read, not per call learnt. */
  private stale = false;

  /**
   * Without a toolkit nothing is learnt, so nothing is redacted. `numbers`: a number equal to a
   * learnt value is redacted too (what a page shows; a run's result keeps its counts).
   */
  constructor(
    private readonly toolkit: Toolkit | undefined,
    private readonly numbers: boolean,
  ) {}

  /** Whether any value is searched for in text. */
  get active(): boolean {
    return this.searched.length > 0;
  }

  private get searched(): string[] {
    if (this.stale) {
      this.sorted = [...this.secrets].filter((s) => s.length >= MIN_SEARCHED_LENGTH).sort((a, b) => b.length - a.length);
      this.stale = false;
    }
    return this.sorted;
  }

  /** The longest searched value's length: how much of a text stream may be the start of one. */
  get longest(): number {
    return this.searched[0]?.length ?? 0;
  }

  /** Learns the sensitive values of a call of `tool` with `args` (parsed when they are JSON); returns the arguments redacted. */
  learn(tool: string, args: unknown): unknown {
    if (!this.toolkit) return args;
    const redacted = this.toolkit.redact(tool, args);
    const before = this.secrets.size;
    collect(args, redacted, this.secrets, 0);
    if (this.secrets.size !== before) this.stale = true;
    return redacted;
  }

  /** `text` with every learnt value replaced. */
  text(text: string): string {
    return this.searched.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join(REDACTED) : out), text);
  }

  /** A copy of a JSON value with every learnt value replaced in its strings (keys included), and numbers when asked. */
  value<T>(value: T): T {
    return this.searched.length === 0 ? value : (this.walk(value, 0) as T);
  }

  private walk(value: unknown, depth: number): unknown {
    if (depth > MAX_DEPTH) return REDACTED;
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number') return this.numbers && this.secrets.has(String(value)) ? REDACTED : value;
    if (Array.isArray(value)) return value.map((item) => this.walk(item, depth + 1));
    if (typeof value === 'object' && value !== null) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[this.text(key)] = this.walk(item, depth + 1);
      return out;
    }
    return value;
  }
}

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
  const redactor = new RunRedactor(toolkit, false);
  // A malformed argument text is redacted whole when the tool has anything sensitive, or is unknown.
  const redactCall = (call: { name: string; arguments: string }): void => {
    const redacted = redactor.learn(call.name, jsonOrText(call.arguments));
    call.arguments = typeof redacted === 'string' ? redacted : JSON.stringify(redacted);
  };
  for (const message of messages) if (message.role === 'assistant') message.toolCalls?.forEach(redactCall);
  toolCalls.forEach(redactCall);
  return redactor.value(copy);
}

/** Adds to `out` every value of `original` that `redacted` replaced, as it shows in text (and inside JSON text). */
function collect(original: unknown, redacted: unknown, out: Set<string>, depth: number): void {
  if (original === redacted || depth > MAX_DEPTH) return;
  if (redacted === REDACTED) {
    leaves(original, out, depth);
    return;
  }
  if (typeof original !== 'object' || original === null || typeof redacted !== 'object' || redacted === null) return;
  for (const key of Object.keys(original))
    collect((original as Record<string, unknown>)[key], (redacted as Record<string, unknown>)[key], out, depth + 1);
}

function leaves(value: unknown, out: Set<string>, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (typeof value === 'string') {
    out.add(value);
    // As it appears inside JSON text (a transcript's argument string, a stored result).
    out.add(JSON.stringify(value).slice(1, -1));
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    out.add(String(value));
  } else if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) leaves(child, out, depth + 1);
    out.add(JSON.stringify(value));
  }
}

/** The value a JSON text holds, or the text itself. */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
