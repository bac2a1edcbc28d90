import { toolResultBlocks, type ResultBlock } from './anthropic-media';
import { asCount, asRecord, groupedTranscript, type GroupedWriter } from './shared';
import type { ChatMessage, Usage } from './types';

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
  const wire = groupedTranscript(messages, ANTHROPIC, WRITER, undefined);
  if (cache) markLast(wire, cache);
  return wire;
}

/** How the messages API takes each kind of message (see {@link groupedTranscript}). */
const WRITER: GroupedWriter<WireMessage, Block, undefined> = {
  results: (content) => ({ role: 'user', content }),
  result(content, message) {
    const shown = message.media ? toolResultBlocks(message.content, message.media) : message.content;
    content.push(
      message.isError
        ? { type: 'tool_result', tool_use_id: message.callId, content: shown, is_error: true }
        : { type: 'tool_result', tool_use_id: message.callId, content: shown },
    );
  },
  user: (message) => ({ role: 'user', content: message.content }),
  assistant: (content) => ({ role: 'assistant', content }),
  text: (text) => ({ type: 'text', text }),
  call: (call) => ({ type: 'tool_use', id: call.id, name: call.name, input: inputOf(call.arguments) }),
};

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
