import { toolResultBlocks, type ResultBlock } from './anthropic-media';
import { asCount, asRecord } from './shared';
import type { ChatMessage, ProviderItem, Usage } from './types';

/** The provider name Anthropic items carry (`ProviderItem.provider`). */
export const ANTHROPIC = 'anthropic';

/** `cache_control` as the messages API takes it. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

type Block =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string | ResultBlock[]; is_error?: true; cache_control?: CacheControl };

type WireMessage = { role: 'user'; content: string | Block[] } | { role: 'assistant'; content: Array<Block | Record<string, unknown>> };

/**
 * The transcript as messages-API messages. Every run of tool results becomes ONE user
 * message of `tool_result` blocks, in call order. An assistant turn that kept its blocks as
 * provider items (it held signed `thinking`, `redacted_thinking` or other blocks the API
 * wants back untouched) is sent as those blocks, verbatim and in their order; any other
 * turn is rebuilt from its text and tool calls. `cache`, when given, marks the last block
 * of the last message as a cache breakpoint, so the growing transcript is read from cache.
 */
export function toWire(messages: readonly ChatMessage[], cache?: CacheControl): WireMessage[] {
  const wire: WireMessage[] = [];
  let results: Block[] | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!results) {
        results = [];
        wire.push({ role: 'user', content: results });
      }
      const content = message.media ? toolResultBlocks(message.content, message.media) : message.content;
      results.push(
        message.isError
          ? { type: 'tool_result', tool_use_id: message.callId, content, is_error: true }
          : { type: 'tool_result', tool_use_id: message.callId, content },
      );
      continue;
    }
    results = undefined;
    if (message.role === 'user') {
      wire.push({ role: 'user', content: message.content });
      continue;
    }
    const kept = anthropicItems(message.items);
    if (kept.length > 0) {
      wire.push({ role: 'assistant', content: kept.map((item) => item.data) });
      continue;
    }
    const content: Block[] = [];
    if (message.content !== '') content.push({ type: 'text', text: message.content });
    for (const call of message.toolCalls ?? [])
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: inputOf(call.arguments) });
    wire.push({ role: 'assistant', content });
  }
  if (cache) markLast(wire, cache);
  return wire;
}

/** The items an Anthropic model made; another provider's items mean nothing to this API. */
function anthropicItems(items: readonly ProviderItem[] | undefined): ProviderItem[] {
  return items ? items.filter((item) => item.provider === ANTHROPIC) : [];
}

/** Puts `cache_control` on the last block of the last user message (a user turn or its tool results). */
function markLast(wire: WireMessage[], cache: CacheControl): void {
  const last = wire.at(-1);
  if (!last || last.role !== 'user') return;
  if (typeof last.content === 'string') {
    if (last.content === '') return;
    last.content = [{ type: 'text', text: last.content, cache_control: cache }];
    return;
  }
  const block = last.content.at(-1);
  if (block && (block.type === 'text' || block.type === 'tool_result')) block.cache_control = cache;
}

/** The messages API wants an object; arguments that were not one are sent as `{}` (their error result explains). */
function inputOf(text: string): Record<string, unknown> {
  if (text === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return asRecord(parsed) ?? {};
  } catch {
    return {};
  }
}

/**
 * Token counts of a messages-API `usage`. The API counts cache reads and writes apart from
 * `input_tokens`; here they are part of `inputTokens`, as `Usage` defines it. `previous`
 * carries what an earlier event of the same stream reported.
 */
export function anthropicUsage(usage: Record<string, unknown> | undefined, previous?: Usage): Usage {
  const has = (key: string) => usage !== undefined && usage[key] !== undefined && usage[key] !== null;
  const read = has('cache_read_input_tokens') ? asCount(usage?.cache_read_input_tokens) : previous?.cachedInputTokens;
  const written = has('cache_creation_input_tokens') ? asCount(usage?.cache_creation_input_tokens) : previous?.cacheWriteInputTokens;
  const uncached = has('input_tokens')
    ? asCount(usage?.input_tokens)
    : (previous?.inputTokens ?? 0) - (previous?.cachedInputTokens ?? 0) - (previous?.cacheWriteInputTokens ?? 0);
  const thinking = asRecord(usage?.output_tokens_details)?.thinking_tokens;
  const result: Usage = {
    inputTokens: uncached + (read ?? 0) + (written ?? 0),
    outputTokens: has('output_tokens') ? asCount(usage?.output_tokens) : (previous?.outputTokens ?? 0),
  };
  if (read !== undefined) result.cachedInputTokens = read;
  if (written !== undefined) result.cacheWriteInputTokens = written;
  const reasoning = thinking !== undefined ? asCount(thinking) : previous?.reasoningTokens;
  if (reasoning !== undefined) result.reasoningTokens = reasoning;
  return result;
}
