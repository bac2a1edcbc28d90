import { InvalidArgumentError, ModelResponseError } from '../../errors';
import { toAnthropicTools } from '../../toolkit/adapters';
import { checkHeader, httpSettings, type HttpModelOptions } from '../http/settings';
import type { ChatMessage, ChatModel, ModelRequest, ModelResponse, ModelStreamEvent, ModelTool, ToolCall } from '../types';
import {
  argumentsText,
  asCount,
  asRecord,
  asString,
  joinUrl,
  ModelEndpoint,
  parseChunk,
  streamFailure,
  wholeAsStream,
  ToolsCache,
} from './shared';

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
}

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true };

type WireMessage = { role: 'user'; content: string | Block[] } | { role: 'assistant'; content: Block[] };

/**
 * An Anthropic messages-API model: `tool_use` blocks in, `tool_result` blocks (one user
 * message holding every result of a turn, in call order) back. Plain `fetch`, retries per
 * {@link HttpModelOptions}, non-streaming and streaming (server-sent events).
 */
export class AnthropicModel implements ChatModel {
  readonly provider = 'anthropic';
  private readonly endpoint: ModelEndpoint;
  private readonly bodyHead: string;
  private readonly toolsJson = new ToolsCache((tools: readonly ModelTool[]) => JSON.stringify(toAnthropicTools(tools)));

