import { InvalidArgumentError, ModelResponseError } from '../errors';
import { toAnthropicTools } from '../toolkit/adapters';
import type { HttpModelOptions } from '../http/settings';
import type { SseEvent } from '../http/sse';
import type { ModelRequest, ModelResponse, ModelStreamEvent, ModelTool, ProviderItem, ToolCall, Usage } from './types';
import { ANTHROPIC, anthropicUsage, toWire, type CacheControl } from './anthropic-wire';
import { argumentsText, asRecord, asString, headWithCap, joinUrl, parseChunk, ToolsCache } from './shared';
import { HttpChatModel, wire, type Wiring } from './core';

/** The most content blocks one streamed message may carry. */
const MAX_STREAMED_BLOCKS = 1024;

/**
 * Extended thinking: `enabled` with a token budget (at least 1024 and below `maxTokens`),
 * `adaptive` (the model decides how much to think, on models that offer it), or `disabled`.
 */
export type AnthropicThinking = { type: 'enabled'; budget_tokens: number } | { type: 'adaptive' } | { type: 'disabled' };

/** Where prompt-cache breakpoints go (`cache_control: { type: "ephemeral" }`). */
export interface AnthropicPromptCache {
  /** On the last tool, so the whole tool list is cached. Default true. */
  tools?: boolean;
  /** On the system prompt. Default true. */
  system?: boolean;
  /** On the last block of the transcript, so each turn reads the turns before it from cache. Default false. */
  messages?: boolean;
  /** The cache's lifetime. Default the API's (5 minutes). */
  ttl?: '5m' | '1h';
}

/** Options of {@link AnthropicModel}. */
export interface AnthropicModelOptions extends HttpModelOptions {
  /** The API root that holds `/v1/messages`. Default `https://api.anthropic.com`. */
  baseUrl?: string;
  /** Sent as `x-api-key`. */
  apiKey: string;
  model: string;
  /** Required by the messages API. Default 4096. */
  maxTokens?: number;
  /** The `anthropic-version` header. Default `2023-06-01`. */
  version?: string;
  /** Extra body fields for every request: `temperature`, `tool_choice`, `metadata`... */
  params?: Record<string, unknown>;
  /**
   * Extended thinking. Thinking text arrives as `reasoning` events; the signed `thinking`
   * and `redacted_thinking` blocks are kept in the transcript (and checkpoints) as
   * provider items and sent back verbatim, as the API requires once a tool is called.
   */
  thinking?: AnthropicThinking;
  /** Prompt caching: `true` for breakpoints on the tools and the system prompt, or where to put them. */
  promptCache?: boolean | AnthropicPromptCache;
}

/** The blocks of one streamed message as they arrive, by index. */
type Assembling =
  | { kind: 'text'; text: string; data: Record<string, unknown> }
  | { kind: 'tool_use'; json: string; data: Record<string, unknown> }
  | { kind: 'thinking'; thinking: string; signature: string; data: Record<string, unknown> }
  | { kind: 'other'; data: Record<string, unknown> };

/**
 * An Anthropic messages-API model: `tool_use` blocks in, `tool_result` blocks (one user
 * message holding every result of a turn, in call order) back. node:http(s) (or your `fetch`), retries per
 * {@link HttpModelOptions}, non-streaming and streaming (server-sent events), extended
 * thinking and prompt caching as options.
 */
export class AnthropicModel extends HttpChatModel {
  /** The model asked for, as traces name it. */
  readonly model: string;
  private readonly bodyHead: string;
  private readonly headFields: Record<string, unknown>;
  private readonly toolsJson: ToolsCache<string>;
  private readonly systemCache: CacheControl | undefined;
  private readonly messagesCache: CacheControl | undefined;

