import { functionResponseOf, placementOf, type MediaPlacement } from './gemini-media';
import { randomUUID } from 'node:crypto';
import { InvalidArgumentError, ModelResponseError } from '../errors';
import { toGeminiTools } from '../toolkit/adapters';
import type { HttpModelOptions } from '../http/settings';
import type { SseEvent } from '../http/sse';
import type { ChatMessage, ModelRequest, ModelResponse, ModelStreamEvent, ModelTool, ToolCall, Usage } from './types';
import {
  asCount,
  asRecord,
  asString,
  groupedTranscript,
  headWithCap,
  joinUrl,
  parseChunk,
  snippet,
  ToolsCache,
  type GroupedWriter,
} from './shared';
import { HttpChatModel, wire, type Wiring } from './core';

/** The most parts one streamed response may carry. */
const MAX_STREAMED_PARTS = 4096;

/** Marks the tool-call ids this model made up for calls the API sent without one; they are never sent back. */
const MADE_UP_ID = 'gemini_call_';

/** Options of {@link GeminiModel}. */
export interface GeminiModelOptions extends HttpModelOptions {
  /** The API root. Default `https://generativelanguage.googleapis.com`. */
  baseUrl?: string;
  /** The API version in the path. Default `v1beta`. */
  apiVersion?: string;
  /** Sent as the `x-goog-api-key` header, never in the URL. */
  apiKey: string;
  /** `gemini-2.5-flash`, `models/gemini-3-pro-preview`, `tunedModels/...`. */
  model: string;
  /** Extra body fields for every request: `generationConfig` (with `thinkingConfig`), `safetySettings`, `toolConfig`... */
  params?: Record<string, unknown>;
  /** The name errors and provider items use. Default `gemini`. */
  provider?: string;
  /**
   * Where a tool result's images and documents go: `inside` its `functionResponse` (`parts`,
   * Gemini 3's multimodal function responses) or `beside` it in the same content (what Gemini
   * 1 and 2 take). Default: `beside` for a `gemini-1…`/`gemini-2…` model, else `inside`.
   */
  mediaPlacement?: 'inside' | 'beside';
}

type Part = Record<string, unknown>;
type Content = { role: 'user' | 'model'; parts: Part[] };

/**
 * A Gemini API model (`generateContent`, `streamGenerateContent?alt=sse`): tools as one
 * `functionDeclarations` entry, `functionCall` parts in, `functionResponse` parts (one user
 * content holding every result of a turn, in call order) back. Calls the API sent without an
 * id get one made up here, kept in the transcript and so stable across halt and resume.
 * When a turn carries thought signatures (Gemini 2.5 and 3 with thinking), its parts are
 * kept as {@link ProviderItem}s and sent back verbatim, as the API requires. The key goes in
 * the `x-goog-api-key` header, never in the URL.
 */
export class GeminiModel extends HttpChatModel {
  /** The model asked for, as traces name it. */
  readonly model: string;
  private readonly placement: MediaPlacement;
  private readonly bodyHead: string;
  private readonly headFields: Record<string, unknown>;
  private readonly toolsJson = new ToolsCache((tools: readonly ModelTool[]) => JSON.stringify(toGeminiTools(tools)));

  constructor(options: GeminiModelOptions) {
    super(wiring(options));
    this.model = options.model;
    this.placement = options.mediaPlacement ?? placementOf(options.model);
    this.headFields = { ...options.params };
    this.bodyHead = JSON.stringify(this.headFields).slice(0, -1);
  }

  protected async *readEvents(events: AsyncGenerator<SseEvent>): AsyncGenerator<ModelStreamEvent, ModelResponse> {
    const turn = new Turn(this.provider);
    for await (const event of events) {
      const chunk = parseChunk(this.provider, event.data);
      this.throwIfError(chunk);
      for (const delta of turn.add(chunk)) yield delta;
    }
    return turn.response(false);
  }

  protected parse(json: Record<string, unknown>): ModelResponse {
    this.throwIfError(json);
    const turn = new Turn(this.provider);
    turn.add(json);
    return turn.response(true);
  }

  protected body(request: ModelRequest): string {
    let body = headWithCap(this.bodyHead, this.headFields, ['generationConfig', 'maxOutputTokens'], request.maxOutputTokens);
    const sep = (): string => (body.length > 1 ? ',' : '');
    if (request.system) body += `${sep()}"systemInstruction":${JSON.stringify({ parts: [{ text: request.system }] })}`;
    body += `${sep()}"contents":${JSON.stringify(toContents(this.provider, request.messages, this.placement))}`;
    if (request.tools.length > 0) body += `,"tools":${this.toolsJson.get(request.tools)}`;
    return `${body}}`;
  }

