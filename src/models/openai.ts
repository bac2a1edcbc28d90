import { mediaInWords, withWords } from './media';
import { ModelResponseError } from '../errors';
import { toOpenAITools } from '../toolkit/adapters';
import type { HttpModelOptions } from '../http/settings';
import type { SseEvent } from '../http/sse';
import type { JsonSchema } from '../results/json-schema';
import type {
  ChatMessage,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelTool,
  OutputFormat,
  ToolCall,
  ToolMessage,
  Usage,
} from './types';
import { argumentsText, asCount, asRecord, asString, fallbackCallId, headWithCap, parseChunk, snippet, ToolsCache } from './shared';
import { HttpChatModel, openAIWiring } from './core';

/** The most distinct tool calls one streamed response may carry. */
const MAX_STREAMED_CALLS = 1024;

/** Options of {@link OpenAIChatModel}. */
export interface OpenAIChatModelOptions extends HttpModelOptions {
  /**
   * The API root that holds `/chat/completions`: `https://api.openai.com/v1` (the default),
   * `https://openrouter.ai/api/v1`, `http://127.0.0.1:11434/v1`...
   */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer ...`; omit for local servers that need none. */
  apiKey?: string;
  model: string;
  /** Extra body fields for every request: `temperature`, `max_tokens`, `parallel_tool_calls`... */
  params?: Record<string, unknown>;
  /** Ask for token usage at the end of a stream (`stream_options.include_usage`). Default true; turn off for servers that reject it. */
  streamUsage?: boolean;
  /** The name errors use. Default `openai`. */
  provider?: string;
  /**
   * Whether the server honours `response_format: { type: "json_schema" }` (OpenAI does; so
   * do vLLM, Ollama and others). When false, a typed answer is asked for through a
   * final-answer tool instead. Default true.
   */
  structuredOutput?: boolean;
}

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * A chat-completions model: OpenAI itself and every server that speaks its dialect
 * (OpenRouter, vLLM, Ollama, LM Studio, llama.cpp...). node:http(s) (or your `fetch`), retries per
 * {@link HttpModelOptions}, non-streaming and streaming (server-sent events).
 */
export class OpenAIChatModel extends HttpChatModel {
  /** The model asked for, as traces name it. */
  readonly model: string;
  readonly structuredOutput: boolean;
  /** `{"model":...,<params>` without its closing brace: the constant prefix of every body. */
  private readonly bodyHead: string;
  private readonly headFields: Record<string, unknown>;
  /** `max_tokens` when the params use the older field (many compatible servers know only it), else `max_completion_tokens`. */
  private readonly limitField: string;
  private readonly streamTail: string;
  private readonly toolsJson = new ToolsCache((tools: readonly ModelTool[]) => JSON.stringify(toOpenAITools(tools)));

  constructor(options: OpenAIChatModelOptions) {
    super(openAIWiring('OpenAIChatModel', options, 'chat/completions'));
    this.model = options.model;
    this.structuredOutput = options.structuredOutput !== false;
    this.headFields = { ...options.params, model: options.model };
    this.bodyHead = JSON.stringify(this.headFields).slice(0, -1);
    this.limitField = options.params && 'max_tokens' in options.params ? 'max_tokens' : 'max_completion_tokens';
    this.streamTail = options.streamUsage === false ? ',"stream":true' : ',"stream":true,"stream_options":{"include_usage":true}';
  }

  protected async *readEvents(events: AsyncGenerator<SseEvent>): AsyncGenerator<ModelStreamEvent, ModelResponse> {
    let text = '';
    // Keyed by the server's index, which is only trusted to be a small integer once checked.
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    let stopReason: string | undefined;
    let finished = false;
    for await (const event of events) {
      if (event.data === '[DONE]') {
        finished = true;
        break;
      }
      const chunk = parseChunk(this.provider, event.data);
      this.throwIfError(chunk);
      const reported = asRecord(chunk.usage);
      if (reported) usage = openaiUsage(reported);
      const choice = Array.isArray(chunk.choices) ? asRecord(chunk.choices[0]) : undefined;
      if (!choice) continue;
      stopReason = asString(choice.finish_reason) ?? stopReason;
      const delta = asRecord(choice.delta);
      if (!delta) continue;
      const content = asString(delta.content);
      if (content) {
        text += content;
        yield { type: 'text', delta: content };
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const raw of delta.tool_calls) {
          const part = asRecord(raw);
          if (!part) continue;
          const index = part.index === undefined || part.index === null ? calls.size : part.index;
          if (!Number.isSafeInteger(index) || (index as number) < 0) {
            throw new ModelResponseError(
              this.provider,
              'a streamed tool call has an index that is not an integer >= 0',
              snippet(JSON.stringify(part.index) ?? ''),
            );
          }
          let call = calls.get(index as number);
          if (call === undefined) {
            if (calls.size >= MAX_STREAMED_CALLS)
              throw new ModelResponseError(this.provider, `a stream has more than ${MAX_STREAMED_CALLS} tool calls`);
            call = { id: '', name: '', arguments: '' };
            calls.set(index as number, call);
          }
          const id = asString(part.id);
          if (id) call.id = id;
          const fn = asRecord(part.function);
          const name = asString(fn?.name);
          if (name) call.name = call.name === '' ? name : call.name;
          call.arguments += argumentsText(fn?.arguments);
        }
      }
    }
    if (!finished && stopReason === undefined)
      throw new ModelResponseError(this.provider, 'the stream ended before the response was complete');
    const toolCalls: ToolCall[] = [];
    for (const index of [...calls.keys()].sort((a, b) => a - b)) {
      const call = calls.get(index) as { id: string; name: string; arguments: string };
      if (call.name === '') throw new ModelResponseError(this.provider, 'a streamed tool call has no function name');
      toolCalls.push({ id: call.id || fallbackCallId(), name: call.name, arguments: call.arguments });
    }
    return { text, toolCalls, usage, stopReason };
  }

  protected body(request: ModelRequest, stream: boolean): string {
    const head = headWithCap(this.bodyHead, this.headFields, [this.limitField], request.maxOutputTokens);
    let body = `${head},"messages":${JSON.stringify(toWire(request.system, request.messages))}`;
    if (request.tools.length > 0) body += `,"tools":${this.toolsJson.get(request.tools)}`;
    if (request.output) body += `,"response_format":${JSON.stringify(responseFormat(request.output))}`;
    if (stream) body += this.streamTail;
    return `${body}}`;
  }

  protected parse(json: Record<string, unknown>): ModelResponse {
    this.throwIfError(json);
    const choice = Array.isArray(json.choices) ? asRecord(json.choices[0]) : undefined;
    const message = asRecord(choice?.message);
    if (!choice || !message)
      throw new ModelResponseError(this.provider, 'the body has no choices[0].message', JSON.stringify(json).slice(0, 200));
    const toolCalls: ToolCall[] = [];
    if (Array.isArray(message.tool_calls)) {
      for (const raw of message.tool_calls) {
        const fn = asRecord(asRecord(raw)?.function);
        const name = asString(fn?.name);
        if (!fn || !name)
          throw new ModelResponseError(this.provider, 'a tool call has no function name', JSON.stringify(raw).slice(0, 200));
        toolCalls.push({ id: asString(asRecord(raw)?.id) || fallbackCallId(), name, arguments: argumentsText(fn.arguments) });
      }
    }
    const usage = asRecord(json.usage);
    return {
      text: contentText(message.content),
      toolCalls,
      usage: openaiUsage(usage),
      stopReason: asString(choice.finish_reason),
    };
  }

  /** OpenRouter and some gateways report failures as `{ error }` in a 200 body or mid-stream. */
  private throwIfError(json: Record<string, unknown>): void {
    if (json.error === undefined || json.error === null) return;
    const error = json.error;
    const message = asString(error) ?? asString(asRecord(error)?.message) ?? JSON.stringify(error);
    throw new ModelResponseError(this.provider, `the provider reported an error: ${message}`);
  }
}

/** Token counts of a chat-completions `usage`, with the cached and reasoning counts when the server reports them. */
function openaiUsage(usage: Record<string, unknown> | undefined): Usage {
  const result: Usage = { inputTokens: asCount(usage?.prompt_tokens), outputTokens: asCount(usage?.completion_tokens) };
  const cached = asRecord(usage?.prompt_tokens_details)?.cached_tokens;
  if (cached !== undefined && cached !== null) result.cachedInputTokens = asCount(cached);
  const reasoning = asRecord(usage?.completion_tokens_details)?.reasoning_tokens;
  if (reasoning !== undefined && reasoning !== null) result.reasoningTokens = asCount(reasoning);
  return result;
}

/**
 * `response_format` for a typed answer. `strict` only when the schema meets strict mode's
 * rules (every property required, no extra properties, at every level); otherwise the
 * server follows the schema as far as it can and the runner's validation has the last word.
 */
function responseFormat(output: OutputFormat): Record<string, unknown> {
  return { type: 'json_schema', json_schema: { name: output.name, schema: output.schema, strict: strictable(output.schema) } };
}

function strictable(schema: JsonSchema): boolean {
  if (schema.type === 'object') {
    const properties = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    if (schema.additionalProperties !== false) return false;
    if (!Object.keys(properties).every((key) => required.has(key))) return false;
    return Object.values(properties).every(strictable);
  }
  if (schema.type === 'array' && schema.items) return strictable(schema.items);
  return true;
}

/** `content` is a string, null with tool calls, or (on some servers) an array of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part === 'string' ? part : (asString(asRecord(part)?.text) ?? ''))).join('');
}

function toWire(system: string | undefined, messages: readonly ChatMessage[]): WireMessage[] {
  const wire: WireMessage[] = [];
  if (system) wire.push({ role: 'system', content: system });
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        wire.push({ role: 'user', content: message.content });
        break;
      case 'assistant':
        if (message.toolCalls && message.toolCalls.length > 0) {
          wire.push({
            role: 'assistant',
            content: message.content === '' ? null : message.content,
            tool_calls: message.toolCalls.map((call) => ({
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: call.arguments },
            })),
          });
        } else {
          wire.push({ role: 'assistant', content: message.content });
        }
        break;
      case 'tool':
        // Chat Completions takes only text in a tool message: media are described in words.
        wire.push({ role: 'tool', tool_call_id: message.callId, content: textWithMedia(message) });
        break;
    }
  }
  return wire;
}

/** A tool message's text, each media part it shows described after it. */
function textWithMedia(message: ToolMessage): string {
  if (!message.media) return message.content;
  return withWords(
    message.content,
    message.media.map((part) => mediaInWords(part, 'this API takes only text in a tool result')),
  );
}