  constructor(options: AnthropicModelOptions) {
    super(wiring(options));
    this.model = options.model;
    const maxTokens = options.maxTokens ?? 4096;
    const thinking = checkThinking(options.thinking, maxTokens);
    const cache = cacheOptions(options.promptCache);
    const control: CacheControl = cache?.ttl ? { type: 'ephemeral', ttl: cache.ttl } : { type: 'ephemeral' };
    const toolsControl = cache && cache.tools !== false ? control : undefined;
    this.systemCache = cache && cache.system !== false ? control : undefined;
    this.messagesCache = cache?.messages === true ? control : undefined;
    this.toolsJson = new ToolsCache((tools: readonly ModelTool[]) => {
      const wire: Array<Record<string, unknown>> = toAnthropicTools(tools).map((tool) => ({ ...tool }));
      const last = wire.at(-1);
      if (last && toolsControl) last.cache_control = toolsControl;
      return JSON.stringify(wire);
    });
    this.headFields = {
      max_tokens: maxTokens,
      ...(thinking ? { thinking } : {}),
      ...options.params,
      model: options.model,
    };
    this.bodyHead = JSON.stringify(this.headFields).slice(0, -1);
  }

  /** A stream a server answered with one document: its thinking as reasoning, then its text. */
  protected override *wholeAsEvents(response: ModelResponse): Iterable<ModelStreamEvent> {
    for (const item of response.items ?? []) {
      const thinking = item.type === 'thinking' ? asString(item.data.thinking) : undefined;
      if (thinking) yield { type: 'reasoning', delta: thinking };
    }
    if (response.text !== '') yield { type: 'text', delta: response.text };
    yield { type: 'response', response };
  }

  protected async *readEvents(events: AsyncGenerator<SseEvent>): AsyncGenerator<ModelStreamEvent, ModelResponse> {
    const blocks = new Map<number, Assembling>();
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    let stopReason: string | undefined;
    let stopped = false;
    const open = (index: number, raw: unknown): Assembling | undefined => {
      const block = asRecord(raw);
      if (!block) return undefined;
      if (!blocks.has(index) && blocks.size >= MAX_STREAMED_BLOCKS)
        throw new ModelResponseError(this.provider, `a stream has more than ${MAX_STREAMED_BLOCKS} content blocks`);
      const entry = assembling(block);
      blocks.set(index, entry);
      return entry;
    };
    for await (const event of events) {
      const data = parseChunk(this.provider, event.data);
      this.throwIfError(data);
      switch (data.type) {
        case 'message_start': {
          const message = asRecord(data.message);
          usage = anthropicUsage(asRecord(message?.usage));
          // Programmatic tool calling delivers blocks (a tool_use among them) already whole here.
          if (Array.isArray(message?.content)) {
            for (const [index, raw] of message.content.entries()) {
              const entry = open(index, raw);
              if (entry?.kind === 'text' && entry.text !== '') yield { type: 'text', delta: entry.text };
            }
          }
          break;
        }
        case 'content_block_start': {
          const index = typeof data.index === 'number' ? data.index : blocks.size;
          const entry = open(index, data.content_block);
          if (entry?.kind === 'text' && entry.text !== '') yield { type: 'text', delta: entry.text };
          if (entry?.kind === 'thinking' && entry.thinking !== '') yield { type: 'reasoning', delta: entry.thinking };
          break;
        }
        case 'content_block_delta': {
          const delta = asRecord(data.delta);
          const entry = typeof data.index === 'number' ? blocks.get(data.index) : undefined;
          if (!delta || !entry) break;
          if (delta.type === 'text_delta' && entry.kind === 'text') {
            const piece = asString(delta.text) ?? '';
            if (piece) {
              entry.text += piece;
              yield { type: 'text', delta: piece };
            }
          } else if (delta.type === 'input_json_delta' && entry.kind === 'tool_use') {
            entry.json += asString(delta.partial_json) ?? '';
          } else if (delta.type === 'thinking_delta' && entry.kind === 'thinking') {
            const piece = asString(delta.thinking) ?? '';
            if (piece) {
              entry.thinking += piece;
              yield { type: 'reasoning', delta: piece };
            }
          } else if (delta.type === 'signature_delta' && entry.kind === 'thinking') {
            // The signature arrives whole, once, just before the block stops.
            entry.signature = asString(delta.signature) ?? entry.signature;
          }
          break;
        }
        case 'message_delta': {
          stopReason = asString(asRecord(data.delta)?.stop_reason) ?? stopReason;
          const reported = asRecord(data.usage);
          if (reported) usage = anthropicUsage(reported, usage);
          break;
        }
        case 'message_stop':
          stopped = true;
          break;
        default:
          break; // ping, content_block_stop and future event types carry nothing the loop needs
      }
      if (stopped) break;
    }
    if (!stopped) throw new ModelResponseError(this.provider, 'the stream ended before message_stop');
    // A streamed call's arguments stay the JSON text exactly as the model sent it.
    const sent = new Map<Record<string, unknown>, string>();
    const content = [...blocks.keys()]
      .sort((a, b) => a - b)
      .map((index) => {
        const entry = blocks.get(index) as Assembling;
        const block = finished(entry);
        if (entry.kind === 'tool_use' && entry.json !== '') sent.set(block, entry.json);
        return block;
      });
    const response = this.fromContent(
      content.filter((block) => !(block.type === 'text' && block.text === '')),
      usage,
      stopReason,
      sent,
    );
    return response;
  }

