import type { ChatMessage } from '../models/types';
import { redactTranscript } from '../runner/redact-run';
import type { RunStore } from '../runner/core/store';
import type { Toolkit } from '../toolkit/toolkit';
import type { DecisionContext } from './row';

/** How much of a run's transcript a row keeps, by default: the last 20 messages... */
export const DEFAULT_CONTEXT_MESSAGES = 20;
/** ...and at most 16 384 characters of their JSON. */
export const DEFAULT_CONTEXT_CHARS = 16_384;

/** The bound on a row's context (`ExportDecisionsOptions.context`). */
export interface ContextBound {
  /** The most messages kept, the latest ones. Default {@link DEFAULT_CONTEXT_MESSAGES}. */
  maxMessages?: number;
  /** The most characters of their JSON kept; a longer message's text is cut. Default {@link DEFAULT_CONTEXT_CHARS}. */
  maxChars?: number;
}

/**
 * Reads the context of each call from its run's checkpoint, keeping one checkpoint at a time:
 * consecutive calls of one run (a turn's calls settle together) read it once, and memory holds
 * a single transcript whatever the export's size.
 */
export class ContextReader {
  private cached: { runId: string; messages: readonly ChatMessage[] | undefined } | undefined;

  constructor(
    private readonly runs: Pick<RunStore, 'loadRun'> | undefined,
    private readonly toolkit: Toolkit,
    private readonly bound: Required<ContextBound>,
  ) {}

  /** The transcript that led to `callId` in `runId`: up to and with the model's turn that made the call. */
  async contextOf(runId: string | undefined, callId: string | undefined): Promise<DecisionContext | undefined> {
    if (this.runs === undefined || runId === undefined) return undefined;
    if (this.cached?.runId !== runId) {
      const checkpoint = await this.runs.loadRun(runId);
      const messages = (checkpoint?.state as { messages?: unknown } | undefined)?.messages;
      this.cached = { runId, messages: Array.isArray(messages) ? (messages as ChatMessage[]) : undefined };
    }
    const messages = this.cached.messages;
    if (messages === undefined) return undefined;
    const made = messages.findIndex((m) => m.role === 'assistant' && m.toolCalls?.some((call) => call.id === callId) === true);
    // A call the transcript does not show (a sub-agent's, one made before a trim) has the whole transcript as its context.
    const led = made < 0 ? messages : messages.slice(0, made + 1);
    return bounded(redactTranscript(led, this.toolkit), this.bound);
  }
}

/** The latest messages within the bound, a message too long alone cut to fit; `truncated` says whether anything was left out. */
function bounded(messages: ChatMessage[], bound: Required<ContextBound>): DecisionContext {
  const kept: ChatMessage[] = [];
  let chars = 0;
  let truncated = messages.length > bound.maxMessages;
  for (let i = messages.length - 1; i >= 0 && kept.length < bound.maxMessages; i--) {
    const message = messages[i] as ChatMessage;
    const size = JSON.stringify(message).length;
    if (chars + size <= bound.maxChars) {
      kept.unshift(message);
      chars += size;
      continue;
    }
    truncated = true;
    // The call's own turn is kept when long if cutting its text brings it within the bound.
    if (kept.length === 0) {
      const cut = cutToFit(message, bound.maxChars);
      if (cut !== undefined) kept.unshift(cut);
    }
    break;
  }
  return { messages: kept, truncated };
}

/** `message` with its text cut so its JSON is at most `maxChars` long, or undefined when even no text is too long. */
function cutToFit(message: ChatMessage, maxChars: number): ChatMessage | undefined {
  let content = message.content;
  for (;;) {
    const excess = JSON.stringify({ ...message, content }).length - maxChars;
    if (excess <= 0) return { ...message, content };
    if (content === '') return undefined;
    content = content.slice(0, Math.max(0, content.length - excess));
  }
}