  /** `{ error: { code, message, status } }`, in a 200 body or as a stream event. */
  private throwIfError(json: Record<string, unknown>): void {
    if (json.error === undefined || json.error === null) return;
    const error = asRecord(json.error);
    const message = [asString(error?.status), asString(error?.message)].filter(Boolean).join(': ') || JSON.stringify(json.error);
    throw new ModelResponseError(this.provider, `the provider reported an error: ${message}`);
  }
}

/**
 * One model turn read from a whole response or from the chunks of a stream: the first
 * candidate's parts (adjacent plain text merged), its finish reason and the last usage
 * reported (Gemini repeats the running totals in every chunk).
 */
class Turn {
  private readonly parts: Part[] = [];
  private finishReason: string | undefined;
  private usage: Record<string, unknown> | undefined;
  private blockReason: string | undefined;

  constructor(private readonly provider: string) {}

  /** Takes one response or chunk in; returns the text and reasoning it added, as stream events. */
  add(json: Record<string, unknown>): ModelStreamEvent[] {
    const deltas: ModelStreamEvent[] = [];
    this.usage = asRecord(json.usageMetadata) ?? this.usage;
    this.blockReason = asString(asRecord(json.promptFeedback)?.blockReason) ?? this.blockReason;
    const candidate = Array.isArray(json.candidates) ? asRecord(json.candidates[0]) : undefined;
    if (!candidate) return deltas;
    this.finishReason = asString(candidate.finishReason) ?? this.finishReason;
    const parts = asRecord(candidate.content)?.parts;
    if (!Array.isArray(parts)) return deltas;
    for (const raw of parts) {
      const part = asRecord(raw);
      if (!part) throw new ModelResponseError(this.provider, 'a content part is not an object', snippet(JSON.stringify(raw) ?? ''));
      const text = asString(part.text);
      if (text) deltas.push({ type: part.thought === true ? 'reasoning' : 'text', delta: text });
      this.push(part);
    }
    return deltas;
  }

  private push(part: Part): void {
    // An empty text part with nothing else (a stream's closing chunk) is dropped: sent back, the API refuses it.
    if (part.text === '' && isPlainText(part)) return;
    const last = this.parts.at(-1);
    if (last !== undefined && isPlainText(last) && isPlainText(part) && last.thought === part.thought) {
      this.parts[this.parts.length - 1] = { ...last, text: `${last.text as string}${part.text as string}` };
      return;
    }
    if (this.parts.length >= MAX_STREAMED_PARTS)
      throw new ModelResponseError(this.provider, `a response has more than ${MAX_STREAMED_PARTS} parts`);
    this.parts.push(part);
  }

  /** The turn as the loop needs it. `whole` is a non-streamed body, which has no finish reason when the prompt was blocked. */
  response(whole: boolean): ModelResponse {
    if (this.blockReason !== undefined && this.parts.length === 0)
      throw new ModelResponseError(this.provider, `the prompt was blocked: ${this.blockReason}`);
    if (this.finishReason === undefined) {
      throw new ModelResponseError(
        this.provider,
        whole ? 'the body has no candidates[0] with a finishReason' : 'the stream ended before a finishReason',
      );
    }
    let text = '';
    const toolCalls: ToolCall[] = [];
    let keep = false;
    for (const part of this.parts) {
      if (part.thoughtSignature !== undefined || part.thought === true) keep = true;
      if (typeof part.text === 'string' && part.thought !== true) text += part.text;
      const call = asRecord(part.functionCall);
      if (call) {
        const name = asString(call.name);
        if (!name) throw new ModelResponseError(this.provider, 'a functionCall part has no name', snippet(JSON.stringify(part)));
        toolCalls.push({
          id: asString(call.id) || `${MADE_UP_ID}${randomUUID().replace(/-/g, '').slice(0, 24)}`,
          name,
          arguments: JSON.stringify(call.args ?? {}),
        });
      }
    }
    const response: ModelResponse = { text, toolCalls, usage: usageOf(this.usage), stopReason: this.finishReason };
    if (keep) response.items = this.parts.map((data) => ({ provider: this.provider, type: kindOf(data), data }));
    return response;
  }
}

/**
 * Gemini says how long to wait in the error body, not in a header: a `RetryInfo` detail
 * with `retryDelay` as a protobuf duration (`"34.4s"`). Milliseconds, or undefined.
 */
