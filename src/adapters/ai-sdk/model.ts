// `ai` is ESM only: the attribute lets a CommonJS app (node16/nodenext) read these types.
import type { LanguageModel } from 'ai' with { 'resolution-mode': 'import' };
import { InvalidArgumentError, ModelError, ModelHttpError, ModelResponseError, ToolnexusError } from '../../errors';
import { messageOf } from '../../errors/message';
import type {
  AssistantMessage,
  ChatModel,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
  ModelTool,
  ProviderItem,
  ToolCall,
  ToolMessage,
  Usage,
} from '../../models/types';
import { aiSdkMediaPart } from './media';
import { ai } from './peer';

/** The AI SDK language model specification this adapter drives (`LanguageModelV4`: every `@ai-sdk/*` provider of ai 7). */
export type AiSdkLanguageModel = Extract<LanguageModel, { specificationVersion: 'v4' }>;
type CallOptions = Parameters<AiSdkLanguageModel['doGenerate']>[0];
type Prompt = CallOptions['prompt'];
type PromptMessage = Prompt[number];
type AssistantPart = Extract<PromptMessage, { role: 'assistant' }>['content'][number];
type ToolPart = Extract<PromptMessage, { role: 'tool' }>['content'][number];
type GenerateResult = Awaited<ReturnType<AiSdkLanguageModel['doGenerate']>>;
type Content = GenerateResult['content'][number];
type SdkUsage = GenerateResult['usage'];
type ProviderMetadata = NonNullable<Extract<Content, { type: 'reasoning' }>['providerMetadata']>;

/** Options of an {@link AiSdkModel}. */
export interface AiSdkModelOptions {
  /**
   * Names this model in errors, metrics and its provider items. Default `ai-sdk:<the model's
   * provider>` (`ai-sdk:amazon-bedrock.converse`...): the same name must continue a run whose
   * transcript carries its items.
   */
  provider?: string;
  /** Passed on every call: the provider's own options (`{ bedrock: { reasoningConfig } }`...). */
  providerOptions?: CallOptions['providerOptions'];
  maxOutputTokens?: number;
  temperature?: number;
  /** Extra HTTP headers of every call. */
  headers?: Record<string, string>;
}

/** The item type that keeps an assistant turn's AI SDK content parts, verbatim. */
export const AI_SDK_CONTENT_ITEM = 'ai-sdk-content';

/**
 * Any AI SDK language model (`@ai-sdk/amazon-bedrock`, `@ai-sdk/azure`, `@ai-sdk/google-vertex`,
 * `@ai-sdk/mistral`, ...) as a {@link ChatModel} the `AgentRunner` drives (docs/interop.md).
 * Text, tool calls, streaming and usage map one to one; a turn with reasoning or provider
 * metadata (a Bedrock or Anthropic thinking signature...) keeps its content parts as one
 * provider item, so a checkpoint carries them to the process that continues the run and the
 * provider gets them back verbatim.
 *
 * @example
 * ```ts
 * const model = new AiSdkModel(createAmazonBedrock({ region: 'eu-west-1' })('anthropic.claude-sonnet-4-5'))
 * const runner = new AgentRunner({ model, toolkit, store })
 * ```
 */
export class AiSdkModel implements ChatModel {
  readonly provider: string;
  readonly structuredOutput = false;
  private readonly options: AiSdkModelOptions;
  private toolsCache?: { from: readonly ModelTool[]; to: NonNullable<CallOptions['tools']> };

  /** The model asked for (the language model's id), as traces name it. */
  readonly model: string;
  private readonly languageModel: AiSdkLanguageModel;