  protected parse(json: Record<string, unknown>): ModelResponse {
    this.throwIfError(json);
    if (!Array.isArray(json.content))
      throw new ModelResponseError(this.provider, 'the body has no content array', JSON.stringify(json).slice(0, 200));
    const content: Array<Record<string, unknown>> = [];
    for (const raw of json.content) {
      const block = asRecord(raw);
      if (block) content.push(block);
    }
    return this.fromContent(content, anthropicUsage(asRecord(json.usage)), asString(json.stop_reason));
  }

  /**
   * The turn from its content blocks. When it holds anything but text and `tool_use`
   * (signed thinking, redacted thinking, server-tool blocks), every block is kept as a
   * provider item, in order and untouched, so the next request sends the turn back exactly.
   */
  private fromContent(
    content: Array<Record<string, unknown>>,
    usage: Usage,
    stopReason: string | undefined,
    sent?: ReadonlyMap<Record<string, unknown>, string>,
  ): ModelResponse {
    let text = '';
    const toolCalls: ToolCall[] = [];
    let plain = true;
    for (const block of content) {
      if (block.type === 'text') text += asString(block.text) ?? '';
      else if (block.type === 'tool_use') toolCalls.push(this.toolCall(block, sent?.get(block)));
      else plain = false;
    }
    const response: ModelResponse = { text, toolCalls, usage, stopReason };
    if (!plain) {
      response.items = content.map((block): ProviderItem => ({
        provider: this.provider,
        type: asString(block.type) ?? 'unknown',
        data: block,
      }));
    }
    return response;
  }

  private toolCall(block: Record<string, unknown>, sent?: string): ToolCall {
    const id = asString(block.id);
    const name = asString(block.name);
    if (!id || !name)
      throw new ModelResponseError(this.provider, 'a tool_use block has no id or name', JSON.stringify(block).slice(0, 200));
    return { id, name, arguments: sent ?? (block.input === undefined ? '{}' : argumentsText(block.input)) };
  }

  protected body(request: ModelRequest, stream: boolean): string {
    let body = headWithCap(this.bodyHead, this.headFields, ['max_tokens'], request.maxOutputTokens);
    if (request.system) {
      body += this.systemCache
        ? `,"system":${JSON.stringify([{ type: 'text', text: request.system, cache_control: this.systemCache }])}`
        : `,"system":${JSON.stringify(request.system)}`;
    }
    body += `,"messages":${JSON.stringify(toWire(request.messages, this.messagesCache))}`;
    if (request.tools.length > 0) body += `,"tools":${this.toolsJson.get(request.tools)}`;
    if (stream) body += ',"stream":true';
    return `${body}}`;
  }

