import { randomUUID } from 'node:crypto';
import { ModelError, ModelResponseError } from '../errors';
import type { Attempt } from '../http/attempt';
import { readCapped } from '../http/body';
import { FetchTransport } from '../http/fetch-transport';
import { NodeTransport } from '../http/node-transport';
import { postWithRetry, type HttpCall } from '../http/post';
import { checkHeader, checkUrl, type HttpSettings } from '../http/settings';
import type { Reply, Transport } from '../http/transport';
import { Watchdog } from '../http/watchdog';
import { readSse, type SseEvent } from '../http/sse';
import type { ChatMessage, ModelResponse, ModelStreamEvent, ModelTool, ToolCall, ToolMessage, UserMessage } from './types';

/**
 * The constant body prefix (`head`, without its closing brace), or, when a request caps its
 * output, the same prefix with the provider's limit field (at `path`) lowered to the cap:
 * the prefix is built per such request, so the usual call still reuses the constant one.
 */
export function headWithCap(
  head: string,
  fields: Record<string, unknown>,
  path: readonly [string, ...string[]],
  cap: number | undefined,
): string {
  if (cap === undefined) return head;
  const copy: Record<string, unknown> = { ...fields };
  let holder = copy;
  for (const key of path.slice(0, -1)) {
    const inner = holder[key];
    const next: Record<string, unknown> = typeof inner === 'object' && inner !== null ? { ...(inner as Record<string, unknown>) } : {};
    holder[key] = next;
    holder = next;
  }
  const last = path[path.length - 1] as string;
  const configured = holder[last];
  holder[last] = typeof configured === 'number' && configured < cap ? configured : cap;
  return JSON.stringify(copy).slice(0, -1);
}

/**
 * Caches one derived value per tools array. The runner hands the same array for as long
 * as the toolkit is unchanged, so the provider JSON of the tools is built once, not per call.
 */
export class ToolsCache<T> {
  private readonly cache = new WeakMap<readonly ModelTool[], T>();
  constructor(private readonly build: (tools: readonly ModelTool[]) => T) {}

  get(tools: readonly ModelTool[]): T {
    let value = this.cache.get(tools);
    if (value === undefined) {
      value = this.build(tools);
      this.cache.set(tools, value);
    }
    return value;
  }
}

/** Reads a whole body (up to `maxResponseBytes`) under the attempt's timer and parses it as JSON, or says clearly why not. */
async function readJson(provider: string, reply: Reply, attempt: Attempt, maxBytes: number): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readCapped(provider, reply, maxBytes, 'maxResponseBytes');
  } catch (error) {
    throw streamFailure(provider, attempt, error);
  } finally {
    attempt.dispose();
  }
  return jsonObject(provider, text, 'the body');
}

/**
 * What a stream request got back: server-sent events read under their attempt's timer, or
 * (from a server or gateway that cannot stream) one whole JSON document, which the model
 * then replays as a stream.
 */
export type OpenedStream = { events: AsyncGenerator<SseEvent>; attempt: Attempt } | { whole: Record<string, unknown> };

/**
 * Where an HTTP model's requests go and how they are sent: one POST with retries and
 * timers, answered by a whole JSON body or opened as a stream. The HTTP model core
 * (`HttpChatModel`, core.ts) holds one for every provider.
 */
export class ModelEndpoint {
  private readonly streamHeaders: Record<string, string>;
  private readonly watchdog = new Watchdog();
  private readonly transport: Transport;
  /** Header values that must never appear in an error: keys, tokens (anything but the protocol headers). */
  private readonly secrets: string[];

  /** Checks the URL and every header now, naming what is wrong but never quoting a value. */
  constructor(
    readonly provider: string,
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly settings: HttpSettings,
    /** Reads a retry delay from a retryable error's body (`HttpCall.retryDelayOf`). */
    private readonly retryDelayOf?: (body: string) => number | undefined,
  ) {
    checkUrl(provider, url);
    for (const [name, value] of Object.entries(headers)) checkHeader(provider, name, value);
    this.transport = settings.fetch ? new FetchTransport(settings.fetch, url) : new NodeTransport(url);
    this.streamHeaders = { ...headers, accept: 'text/event-stream' };
    this.secrets = secretsOf(headers);
  }

  /**
   * Removes every header value (a key) from an error's message and text fields, in case a
   * server echoed it back (in an error body, a stream error event). Models pass every
   * error they throw through here.
   */
  redact(error: unknown): unknown {
    if (this.secrets.length === 0 || !(error instanceof Error)) return error;
    const record = error as unknown as Record<string, unknown>;
    for (const key of ['message', 'stack', 'providerMessage', 'detail', 'bodySnippet']) {
      const value = record[key];
      if (typeof value !== 'string') continue;
      let clean = value;
      for (const secret of this.secrets) clean = clean.split(secret).join('[redacted]');
      if (clean !== value)
        Object.defineProperty(error, key, {
          value: clean,
          writable: true,
          configurable: true,
          enumerable: key !== 'message' && key !== 'stack',
        });
    }
    return error;
  }