  constructor(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}) {
    ai(); // the entry's peer: without it, the error names the install command
    if (typeof model !== 'object' || model === null || model.specificationVersion !== 'v4' || typeof model.doGenerate !== 'function')
      throw new InvalidArgumentError('AiSdkModel needs an AI SDK language model of specification v4 (an @ai-sdk/* provider of ai 7)');
    this.languageModel = model;
    this.model = typeof (model as { modelId?: unknown }).modelId === 'string' ? (model as { modelId: string }).modelId : model.provider;
    this.provider = options.provider ?? `ai-sdk:${model.provider}`;
    this.options = options;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    let result: GenerateResult;
    try {
      result = await this.languageModel.doGenerate(this.callOptions(request));
    } catch (error) {
      throw this.modelError(error);
    }
    const text: string[] = [];
    const toolCalls: ToolCall[] = [];
    const parts: AssistantPart[] = [];
    let keep = false;
    for (const part of result.content) {
      if (part.type === 'text') {
        text.push(part.text);
        parts.push(withOptions({ type: 'text', text: part.text }, part.providerMetadata));
      } else if (part.type === 'reasoning') {
        parts.push(withOptions({ type: 'reasoning', text: part.text }, part.providerMetadata));
        keep = true;
      } else if (part.type === 'tool-call' && !part.providerExecuted) {
        toolCalls.push({ id: part.toolCallId, name: part.toolName, arguments: part.input });
        parts.push(
          withOptions(
            { type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: inputOf(part.input) },
            part.providerMetadata,
          ),
        );
      }
      if ('providerMetadata' in part && part.providerMetadata !== undefined) keep = true;
    }
    return this.response(
      text.join(''),
      toolCalls,
      usageOf(result.usage),
      result.finishReason.raw ?? result.finishReason.unified,
      keep ? parts : undefined,
    );
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    let reader: ReadableStreamDefaultReader<unknown>;
    try {
      const { stream } = await this.languageModel.doStream(this.callOptions(request));
      reader = (stream as ReadableStream<unknown>).getReader();
    } catch (error) {
      throw this.modelError(error);
    }
    const turn = new StreamedTurn();
    try {
      for (;;) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          throw this.modelError(error);
        }
        if (next.done) break;
        const event = turn.add(next.value as StreamPart, (error) => this.modelError(error));
        if (event) yield event;
      }
    } finally {
      reader.releaseLock();
    }
    if (!turn.finished) throw new ModelResponseError(this.provider, 'the stream ended without a finish part');
    yield {
      type: 'response',
      response: this.response(turn.text, turn.toolCalls, turn.usage, turn.stopReason, turn.keep ? turn.parts() : undefined),
    };
  }

  private response(
    text: string,
    toolCalls: ToolCall[],
    usage: Usage,
    stopReason: string,
    parts: AssistantPart[] | undefined,
  ): ModelResponse {
    const response: ModelResponse = { text, toolCalls, usage, stopReason };
    if (parts) response.items = [{ provider: this.provider, type: AI_SDK_CONTENT_ITEM, data: { parts: parts } }];
    return response;
  }

  private callOptions(request: ModelRequest): CallOptions {
    const options: CallOptions = { prompt: this.prompt(request), tools: this.tools(request.tools) };
    if (request.tools.length > 0) options.toolChoice = { type: 'auto' };
    if (request.signal) options.abortSignal = request.signal;
    if (this.options.providerOptions) options.providerOptions = this.options.providerOptions;
    if (this.options.maxOutputTokens !== undefined) options.maxOutputTokens = this.options.maxOutputTokens;
    if (this.options.temperature !== undefined) options.temperature = this.options.temperature;
    if (this.options.headers) options.headers = this.options.headers;
    return options;
  }

  private tools(tools: readonly ModelTool[]): NonNullable<CallOptions['tools']> {
    if (this.toolsCache?.from === tools) return this.toolsCache.to;
    const to = tools.map((t) => ({
      type: 'function' as const,
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as never,
    }));
    this.toolsCache = { from: tools, to };
    return to;
  }

  /** The provider-neutral transcript in the AI SDK's prompt shape; consecutive tool results make one tool message. */
  private prompt(request: ModelRequest): Prompt {
    const prompt: Prompt = [];
    if (request.system) prompt.push({ role: 'system', content: request.system });
    let results: ToolPart[] | undefined;
    for (const message of request.messages) {
      if (message.role === 'tool') {
        if (!results) prompt.push({ role: 'tool', content: (results = []) });
        results.push(toolResultOf(message));
        continue;
      }
      results = undefined;
      if (message.role === 'user') prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
      else prompt.push({ role: 'assistant', content: this.assistantParts(message) });
    }
    return prompt;
  }

  /** This provider's own parts when the turn kept them, else parts made from its text and calls. */
  private assistantParts(message: AssistantMessage): AssistantPart[] {
    const kept = message.items?.find((i: ProviderItem) => i.provider === this.provider && i.type === AI_SDK_CONTENT_ITEM);
    if (kept && Array.isArray(kept.data.parts)) return kept.data.parts as AssistantPart[];
    const parts: AssistantPart[] = [];
    if (message.content !== '') parts.push({ type: 'text', text: message.content });
    for (const call of message.toolCalls ?? [])
      parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: inputOf(call.arguments) });
    return parts;
  }

  private modelError(error: unknown): ModelError {
    if (error instanceof ModelError) return error;
    if (error instanceof ToolnexusError) return new ModelError(this.provider, error.message, { cause: error });
    const call = error as { statusCode?: unknown; responseBody?: unknown; name?: unknown };
    if (typeof call?.statusCode === 'number') return new ModelHttpError(this.provider, call.statusCode, providerMessage(error), 1);
    return new ModelError(this.provider, `${this.provider} call failed: ${messageOf(error)}`, { cause: error });
  }
}

