import { randomUUID } from 'node:crypto';
import { ModelError, ModelResponseError } from '../../errors';
import type { Attempt } from '../http';
import { readSse, type SseEvent } from '../sse';
import type { ModelResponse, ModelStreamEvent, ModelTool } from '../types';

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

/** Reads a whole body under the attempt's timer and parses it as JSON, or says clearly why not. */
export async function readJson(provider: string, response: Response, attempt: Attempt): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw attempt.failure(error);
  } finally {
    attempt.dispose();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ModelResponseError(provider, 'the body is not JSON', snippet(text));
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ModelResponseError(provider, 'the body is not a JSON object', snippet(text));
  }
  return parsed as Record<string, unknown>;
}

/**
 * What a stream request got back: server-sent events, or (from a server or gateway that
 * cannot stream) one whole JSON document, which the model then replays as a stream.
 */
export type OpenedStream = { events: AsyncGenerator<SseEvent> } | { whole: Record<string, unknown> };

export async function openStream(provider: string, response: Response, attempt: Attempt): Promise<OpenedStream> {
  if ((response.headers.get('content-type') ?? '').includes('application/json')) return { whole: await readJson(provider, response, attempt) };
  if (!response.body) {
    attempt.dispose();
    throw new ModelResponseError(provider, 'the stream has no body');
  }
  return { events: readSse(response.body, () => attempt.touch()) };
}

/** A whole response, as the events a stream of it would have given. */
export function* wholeAsStream(response: ModelResponse): Generator<ModelStreamEvent> {
  if (response.text !== '') yield { type: 'text', delta: response.text };
  yield { type: 'response', response };
}

/** Parses one streamed JSON payload. */
export function parseChunk(provider: string, data: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new ModelResponseError(provider, 'a stream event is not JSON', snippet(data));
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ModelResponseError(provider, 'a stream event is not a JSON object', snippet(data));
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