function retryDelayOf(body: string): number | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const details = asRecord(asRecord(parsed)?.error)?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    const delay = asString(asRecord(detail)?.retryDelay);
    const seconds = delay === undefined ? undefined : /^(\d+(?:\.\d+)?)s$/.exec(delay)?.[1];
    if (seconds !== undefined) return Math.round(Number(seconds) * 1000);
  }
  return undefined;
}

function isPlainText(part: Part): boolean {
  return typeof part.text === 'string' && Object.keys(part).every((key) => key === 'text' || key === 'thought');
}

function kindOf(part: Part): string {
  if (part.functionCall !== undefined) return 'functionCall';
  if (part.thought === true) return 'thought';
  if (part.text !== undefined) return 'text';
  return Object.keys(part).find((key) => key !== 'thoughtSignature') ?? 'part';
}

/** Gemini counts thoughts apart from the candidates; `Usage.outputTokens` holds both, `reasoningTokens` the thoughts. */
function usageOf(usage: Record<string, unknown> | undefined): Usage {
  const thoughts = asCount(usage?.thoughtsTokenCount);
  const result: Usage = { inputTokens: asCount(usage?.promptTokenCount), outputTokens: asCount(usage?.candidatesTokenCount) + thoughts };
  if (usage?.cachedContentTokenCount !== undefined) result.cachedInputTokens = asCount(usage.cachedContentTokenCount);
  if (usage?.thoughtsTokenCount !== undefined) result.reasoningTokens = thoughts;
  return result;
}

/**
 * The transcript as Gemini contents. A model turn that kept this provider's parts is sent as
 * those parts, verbatim (thought signatures in place); any other is rebuilt from its text and
 * calls. Every run of tool results becomes ONE user content of `functionResponse` parts, in
 * call order; a made-up call id is left out, since the API never saw it.
 */
function toContents(provider: string, messages: readonly ChatMessage[], placement: MediaPlacement): Content[] {
  return groupedTranscript(messages, provider, WRITER, placement);
}

/** How Gemini takes each kind of content (see {@link groupedTranscript}). */
const WRITER: GroupedWriter<Content, Part, MediaPlacement> = {
  results: (parts) => ({ role: 'user', parts }),
  result(parts, message, placement) {
    const { beside, ...shown } = functionResponseOf(message, placement);
    const functionResponse: Record<string, unknown> = { name: message.name, ...shown };
    if (!message.callId.startsWith(MADE_UP_ID)) functionResponse.id = message.callId;
    parts.push({ functionResponse }, ...beside);
  },
  user: (message) => ({ role: 'user', parts: [{ text: message.content }] }),
  assistant: (parts) => ({ role: 'model', parts }),
  text: (text) => ({ text }),
  call(call) {
    const functionCall: Record<string, unknown> = { name: call.name, args: argsOf(call.arguments) };
    if (!call.id.startsWith(MADE_UP_ID)) functionCall.id = call.id;
    return { functionCall };
  },
};

/** Gemini wants `args` as an object; arguments that were not one are sent as `{}` (their error result explains). */
function argsOf(text: string): Record<string, unknown> {
  if (text === '') return {};
  try {
    return asRecord(JSON.parse(text)) ?? {};
  } catch {
    return {};
  }
}

function wiring(options: GeminiModelOptions): Wiring {
  if (typeof options?.apiKey !== 'string') throw new InvalidArgumentError('GeminiModel needs an apiKey');
  const { settings, headers } = wire('GeminiModel', options, { header: 'x-goog-api-key', option: 'apiKey', key: options.apiKey });
  // The model and version go into the URL path: only plain names, so nothing can steer the request elsewhere.
  const model = options.model.includes('/') ? options.model : `models/${options.model}`;
  if (!/^[A-Za-z]+\/[A-Za-z0-9._-]+$/.test(model))
    throw new InvalidArgumentError('GeminiModel: model must be a name like gemini-2.5-flash or models/gemini-2.5-flash');
  const version = options.apiVersion ?? 'v1beta';
  if (!/^[A-Za-z0-9._-]+$/.test(version)) throw new InvalidArgumentError('GeminiModel: apiVersion must be a plain name like v1beta');
  const root = joinUrl(options.baseUrl ?? 'https://generativelanguage.googleapis.com', `${version}/${model}`);
  return {
    provider: options.provider ?? 'gemini',
    url: `${root}:generateContent`,
    streamUrl: `${root}:streamGenerateContent?alt=sse`,
    headers,
    settings,
    retryDelayOf,
  };
}