/** The provider's own words of an APICallError, cut short: its message, which the AI SDK takes from the error body. */
function providerMessage(error: unknown): string {
  const text = messageOf(error);
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function toolResultOf(message: ToolMessage): ToolPart {
  return {
    type: 'tool-result',
    toolCallId: message.callId,
    toolName: message.name,
    // The AI SDK's content output has no error flag: an error result is its text.
    output:
      message.media && !message.isError
        ? { type: 'content', value: [{ type: 'text', text: message.content }, ...message.media.map(aiSdkMediaPart)] }
        : message.isError
          ? { type: 'error-text', value: message.content }
          : { type: 'text', value: message.content },
  };
}

/** A tool call's input as the prompt carries it: the parsed JSON object, `{}` when the model's text was not one. */
function inputOf(text: string): unknown {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** A part with the provider metadata it came with, as the options the provider reads back. */
function withOptions<T extends AssistantPart>(part: T, metadata: ProviderMetadata | undefined): T {
  return metadata === undefined ? part : { ...part, providerOptions: metadata };
}

function usageOf(usage: SdkUsage): Usage {
  const out: Usage = { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 };
  if (usage.inputTokens.cacheRead !== undefined) out.cachedInputTokens = usage.inputTokens.cacheRead;
  if (usage.inputTokens.cacheWrite !== undefined) out.cacheWriteInputTokens = usage.inputTokens.cacheWrite;
  if (usage.outputTokens.reasoning !== undefined) out.reasoningTokens = usage.outputTokens.reasoning;
  return out;
}

type StreamPart = { type: string; id?: string; delta?: string; providerMetadata?: ProviderMetadata } & Record<string, unknown>;

/** One streamed turn as its parts arrive: text and reasoning in order, each with the metadata it gathered. */
class StreamedTurn {
  text = '';
  toolCalls: ToolCall[] = [];
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  stopReason = '';
  finished = false;
  keep = false;
  private readonly blocks: Array<{ part: AssistantPart; metadata?: ProviderMetadata }> = [];
  private readonly open = new Map<string, { part: { type: 'text' | 'reasoning'; text: string }; metadata?: ProviderMetadata }>();

  add(part: StreamPart, fail: (error: unknown) => Error): ModelStreamEvent | undefined {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const block = {
          part: { type: part.type === 'text-start' ? ('text' as const) : ('reasoning' as const), text: '' },
          metadata: part.providerMetadata,
        };
        this.open.set(`${block.part.type}:${String(part.id)}`, block);
        this.blocks.push(block);
        if (block.part.type === 'reasoning') this.keep = true;
        this.note(block, part.providerMetadata);
        return undefined;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
        const block = this.open.get(`${kind}:${String(part.id)}`);
        const delta = typeof part.delta === 'string' ? part.delta : '';
        if (block) {
          block.part.text += delta;
          this.note(block, part.providerMetadata);
        }
        if (kind === 'text') this.text += delta;
        return delta === '' ? undefined : { type: kind, delta };
      }
      case 'text-end':
      case 'reasoning-end': {
        const block = this.open.get(`${part.type === 'text-end' ? 'text' : 'reasoning'}:${String(part.id)}`);
        if (block) this.note(block, part.providerMetadata);
        return undefined;
      }
      case 'tool-call': {
        if (part.providerExecuted === true) return undefined;
        const call = {
          id: String(part.toolCallId),
          name: String(part.toolName),
          arguments: typeof part.input === 'string' ? part.input : '{}',
        };
        this.toolCalls.push(call);
        const block = {
          part: { type: 'tool-call' as const, toolCallId: call.id, toolName: call.name, input: inputOf(call.arguments) },
          metadata: part.providerMetadata,
        };
        this.blocks.push(block);
        if (part.providerMetadata) this.keep = true;
        return undefined;
      }
      case 'finish': {
        this.finished = true;
        this.usage = usageOf(part.usage as SdkUsage);
        const reason = part.finishReason as { raw?: string; unified: string };
        this.stopReason = reason.raw ?? reason.unified;
        return undefined;
      }
      case 'error':
        throw fail(part.error);
      default:
        return undefined;
    }
  }

  parts(): AssistantPart[] {
    return this.blocks.map(({ part, metadata }) => withOptions(part, metadata));
  }

  /** Merges metadata that arrives on a block's start, deltas or end (a signature on its last delta...). */
  private note(block: { metadata?: ProviderMetadata }, metadata: ProviderMetadata | undefined): void {
    if (!metadata) return;
    this.keep = true;
    const merged: Record<string, Record<string, unknown>> = { ...(block.metadata ?? {}) };
    for (const [provider, values] of Object.entries(metadata)) merged[provider] = { ...(merged[provider] ?? {}), ...values };
    block.metadata = merged as ProviderMetadata;
  }
}
