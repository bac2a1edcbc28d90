/** One server-sent event. `event` is `message` when the server named none. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Parses a `text/event-stream` body (WHATWG rules: LF, CRLF or CR line ends, `data:`
 * lines joined with "\n", comments and unknown fields ignored). `onChunk` runs for every
 * chunk received, which is how the caller's idle timeout is kept alive. A trailing event
 * without its blank line is still delivered: some servers close right after the last one.
 */
export async function* readSse(body: ReadableStream<Uint8Array>, onChunk?: () => void): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let eventName = '';
  let data: string[] = [];
  const reader = body.getReader();

  function* drain(final: boolean): Generator<SseEvent> {
    let start = 0;
    for (;;) {
      let end = -1;
      for (let i = start; i < buffer.length; i++) {
        const c = buffer.charCodeAt(i);
        if (c === 10 || c === 13) {
          end = i;
          break;
        }
      }
      if (end === -1) break;
      // A CR at the very end may be the first half of a CRLF split across chunks.
      if (buffer.charCodeAt(end) === 13 && end === buffer.length - 1 && !final) break;
      const line = buffer.slice(start, end);
      start = end + (buffer.charCodeAt(end) === 13 && buffer.charCodeAt(end + 1) === 10 ? 2 : 1);
      const event = takeLine(line);
      if (event) yield event;
    }
    buffer = buffer.slice(start);
    if (final) {
      if (buffer !== '') {
        const event = takeLine(buffer);
        buffer = '';
        if (event) yield event;
      }
      const event = takeLine('');
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
      return event;
    }
    if (line.charCodeAt(0) === 58) return undefined; // ":" starts a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') eventName = value;
    return undefined;
  }

  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      onChunk?.();
      buffer += decoder.decode(value, { stream: true });
      yield* drain(false);
    }
    buffer += decoder.decode();
    yield* drain(true);
  } finally {
    // Ending early (a consumer that stops, an error) must release the connection.
    await reader.cancel().catch(() => undefined);
  }
}
