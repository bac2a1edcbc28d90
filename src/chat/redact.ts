import { jsonOrText, RunRedactor } from '../runner/redact-run';
import type { Toolkit } from '../toolkit/toolkit';
import type { UIStreamPart } from './parts';

/** The fields of a part that say what it is and how it is answered: never searched. */
const KEYS = new Set(['type', 'id', 'toolCallId', 'toolName', 'approvalId', 'messageId']);

/**
 * Redacts what a chat response sends the page, as every other front end does, by the runner's
 * one redaction ({@link RunRedactor}: docs/deploying.md, "What is redacted where"), numbers
 * included. The calls' values are learnt as they pass (and from the session's earlier calls,
 * given up front), so a later part is redacted by the values of an earlier call.
 */
export class StreamRedactor extends RunRedactor {
  constructor(toolkit: Toolkit | undefined) {
    super(toolkit, true);
  }

  /** Learns a call's sensitive values; returns its arguments (the model's JSON text) redacted, parsed when they are JSON. */
  call(tool: string, argumentsText: string): unknown {
    return this.value(this.learn(tool, jsonOrText(argumentsText)));
  }

  /** A part fit to send: every field but those that name it searched. */
  part(part: UIStreamPart): UIStreamPart {
    if (!this.active) return part;
    const out: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(part)) out[key] = KEYS.has(key) ? field : this.value(field);
    return out as UIStreamPart;
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
