import { functionCallOutput } from './responses-media';
import { ModelResponseError } from '../errors';
import type { JsonSchema } from '../results/json-schema';
import type { HttpModelOptions } from '../http/settings';
import type { SseEvent } from '../http/sse';
import type { ChatMessage, ModelRequest, ModelResponse, ModelStreamEvent, ModelTool, ProviderItem, ToolCall, Usage } from './types';
import { argumentsText, asCount, asRecord, asString, fallbackCallId, headWithCap, parseChunk, snippet, ToolsCache } from './shared';
import { HttpChatModel, openAIWiring } from './core';

/** The most output items one streamed response may carry. */
const MAX_STREAMED_ITEMS = 1024;

/** Options of {@link OpenAIResponsesModel}. */
export interface OpenAIResponsesModelOptions extends HttpModelOptions {
  /** The API root that holds `/responses`. Default `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer ...`; omit for local servers that need none. */
  apiKey?: string;
  model: string;
  /**
   * Whether OpenAI keeps the responses (`store`). Default `false`: every request carries the
   * whole transcript, reasoning included, so a run resumes anywhere without server state.
   */
  store?: boolean;
  /**
   * Ask for reasoning items' `encrypted_content` (`include: ["reasoning.encrypted_content"]`)
   * so reasoning carries over between turns without `store`. Default: on when `store` is
   * false. Turn it off for a model without reasoning that rejects it.
   */
  encryptedReasoning?: boolean;
  /** Sent as each function tool's `strict`. Default `false` (the API's default is `true`, which needs every property required). */
  strictTools?: boolean;
  /** Extra body fields for every request: `reasoning: { effort, summary }`, `max_output_tokens`, `parallel_tool_calls`... */
  params?: Record<string, unknown>;
  /** The name errors and provider items use. Default `openai`. */
  provider?: string;
  /**
   * Whether a typed final answer is asked for natively, as `text.format: { type: "json_schema" }`
   * (when the request carries an `output` schema). Default true; false leaves it to the runner's
   * final-answer tool.
   */
  structuredOutput?: boolean;
}

/** A Responses API function tool. */
interface ResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  strict: boolean;
}

type InputItem = Record<string, unknown>;

/**
 * An OpenAI Responses API model (`POST /responses`): function tools, parallel calls fed
 * back as `function_call_output` items, and reasoning kept between turns. The model's
 * output items are kept as {@link ProviderItem}s whenever the turn holds more than text and
 * function calls (a `reasoning` item, with its encrypted content), and sent back verbatim and
 * in the order they came on the next request, as the API requires. node:http(s) (or your `fetch`), retries
 * per {@link HttpModelOptions}, non-streaming and streaming (server-sent events).
 */
export class OpenAIResponsesModel extends HttpChatModel {
  /** The model asked for, as traces name it. */
  readonly model: string;
  readonly structuredOutput: boolean;
  /** `{<params>,"model":...,"store":...` without its closing brace: the constant prefix of every body. */
  private readonly bodyHead: string;
  private readonly headFields: Record<string, unknown>;
  private readonly toolsJson: ToolsCache<string>;
  private readonly textParams: Record<string, unknown> | undefined;

  constructor(options: OpenAIResponsesModelOptions) {
    super(openAIWiring('OpenAIResponsesModel', options, 'responses'));
    this.model = options.model;
    this.structuredOutput = options.structuredOutput !== false;
    const store = options.store ?? false;
    const params: Record<string, unknown> = { ...options.params };
    if (options.encryptedReasoning ?? !store) {
      const asked = Array.isArray(params.include) ? (params.include as unknown[]) : [];
      params.include = asked.includes('reasoning.encrypted_content') ? asked : [...asked, 'reasoning.encrypted_content'];
    }
    // `text` (verbosity, a fixed format) is added per request, where a typed answer's format joins it.
    const { text, ...rest } = params;
    this.textParams = asRecord(text);
    this.headFields = { ...rest, model: options.model, store };
    this.bodyHead = JSON.stringify(this.headFields).slice(0, -1);
    const strict = options.strictTools ?? false;
    this.toolsJson = new ToolsCache((tools) => JSON.stringify(tools.map((tool) => toResponsesTool(tool, strict))));
  }

