import { InvalidArgumentError } from '../../../errors';
import type { ChatMessage, ChatModel } from '../../../models/types';
import type { BeforeModel, ModelCall } from './hooks';

/** Estimates a message's tokens. The default counts a token per 4 characters of its JSON (provider items included). */
export type TokenEstimate = (message: ChatMessage) => number;

export const roughTokens: TokenEstimate = (message) => Math.ceil(JSON.stringify(message).length / 4);

/** Options of {@link trimToTokens}. */
export interface TrimOptions {
  /** The most tokens the transcript may take (the system prompt and tools not counted). */
  maxTokens: number;
  estimate?: TokenEstimate;
}

/**
 * Splits a transcript into exchanges: each starts at a user message and runs to the next one,
 * so a tool call, its result and the provider items of its assistant message are always in
 * the same exchange. Whatever comes before the first user message is an exchange of its own.
 */
export function exchangesOf(messages: readonly ChatMessage[]): ChatMessage[][] {
  const exchanges: ChatMessage[][] = [];
  for (const message of messages) {
    if (message.role === 'user' || exchanges.length === 0) exchanges.push([message]);
    else (exchanges[exchanges.length - 1] as ChatMessage[]).push(message);
  }
  return exchanges;
}

/** The oldest exchanges left out until the rest fits `maxTokens`; the latest exchange is always kept. Returns the kept and the dropped. */
export function trimExchanges(
  messages: readonly ChatMessage[],
  maxTokens: number,
  estimate: TokenEstimate = roughTokens,
): { kept: ChatMessage[]; dropped: ChatMessage[] } {
  const exchanges = exchangesOf(messages);
  const sizes = exchanges.map((exchange) => exchange.reduce((sum, message) => sum + estimate(message), 0));
  let total = sizes.reduce((a, b) => a + b, 0);
  let first = 0;
  // Whole exchanges only, and never an exchange that does not start with the user's message: both
  // providers want the transcript to open with the user, and no tool result without its call.
  while (first < exchanges.length - 1 && (total > maxTokens || exchanges[first]?.[0]?.role !== 'user')) {
    total -= sizes[first] as number;
    first++;
  }
  return { kept: exchanges.slice(first).flat(), dropped: exchanges.slice(0, first).flat() };
}

function checkBudget(maxTokens: unknown, name: string): void {
  if (!Number.isSafeInteger(maxTokens) || (maxTokens as number) < 1)
    throw new InvalidArgumentError(`${name}: maxTokens must be a positive integer`);
}

/**
 * A `beforeModel` that leaves the oldest exchanges out of each request until the transcript fits
 * `maxTokens`: whole exchanges (a user message and everything up to the next), so the system
 * prompt stays (it is not in the transcript), a tool call is never split from its result,
 * and provider items (signed thinking, reasoning) stay with their assistant message.
 *
 * @example
 * ```ts
 * new AgentRunner({ model, toolkit, beforeModel: trimToTokens({ maxTokens: 60_000 }) })
 * ```
 */
export function trimToTokens(options: TrimOptions): BeforeModel {
  checkBudget(options?.maxTokens, 'trimToTokens');
  const estimate = options.estimate ?? roughTokens;
  return (call: ModelCall) => ({ ...call, messages: trimExchanges(call.messages, options.maxTokens, estimate).kept });
}

/** Options of {@link summarizeOlder}. */
export interface SummarizeOptions extends TrimOptions {
  /** The model that writes the summary (a small, cheap one does). */
  model: ChatModel;
  /** Its instructions. Default: summarise for the assistant who continues the conversation. */
  prompt?: string;
  /** The most characters of the left-out exchanges sent to be summarised (the newest kept). Default 100 000. */
  maxSourceChars?: number;
}

const SUMMARY_PROMPT =
  'Summarise this earlier part of a conversation between a user and an assistant for the assistant who continues it: ' +
  'facts, decisions, tool results that still matter, open questions. Be brief.';

/**
 * A `beforeModel` like {@link trimToTokens} that, instead of just leaving the oldest exchanges
 * out, asks `model` to summarise them and sends the summary first (as a user message and an
 * assistant's acknowledgement, so the roles still alternate). The summary of the same
 * left-out exchanges is asked for once and reused.
 */
export function summarizeOlder(options: SummarizeOptions): BeforeModel {
  checkBudget(options?.maxTokens, 'summarizeOlder');
  if (typeof options.model?.complete !== 'function') throw new InvalidArgumentError('summarizeOlder needs a model');
  const estimate = options.estimate ?? roughTokens;
  const maxSource = options.maxSourceChars ?? 100_000;
  let cached: { key: string; summary: string } | undefined;
  return async (call: ModelCall) => {
    const { kept, dropped } = trimExchanges(call.messages, options.maxTokens, estimate);
    if (dropped.length === 0) return call;
    const source = dropped.map(render).join('\n').slice(-maxSource);
    const key = `${dropped.length}:${source.length}:${source.slice(-200)}`;
    if (cached?.key !== key) {
      const response = await options.model.complete({
        system: options.prompt ?? SUMMARY_PROMPT,
        messages: [{ role: 'user', content: source }],
        tools: [],
      });
      cached = { key, summary: response.text };
    }
    const summary: ChatMessage[] = [
      { role: 'user', content: `Summary of the earlier conversation:\n${cached.summary}` },
      { role: 'assistant', content: 'Understood.' },
    ];
    return { ...call, messages: [...summary, ...kept] };
  };
}

function render(message: ChatMessage): string {
  if (message.role === 'tool') return `tool ${message.name} result: ${message.content}`;
  if (message.role === 'assistant') {
    const calls = (message.toolCalls ?? []).map((call) => ` [called ${call.name} ${call.arguments}]`).join('');
    return `assistant: ${message.content}${calls}`;
  }
  return `user: ${message.content}`;
}
