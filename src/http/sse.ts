import { ModelResponseTooLargeError } from '../errors';
import { DEFAULT_MAX_EVENT_BYTES, DEFAULT_MAX_RESPONSE_BYTES } from './settings';

/** One server-sent event. `event` is `message` when the server named none. */
export interface SseEvent {
  event: string;
  data: string;
}

/** What {@link readSse} accepts to hold, and whom to blame when it is more. */
export interface SseLimits {
  /** The longest line, and the longest event (its `data` lines together). Default 4 MiB. */
  maxEventBytes?: number;
  /** The most bytes of the whole stream. Default 32 MiB. */
  maxBytes?: number;
  /** The provider named by the errors. Default `server`. */
  provider?: string;
}

const LINE_END = /[\r\n]/g;

/**
 * Parses a `text/event-stream` body (WHATWG rules: LF, CRLF or CR line ends, `data:`
 * lines joined with "\n", comments and unknown fields ignored). `onChunk` runs for every
 * chunk received, which is how the caller's idle timeout is kept alive. A trailing event
 * without its blank line is still delivered: some servers close right after the last one.
 *
 * Bounded: each chunk is scanned once (a line split over many chunks is not rescanned),
 * and a line or event over `maxEventBytes` or a stream over `maxBytes` ends the stream with
 * a {@link ModelResponseTooLargeError}. Lengths of lines and events are counted in
 * characters of the decoded text (bytes, for the ASCII JSON providers send).
 */
export async function* readSse(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  onChunk?: () => void,
  limits: SseLimits = {},
): AsyncGenerator<SseEvent> {
  const maxEvent = limits.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const provider = limits.provider ?? 'server';
  const decoder = new TextDecoder();
  /** The start of the current line, from earlier chunks (it holds no line end). */
  let partial = '';
  /** The last chunk ended with CR: an LF opening the next one completes that CRLF. */
  let skipLf = false;
  let eventName = '';
  let data: string[] = [];
  let dataLength = 0;
  let received = 0;
  const chunks = isReadableStream(body) ? chunksOf(body) : body;

  function* drain(text: string): Generator<SseEvent> {
    if (text === '') return;
    let at = 0;
    if (skipLf && text.charCodeAt(0) === 10) at = 1;
    skipLf = false;
    for (;;) {
      LINE_END.lastIndex = at;
      const found = LINE_END.exec(text);
      if (found === null) {
        if (at < text.length) {
          if (partial.length + (text.length - at) > maxEvent)
            throw new ModelResponseTooLargeError(provider, 'a stream line', maxEvent, 'maxEventBytes');
          partial += text.slice(at);
        }
        return;
      }
      const end = found.index;
      const line = partial === '' ? text.slice(at, end) : partial + text.slice(at, end);
      partial = '';
      if (line.length > maxEvent) throw new ModelResponseTooLargeError(provider, 'a stream line', maxEvent, 'maxEventBytes');
      at = end + 1;
      if (text.charCodeAt(end) === 13) {
        if (at === text.length) skipLf = true;
        else if (text.charCodeAt(at) === 10) at++;
      }
      const event = takeLine(line);
      if (event) yield event;
    }
  }

  function takeLine(line: string): SseEvent | undefined {
    if (line === '') {
      if (data.length === 0) {
        eventName = '';
        return undefined;
      }
      const event = { event: eventName || 'message', data: data.join('\n') };
      eventName = '';
      data = [];
      dataLength = 0;
      return event;
    }
    if (line.charCodeAt(0) === 58) return undefined; // ":" starts a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      dataLength += value.length + 1;
      if (dataLength > maxEvent) throw new ModelResponseTooLargeError(provider, 'a stream event', maxEvent, 'maxEventBytes');
      data.push(value);
    } else if (field === 'event') eventName = value;
    return undefined;
  }

  // Leaving this loop early (a consumer that stops, an error) ends the iteration of the body,
  // which releases the connection.
  for await (const value of chunks) {
    onChunk?.();
    received += value.byteLength;
    if (received > maxBytes) throw new ModelResponseTooLargeError(provider, 'a stream', maxBytes, 'maxResponseBytes');
    yield* drain(decoder.decode(value, { stream: true }));
  }
  yield* drain(decoder.decode());
  if (partial !== '') {
    const event = takeLine(partial);
    partial = '';
    if (event) yield event;
  }
  const event = takeLine('');
  if (event) yield event;
}

function isReadableStream(body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>): body is ReadableStream<Uint8Array> {
  return typeof (body as ReadableStream<Uint8Array>).getReader === 'function';
}

/** A web stream's chunks; ending early cancels the stream. */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