  protected async *readEvents(events: AsyncGenerator<SseEvent>): AsyncGenerator<ModelStreamEvent, ModelResponse> {
    /** Output items by `output_index`: as added, with argument deltas, replaced by the item once done. */
    const items = new Map<number, { item: Record<string, unknown>; args: string; done: boolean }>();
    let final: Record<string, unknown> | undefined;
    for await (const event of events) {
      const data = parseChunk(this.provider, event.data);
      switch (data.type) {
        case 'response.output_text.delta':
        case 'response.refusal.delta': {
          const delta = asString(data.delta);
          if (delta) yield { type: 'text', delta };
          break;
        }
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta': {
          const delta = asString(data.delta);
          if (delta) yield { type: 'reasoning', delta };
          break;
        }
        case 'response.output_item.added':
        case 'response.output_item.done': {
          const item = asRecord(data.item);
          if (!item) throw new ModelResponseError(this.provider, `a ${String(data.type)} event has no item`);
          const index = this.outputIndex(data.output_index, items.size);
          const known = items.get(index);
          if (known === undefined && items.size >= MAX_STREAMED_ITEMS)
            throw new ModelResponseError(this.provider, `a stream has more than ${MAX_STREAMED_ITEMS} output items`);
          const done = data.type === 'response.output_item.done';
          items.set(index, { item, args: known?.args ?? '', done });
          break;
        }
        case 'response.function_call_arguments.delta': {
          const entry = items.get(this.outputIndex(data.output_index, -1));
          if (entry && !entry.done) entry.args += asString(data.delta) ?? '';
          break;
        }
        case 'response.completed':
        case 'response.incomplete':
          final = asRecord(data.response) ?? {};
          break;
        case 'response.failed':
          throw new ModelResponseError(this.provider, `the provider reported an error: ${errorText(asRecord(data.response)?.error)}`);
        case 'error':
          throw new ModelResponseError(this.provider, `the provider reported an error: ${errorText(data.error ?? data)}`);
        default:
          break; // created, in_progress, content_part, *.done and future event types carry nothing the loop needs
      }
      if (final) break;
    }
    if (!final) throw new ModelResponseError(this.provider, 'the stream ended before response.completed');
    // The completed response repeats every output item; a server that leaves them out is read from the stream's own items.
    if (!Array.isArray(final.output) || final.output.length === 0) {
      final = {
        ...final,
        output: [...items.keys()]
          .sort((a, b) => a - b)
          .map((index) => {
            const { item, args, done } = items.get(index) as { item: Record<string, unknown>; args: string; done: boolean };
            return !done && item.type === 'function_call' ? { ...item, arguments: args } : item;
          }),
      };
    }
    return this.parseResponse(final, false);
  }

  /** An `output_index` the stream may be trusted with: a small integer >= 0 (`fallback` when absent). */
  private outputIndex(value: unknown, fallback: number): number {
    if (value === undefined || value === null) return fallback;
    if (!Number.isSafeInteger(value) || (value as number) < 0)
      throw new ModelResponseError(
        this.provider,
        'a stream event has an output_index that is not an integer >= 0',
        snippet(JSON.stringify(value)),
      );
    return value as number;
  }

  protected body(request: ModelRequest, stream: boolean): string {
    let body = headWithCap(this.bodyHead, this.headFields, ['max_output_tokens'], request.maxOutputTokens);
    if (request.system) body += `,"instructions":${JSON.stringify(request.system)}`;
    body += `,"input":${JSON.stringify(toInput(this.provider, request.messages))}`;
    if (request.tools.length > 0) body += `,"tools":${this.toolsJson.get(request.tools)}`;
    const output = request.output;
    // Not strict: strict mode needs every property required; the runner validates the answer either way.
    if (output && this.structuredOutput) {
      const format = { type: 'json_schema', name: output.name, schema: output.schema, strict: false };
      body += `,"text":${JSON.stringify({ ...this.textParams, format })}`;
    } else if (this.textParams) body += `,"text":${JSON.stringify(this.textParams)}`;
    if (stream) body += ',"stream":true';
    return `${body}}`;
  }

  protected parse(json: Record<string, unknown>): ModelResponse {
    return this.parseResponse(json);
  }

  /** Reads a response object (`object: "response"`): its output items, usage and status. */
  private parseResponse(json: Record<string, unknown>, checkError = true): ModelResponse {
    if (checkError) this.throwIfError(json);
    if (!Array.isArray(json.output))
      throw new ModelResponseError(this.provider, 'the body has no output array', snippet(JSON.stringify(json)));
    let text = '';
    const toolCalls: ToolCall[] = [];
    const output: Record<string, unknown>[] = [];
    let keep = false;
    for (const raw of json.output) {
      const item = asRecord(raw);
      if (!item) throw new ModelResponseError(this.provider, 'an output item is not an object', snippet(JSON.stringify(raw) ?? ''));
      output.push(item);
      if (item.type === 'message') text += messageText(item.content);
      else if (item.type === 'function_call') toolCalls.push(this.toolCall(item));
      else keep = true; // reasoning (or a hosted tool's item): the next request needs it back, in place
    }
    const usage = asRecord(json.usage);
    const response: ModelResponse = {
      text,
      toolCalls,
      usage: usageOf(usage),
      stopReason: asString(asRecord(json.incomplete_details)?.reason) ?? asString(json.status),
    };
    if (keep) response.items = output.map((data) => ({ provider: this.provider, type: asString(data.type) ?? 'unknown', data }));
    return response;
  }

  private toolCall(item: Record<string, unknown>): ToolCall {
    const name = asString(item.name);
    if (!name) throw new ModelResponseError(this.provider, 'a function_call item has no name', snippet(JSON.stringify(item)));
    return { id: asString(item.call_id) || fallbackCallId(), name, arguments: argumentsText(item.arguments) };
  }

  /** `{ error: {...} }` in a 200 body, or a response whose status says it failed. */
  private throwIfError(json: Record<string, unknown>): void {
    if ((json.error === undefined || json.error === null) && json.status !== 'failed') return;
    throw new ModelResponseError(this.provider, `the provider reported an error: ${errorText(json.error)}`);
  }
}