  /** POSTs `body` and reads the whole answer as a JSON object. */
  async json(body: string, signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    const { reply, attempt } = await postWithRetry(this.call(this.headers, body, signal), this.settings, this.watchdog);
    return readJson(this.provider, reply, attempt, this.settings.maxResponseBytes);
  }

  /** POSTs `body` asking for server-sent events. The caller disposes the attempt once the events end. */
  async stream(body: string, signal: AbortSignal | undefined): Promise<OpenedStream> {
    const { reply, attempt } = await postWithRetry(this.call(this.streamHeaders, body, signal), this.settings, this.watchdog);
    if ((reply.headers.get('content-type') ?? '').includes('application/json')) {
      return { whole: await readJson(this.provider, reply, attempt, this.settings.maxResponseBytes) };
    }
    const limits = { provider: this.provider, maxBytes: this.settings.maxResponseBytes, maxEventBytes: this.settings.maxEventBytes };
    return { events: readSse(reply.chunks(), () => attempt.touch(), limits), attempt };
  }

  private call(headers: Record<string, string>, body: string, signal: AbortSignal | undefined): HttpCall {
    return { provider: this.provider, url: this.url, transport: this.transport, headers, body, signal, retryDelayOf: this.retryDelayOf };
  }
}

/** Header values worth hiding: all but the protocol's own, and the token of a `Bearer` value on its own too. */
function secretsOf(headers: Record<string, string>): string[] {
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (PUBLIC_HEADERS.has(name.toLowerCase())) continue;
    const token = value.replace(/^(Bearer|Basic|Token)\s+/i, '');
    for (const secret of [value, token]) if (secret.length >= 8) secrets.add(secret);
  }
  // Longest first, so a `Bearer <key>` is redacted whole before its key alone.
  return [...secrets].sort((a, b) => b.length - a.length);
}

const PUBLIC_HEADERS = new Set(['content-type', 'accept', 'anthropic-version', 'user-agent']);

/** A whole response, as the events a stream of it would have given. */
export function* wholeAsStream(response: ModelResponse): Generator<ModelStreamEvent> {
  if (response.text !== '') yield { type: 'text', delta: response.text };
  yield { type: 'response', response };
}

/** Parses one streamed JSON payload. */
export function parseChunk(provider: string, data: string): Record<string, unknown> {
  return jsonObject(provider, data, 'a stream event');
}

/** `text` as a JSON object, or a ModelResponseError naming `what` was not one (with a snippet). */
function jsonObject(provider: string, text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ModelResponseError(provider, `${what} is not JSON`, snippet(text));
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ModelResponseError(provider, `${what} is not a JSON object`, snippet(text));
  }
  return parsed as Record<string, unknown>;
}

export function snippet(text: string): string {
  return text.length > 200 ? text.slice(0, 200) : text;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** Some local servers send no tool-call id; the runner needs one to pair each result with its call. */
export function fallbackCallId(): string {
  return `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
}

/** Arguments as JSON text, whether the server sent a string (OpenAI) or an object (Ollama, Anthropic). */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return base.endsWith('/') ? base + path.replace(/^\//, '') : `${base}/${path.replace(/^\//, '')}`;
}

/** Rethrows a stream read failure as the attempt sees it (timeout, caller abort, connection loss). */
export function streamFailure(provider: string, attempt: Attempt, error: unknown): unknown {
  if (error instanceof ModelError && error.provider === provider) return error;
  return attempt.failure(error);
}

/**
 * How one provider writes the messages of a transcript whose tool results go back together
 * (Anthropic's messages, Gemini's contents): `W` a message, `P` one of its parts, `C` what
 * writing a result needs besides the message (module-level writers, so a request makes no closure).
 */
export interface GroupedWriter<W, P, C> {
  /** The user message a run of tool results goes in; `parts` is filled after it is made. */
  results(parts: P[]): W;
  /** Appends one tool result's parts. */
  result(parts: P[], message: ToolMessage, context: C): void;
  user(message: UserMessage): W;
  /** An assistant turn: its kept provider items verbatim, or the parts rebuilt from its text and calls. */
  assistant(parts: P[]): W;
  text(text: string): P;
  call(call: ToolCall): P;
}

/**
 * The transcript as `writer` writes it: every run of tool results ONE user message, in call
 * order; an assistant turn that kept items of `provider` (signed thinking, thought signatures)
 * sent as those, verbatim and in their order; any other rebuilt from its text and tool calls.
 */
export function groupedTranscript<W, P, C>(
  messages: readonly ChatMessage[],
  provider: string,
  writer: GroupedWriter<W, P, C>,
  context: C,
): W[] {
  const out: W[] = [];
  let results: P[] | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!results) {
        results = [];
        out.push(writer.results(results));
      }
      writer.result(results, message, context);
      continue;
    }
    results = undefined;
    if (message.role === 'user') {
      out.push(writer.user(message));
      continue;
    }
    const parts: P[] = [];
    for (const item of message.items ?? []) if (item.provider === provider) parts.push(item.data as P);
    if (parts.length === 0) {
      if (message.content !== '') parts.push(writer.text(message.content));
      for (const call of message.toolCalls ?? []) parts.push(writer.call(call));
    }
    out.push(writer.assistant(parts));
  }
  return out;
}
