import { REDACTED } from '../toolkit/redaction';
import type { Toolkit } from '../toolkit/toolkit';
import type { UIStreamPart } from './parts';

/** Shorter sensitive values are redacted in arguments but not searched for in free text, where they would garble common words (as `redactRun` does). */
const MIN_SEARCHED_LENGTH = 3;
/** How deep a value is walked: deeper parts are redacted whole, so a hostile value cannot exhaust the stack. */
const MAX_DEPTH = 64;
/** The fields of a part that say what it is and how it is answered: never searched. */
const KEYS = new Set(['type', 'id', 'toolCallId', 'toolName', 'approvalId', 'messageId']);

/**
 * Redacts what a chat response sends the page, as every other front end does
 * (docs/deploying.md, "What is redacted where"): a tool call's `@Sensitive()` arguments read
 * `"[redacted]"` (by `toolkit.redact`, the one field plan), and every value so redacted is
 * replaced wherever else a part holds it: a result, an error, a request's prompt, and the
 * model's text quoting any of them. The calls' values are learnt as they pass (and from the
 * session's earlier calls, given up front), so a later part is redacted by the values of an
 * earlier call.
 */
export class StreamRedactor {
  private readonly secrets = new Set<string>();
  private searched: string[] = [];

  constructor(private readonly toolkit: Toolkit | undefined) {}

  /** Whether any value is searched for in text (text is then held back at block ends; see {@link TextHold}). */
  get active(): boolean {
    return this.searched.length > 0;
  }

  /** The longest searched value's length: how much of a text stream may be the start of one. */
  get longest(): number {
    return this.searched[0]?.length ?? 0;
  }

  /** Learns a call's sensitive values; returns its arguments (the model's JSON text) redacted, parsed when they are JSON. */
  call(tool: string, argumentsText: string): unknown {
    if (!this.toolkit) return jsonOrText(argumentsText);
    const parsed = jsonOrText(argumentsText);
    const redacted = this.toolkit.redact(tool, parsed);
    const before = this.secrets.size;
    collect(parsed, redacted, this.secrets, 0);
    if (this.secrets.size !== before)
      this.searched = [...this.secrets].filter((s) => s.length >= MIN_SEARCHED_LENGTH).sort((a, b) => b.length - a.length);
    return this.value(redacted);
  }

  /** `text` with every learnt value replaced. */
  text(text: string): string {
    return this.searched.reduce((out, secret) => (out.includes(secret) ? out.split(secret).join(REDACTED) : out), text);
  }

  /** A copy of a JSON value with every learnt value replaced in its strings and numbers. */
  value<T>(value: T): T {
    return this.searched.length === 0 ? value : (this.walk(value, 0) as T);
  }

  /** A part fit to send: every field but those that name it searched. */
  part(part: UIStreamPart): UIStreamPart {
    if (this.searched.length === 0) return part;
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(part)) out[key] = KEYS.has(key) ? field : this.walk(field, 0);
    return out as UIStreamPart;
  }

  private walk(value: unknown, depth: number): unknown {
    if (depth > MAX_DEPTH) return REDACTED;
    if (typeof value === 'string') return this.text(value);
    if (typeof value === 'number') return this.secrets.has(String(value)) ? REDACTED : value;
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
 * A streamed text block, redacted although a value may arrive split across deltas: what could
 * still be the start of a learnt value (its last `longest - 1` characters) is held back until
 * the next delta or the block's end.
 */
export class TextHold {
  private held = '';

  constructor(private readonly redactor: StreamRedactor) {}

  /** The text that may be sent now, redacted ('' when all of it is held). */
  push(delta: string): string {
    const text = this.redactor.text(this.held + delta);
    const keep = Math.min(text.length, Math.max(0, this.redactor.longest - 1));
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  /** What is still held, redacted: sent before the block ends. */
  flush(): string {
    const text = this.redactor.text(this.held);
    this.held = '';
    return text;
  }
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