function toResponsesTool(tool: ModelTool, strict: boolean): ResponsesTool {
  return { type: 'function', name: tool.name, description: tool.description, parameters: tool.inputSchema, strict };
}

function usageOf(usage: Record<string, unknown> | undefined): Usage {
  const result: Usage = { inputTokens: asCount(usage?.input_tokens), outputTokens: asCount(usage?.output_tokens) };
  const cached = asRecord(usage?.input_tokens_details)?.cached_tokens;
  const reasoning = asRecord(usage?.output_tokens_details)?.reasoning_tokens;
  if (cached !== undefined && cached !== null) result.cachedInputTokens = asCount(cached);
  if (reasoning !== undefined && reasoning !== null) result.reasoningTokens = asCount(reasoning);
  return result;
}

/** The text of a `message` output item: its `output_text` parts, and a refusal's words. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const raw of content) {
    const part = asRecord(raw);
    if (part?.type === 'output_text') text += asString(part.text) ?? '';
    else if (part?.type === 'refusal') text += asString(part.refusal) ?? '';
  }
  return text;
}

function errorText(error: unknown): string {
  const record = asRecord(error);
  if (!record) return asString(error) ?? 'no message';
  const message = asString(record.message) ?? JSON.stringify(record);
  const code = asString(record.code) ?? asString(record.type);
  return code ? `${code}: ${message}` : message;
}

/**
 * The transcript as Responses API input items. An assistant turn that kept this provider's
 * output items is sent as those items, verbatim and in order (reasoning before the call it
 * led to); any other turn is rebuilt from its text and tool calls. Each tool result is one
 * `function_call_output` item, in call order.
 */
function toInput(provider: string, messages: readonly ChatMessage[]): InputItem[] {
  const input: InputItem[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'user':
        input.push({ type: 'message', role: 'user', content: message.content });
        break;
      case 'assistant': {
        const kept = (message.items ?? []).filter((item: ProviderItem) => item.provider === provider);
        const sent = new Set<string>();
        let hasText = false;
        for (const item of kept) {
          input.push(item.data);
          if (item.data.type === 'function_call' && typeof item.data.call_id === 'string') sent.add(item.data.call_id);
          if (item.data.type === 'message') hasText = true;
        }
        if (!hasText && message.content !== '') input.push({ type: 'message', role: 'assistant', content: message.content });
        for (const call of message.toolCalls ?? []) {
          if (!sent.has(call.id)) input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments });
        }
        break;
      }
      case 'tool':
        input.push({ type: 'function_call_output', call_id: message.callId, output: functionCallOutput(message) });
        break;
    }
  }
  return input;
}