  constructor(options: AnthropicModelOptions) {
    if (typeof options?.apiKey !== 'string') throw new InvalidArgumentError('AnthropicModel needs an apiKey');
    if (typeof options.model !== 'string' || options.model === '') throw new InvalidArgumentError('AnthropicModel needs a model');
    // A key that cannot be a header value is refused here, clearly and without quoting it.
    checkHeader('AnthropicModel', 'x-api-key', options.apiKey, 'apiKey');
    const settings = httpSettings(options);
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': options.apiKey,
      'anthropic-version': options.version ?? '2023-06-01',
      ...settings.headers,
    };
    this.endpoint = new ModelEndpoint(
      this.provider,
      joinUrl(options.baseUrl ?? 'https://api.anthropic.com', 'v1/messages'),
      headers,
      settings,
    );
    this.bodyHead = JSON.stringify({ max_tokens: options.maxTokens ?? 4096, ...options.params, model: options.model }).slice(0, -1);
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    try {
      return this.parseMessage(await this.endpoint.json(this.body(request, false), request.signal));
    } catch (error) {
      throw this.endpoint.scrub(error);
    }
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    try {
      yield* this.streamEvents(request);
    } catch (error) {
      throw this.endpoint.scrub(error);
    }
  }

  private async *streamEvents(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const opened = await this.endpoint.stream(this.body(request, true), request.signal);
    if ('whole' in opened) {
      yield* wholeAsStream(this.parseMessage(opened.whole));
      return;
    }
    const { events, attempt } = opened;
    let text = '';
    const blocks = new Map<number, { id: string; name: string; json: string }>();
    let inputTokens = 0;
    let outputTokens = 0;
    let stopReason: string | undefined;
    let stopped = false;
    try {
      for await (const event of events) {
        const data = parseChunk(this.provider, event.data);
        this.throwIfError(data);
        switch (data.type) {
          case 'message_start': {
            const usage = asRecord(asRecord(data.message)?.usage);
            inputTokens = asCount(usage?.input_tokens);
            outputTokens = asCount(usage?.output_tokens);
            break;
          }
          case 'content_block_start': {
            const block = asRecord(data.content_block);
            const index = typeof data.index === 'number' ? data.index : blocks.size;
            if (block?.type === 'tool_use') {
              const input = asRecord(block.input);
              const preset = input && Object.keys(input).length > 0 ? JSON.stringify(input) : '';
              blocks.set(index, { id: asString(block.id) ?? '', name: asString(block.name) ?? '', json: preset });
            } else if (block?.type === 'text' && asString(block.text)) {
              text += block.text as string;
              yield { type: 'text', delta: block.text as string };
            }
            break;
          }
          case 'content_block_delta': {
            const delta = asRecord(data.delta);
            if (delta?.type === 'text_delta') {
              const piece = asString(delta.text) ?? '';
              if (piece) {
                text += piece;
                yield { type: 'text', delta: piece };
              }
            } else if (delta?.type === 'input_json_delta') {
              const block = typeof data.index === 'number' ? blocks.get(data.index) : undefined;
              if (block) block.json += asString(delta.partial_json) ?? '';
            }
            break;
          }
          case 'message_delta': {
            stopReason = asString(asRecord(data.delta)?.stop_reason) ?? stopReason;
            const usage = asRecord(data.usage);
            if (usage?.output_tokens !== undefined) outputTokens = asCount(usage.output_tokens);
            if (usage?.input_tokens !== undefined) inputTokens = asCount(usage.input_tokens);
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
    } catch (error) {
      throw streamFailure(this.provider, attempt, error);
    } finally {
      attempt.dispose();
    }
    if (!stopped) throw new ModelResponseError(this.provider, 'the stream ended before message_stop');
    const toolCalls: ToolCall[] = [];
    for (const index of [...blocks.keys()].sort((a, b) => a - b)) {
      const block = blocks.get(index) as { id: string; name: string; json: string };
      if (!block.id || !block.name) throw new ModelResponseError(this.provider, 'a streamed tool_use block has no id or name');
      toolCalls.push({ id: block.id, name: block.name, arguments: block.json === '' ? '{}' : block.json });
    }
    yield { type: 'response', response: { text, toolCalls, usage: { inputTokens, outputTokens }, stopReason } };
  }

  private parseMessage(json: Record<string, unknown>): ModelResponse {
    this.throwIfError(json);
    if (!Array.isArray(json.content))
      throw new ModelResponseError(this.provider, 'the body has no content array', JSON.stringify(json).slice(0, 200));
    let text = '';
    const toolCalls: ToolCall[] = [];
    for (const raw of json.content) {
      const block = asRecord(raw);
      if (block?.type === 'text') text += asString(block.text) ?? '';
      else if (block?.type === 'tool_use') toolCalls.push(this.toolCall(block));
    }
    const usage = asRecord(json.usage);
    return {
      text,
      toolCalls,
      usage: { inputTokens: asCount(usage?.input_tokens), outputTokens: asCount(usage?.output_tokens) },
      stopReason: asString(json.stop_reason),
    };
  }

  private toolCall(block: Record<string, unknown>): ToolCall {
    const id = asString(block.id);
    const name = asString(block.name);
    if (!id || !name)
      throw new ModelResponseError(this.provider, 'a tool_use block has no id or name', JSON.stringify(block).slice(0, 200));
    return { id, name, arguments: block.input === undefined ? '{}' : argumentsText(block.input) };
  }

  private body(request: ModelRequest, stream: boolean): string {
    let body = this.bodyHead;
    if (request.system) body += `,"system":${JSON.stringify(request.system)}`;
    body += `,"messages":${JSON.stringify(toWire(request.messages))}`;
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

/** Every run of tool results becomes ONE user message of `tool_result` blocks, in call order. */
function toWire(messages: readonly ChatMessage[]): WireMessage[] {
  const wire: WireMessage[] = [];
  let results: Block[] | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!results) {
        results = [];
        wire.push({ role: 'user', content: results });
      }
      results.push(
        message.isError
          ? { type: 'tool_result', tool_use_id: message.callId, content: message.content, is_error: true }
          : { type: 'tool_result', tool_use_id: message.callId, content: message.content },
      );
      continue;
    }
    results = undefined;
    if (message.role === 'user') {
      wire.push({ role: 'user', content: message.content });
    } else {
      const content: Block[] = [];
      if (message.content !== '') content.push({ type: 'text', text: message.content });
      for (const call of message.toolCalls ?? [])
        content.push({ type: 'tool_use', id: call.id, name: call.name, input: inputOf(call.arguments) });
      wire.push({ role: 'assistant', content });
    }
  }
  return wire;
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
