import { InvalidArgumentError } from '../errors';
import { checkHeader, httpSettings, type HttpModelOptions, type HttpSettings } from '../http/settings';
import type { SseEvent } from '../http/sse';
import type { ChatModel, ModelRequest, ModelResponse, ModelStreamEvent } from './types';
import { joinUrl, ModelEndpoint, streamFailure, wholeAsStream } from './shared';

/**
 * The skeleton every HTTP model shares (docs/design.md, "Models"): checks of the options all
 * providers have, the headers, the endpoint (retries, timers, size caps), the redacting of
 * every error that leaves the model, and the stream loop (a whole JSON answer replayed as
 * events, the attempt's timer disposed whatever happens). A provider file extends it and
 * supplies only its wire conversion: {@link body}, {@link parse}, {@link readEvents}.
 */
export abstract class HttpChatModel implements ChatModel {
  /** The name errors (and provider items) carry. */
  readonly provider: string;
  /** Where `complete` posts, and `stream` unless the provider streams elsewhere. */
  protected readonly endpoint: ModelEndpoint;
  /** Where `stream` posts (Gemini streams at another URL). */
  protected readonly streamEndpoint: ModelEndpoint;

  constructor(wiring: Wiring) {
    this.provider = wiring.provider;
    const { settings, headers } = wiring;
    this.endpoint = new ModelEndpoint(this.provider, wiring.url, headers, settings, wiring.retryDelayOf);
    this.streamEndpoint =
      wiring.streamUrl === undefined
        ? this.endpoint
        : new ModelEndpoint(this.provider, wiring.streamUrl, headers, settings, wiring.retryDelayOf);
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    try {
      const json = await this.endpoint.json(this.body(request, false), request.signal);
      return withResponseModel(this.parse(json), json);
    } catch (error) {
      throw this.endpoint.redact(error);
    }
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    try {
      yield* this.streamEvents(request);
    } catch (error) {
      throw this.streamEndpoint.redact(error);
    }
  }

  /** The request body, as JSON text. */
  protected abstract body(request: ModelRequest, stream: boolean): string;

  /** A whole JSON answer as a response (also a stream a server answered with one document). */
  protected abstract parse(json: Record<string, unknown>): ModelResponse;

  /**
   * Reads a stream's server-sent events: yields the text (and reasoning) deltas as they come
   * and returns the whole response, which the core yields once the stream is closed.
   * Whatever it throws is told as the attempt sees it (timeout, abort, connection loss).
   */
  protected abstract readEvents(events: AsyncGenerator<SseEvent>): AsyncGenerator<ModelStreamEvent, ModelResponse>;

  /** A whole answer as the events its stream would have given. */
  protected wholeAsEvents(response: ModelResponse): Iterable<ModelStreamEvent> {
    return wholeAsStream(response);
  }

  private async *streamEvents(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const opened = await this.streamEndpoint.stream(this.body(request, true), request.signal);
    if ('whole' in opened) {
      yield* this.wholeAsEvents(withResponseModel(this.parse(opened.whole), opened.whole));
      return;
    }
    const { events, attempt } = opened;
    let response: ModelResponse;
    const answered: { model?: string } = {};
    try {
      response = yield* this.readEvents(sniffModel(events, answered));
    } catch (error) {
      throw streamFailure(this.provider, attempt, error);
    } finally {
      attempt.dispose();
    }
    if (response.model === undefined && answered.model !== undefined) response.model = answered.model;
    yield { type: 'response', response };
  }
}

/** Longest model name kept from a response: it is the provider's text, bounded like any. */
const MAX_MODEL_NAME = 200;

/** The model the provider says answered (`model`, or Gemini's `modelVersion`), on the response. */
function withResponseModel(response: ModelResponse, json: Record<string, unknown>): ModelResponse {
  const named = json.model ?? json.modelVersion;
  if (response.model === undefined && typeof named === 'string' && named !== '') response.model = named.slice(0, MAX_MODEL_NAME);
  return response;
}

/**
 * Passes a stream's events through, reading the answering model's name from the first event
 * that carries one (`"model"`, or `"modelVersion"`; Anthropic's in message_start, the
 * Responses API's in response.created): one regular expression an event until found.
 */
async function* sniffModel(events: AsyncGenerator<SseEvent>, answered: { model?: string }): AsyncGenerator<SseEvent> {
  for await (const event of events) {
    if (answered.model === undefined) {
      const found = MODEL_FIELD.exec(event.data);
      if (found) answered.model = (found[1] as string).slice(0, MAX_MODEL_NAME);
    }
    yield event;
  }
}

const MODEL_FIELD = /"model(?:Version)?"\s*:\s*"([^"\\]{1,200})"/;

/** How a provider's model is wired: its name, URLs, headers and HTTP settings. */
export interface Wiring {
  provider: string;
  url: string;
  streamUrl?: string;
  headers: Record<string, string>;
  settings: HttpSettings;
  retryDelayOf?: (body: string) => number | undefined;
}

/**
 * The options every HTTP model checks the same way: `model` a non-empty string, `baseUrl`
 * absent or a non-empty string, `provider` absent or a non-empty string, the key (when
 * given) a valid header value, never quoted. Returns the HTTP settings and the JSON headers
 * with the provider's own (`auth`) and the caller's `headers` on top.
 */
export function wire(
  model: string,
  options: HttpModelOptions & { model?: unknown; baseUrl?: unknown; provider?: unknown },
  auth: { header: string; option: string; key: string | undefined; value?: string },
  extra: Record<string, string> = {},
): { settings: HttpSettings; headers: Record<string, string> } {
  if (typeof options?.model !== 'string' || options.model === '') throw new InvalidArgumentError(`${model} needs a model`);
  if (options.baseUrl !== undefined && (typeof options.baseUrl !== 'string' || options.baseUrl === ''))
    throw new InvalidArgumentError(`${model}: baseUrl must be a non-empty string`);
  if (options.provider !== undefined && (typeof options.provider !== 'string' || options.provider === ''))
    throw new InvalidArgumentError(`${model}: provider must be a non-empty string`);
  // A key that cannot be a header value is refused here, clearly and without quoting it.
  if (auth.key !== undefined) checkHeader(model, auth.header, auth.key, auth.option);
  const settings = httpSettings(options);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...(auth.key ? { [auth.header]: auth.value ?? auth.key } : {}),
    ...extra,
    ...settings.headers,
  };
  return { settings, headers };
}

/**
 * The wiring of a model speaking an OpenAI API (chat completions, Responses): a Bearer key
 * when given, `https://api.openai.com/v1` unless another root is named, provider `openai`
 * unless another name is given.
 */
export function openAIWiring(
  model: string,
  options: HttpModelOptions & { model: string; baseUrl?: string; apiKey?: string; provider?: string },
  path: string,
): Wiring {
  const key = options?.apiKey;
  const { settings, headers } = wire(model, options, { header: 'authorization', option: 'apiKey', key, value: `Bearer ${key}` });
  const url = joinUrl(options.baseUrl ?? 'https://api.openai.com/v1', path);
  return { provider: options.provider ?? 'openai', url, headers, settings };
}