  /** `{ type: "error", error: { type, message } }`, in a body or as a stream event. */
  private throwIfError(json: Record<string, unknown>): void {
    if (json.type !== 'error' && json.error === undefined) return;
    const error = asRecord(json.error);
    const message = [asString(error?.type), asString(error?.message)].filter(Boolean).join(': ') || JSON.stringify(json.error);
    throw new ModelResponseError(this.provider, `the provider reported an error: ${message}`);
  }
}

/** A block as it starts: whole (`redacted_thinking`, a block from `message_start`) or to be completed by deltas. */
function assembling(block: Record<string, unknown>): Assembling {
  switch (block.type) {
    case 'text':
      return { kind: 'text', text: asString(block.text) ?? '', data: block };
    case 'tool_use': {
      const input = asRecord(block.input);
      return { kind: 'tool_use', json: input && Object.keys(input).length > 0 ? JSON.stringify(input) : '', data: block };
    }
    case 'thinking':
      return { kind: 'thinking', thinking: asString(block.thinking) ?? '', signature: asString(block.signature) ?? '', data: block };
    default:
      return { kind: 'other', data: block };
  }
}

/** The block as the non-streaming API would have sent it: the start's fields, completed by the deltas. */
function finished(entry: Assembling): Record<string, unknown> {
  switch (entry.kind) {
    case 'text':
      return { ...entry.data, text: entry.text };
    case 'tool_use':
      return { ...entry.data, input: entry.json === '' ? {} : streamedInput(entry.json) };
    case 'thinking':
      return { ...entry.data, thinking: entry.thinking, signature: entry.signature };
    default:
      return entry.data;
  }
}

/**
 * Streamed tool input, parsed; text that is not a JSON object is kept as a string, so
 * the call's arguments carry it unchanged and its error result explains.
 */
function streamedInput(json: string): unknown {
  try {
    const parsed: unknown = JSON.parse(json);
    return asRecord(parsed) ?? json;
  } catch {
    return json;
  }
}

function checkThinking(thinking: AnthropicThinking | undefined, maxTokens: number): AnthropicThinking | undefined {
  if (thinking === undefined) return undefined;
  if (thinking.type === 'adaptive' || thinking.type === 'disabled') return { type: thinking.type };
  if (thinking.type !== 'enabled') throw new InvalidArgumentError('thinking.type must be "enabled", "adaptive" or "disabled"');
  const budget = thinking.budget_tokens;
  if (!Number.isInteger(budget) || budget < 1024 || budget >= maxTokens)
    throw new InvalidArgumentError(
      `thinking.budget_tokens must be an integer from 1024 to below maxTokens (${maxTokens}), got ${String(budget)}`,
    );
  return { type: 'enabled', budget_tokens: budget };
}

function cacheOptions(option: boolean | AnthropicPromptCache | undefined): AnthropicPromptCache | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return {};
  if (option.ttl !== undefined && option.ttl !== '5m' && option.ttl !== '1h')
    throw new InvalidArgumentError(`promptCache.ttl must be "5m" or "1h", got ${String(option.ttl)}`);
  return option;
}

function wiring(options: AnthropicModelOptions): Wiring {
  if (typeof options?.apiKey !== 'string') throw new InvalidArgumentError('AnthropicModel needs an apiKey');
  const auth = { header: 'x-api-key', option: 'apiKey', key: options.apiKey };
  const { settings, headers } = wire('AnthropicModel', options, auth, { 'anthropic-version': options.version ?? '2023-06-01' });
  // The provider name marks the thinking blocks kept in a transcript (anthropic-wire): fixed.
  const url = joinUrl(options.baseUrl ?? 'https://api.anthropic.com', 'v1/messages');
  return { provider: ANTHROPIC, url, headers, settings };
}
