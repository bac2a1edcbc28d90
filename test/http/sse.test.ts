/**
 * The server-sent-events parser, fed byte chunks split at awkward places.
 */
// Internal module: the package does not export the SSE parser.
import { readSse, type SseEvent } from '../../src/http/sse';

function streamOf(chunks: Array<string | Uint8Array>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function parse(chunks: Array<string | Uint8Array>): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(streamOf(chunks))) events.push(event);
  return events;
}

describe('readSse', () => {
  it('parses named and unnamed events, ignoring comments and unknown fields', async () => {
    expect(await parse([': keep-alive\n', 'event: ping\ndata: {}\n\n', 'id: 7\nretry: 10\ndata: hello\n\n'])).toEqual([
      { event: 'ping', data: '{}' },
      { event: 'message', data: 'hello' },
    ]);
  });

  it('joins multi-line data with newlines and strips one leading space only', async () => {
    expect(await parse(['data:  two spaces\ndata:none\n\n'])).toEqual([{ event: 'message', data: ' two spaces\nnone' }]);
  });

  it('handles CRLF and CR line ends, including a CRLF split across chunks', async () => {
    expect(await parse(['data: a\r', '\n\r', '\ndata: b\r\rdata: c\r\n\r\n'])).toEqual([
      { event: 'message', data: 'a' },
      { event: 'message', data: 'b' },
      { event: 'message', data: 'c' },
    ]);
  });

  it('reassembles a line and a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode('data: {"t":"héllo ✓"}\n\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the "é"
    expect(await parse([bytes.slice(0, cut), bytes.slice(cut, cut + 9), bytes.slice(cut + 9)])).toEqual([
      { event: 'message', data: '{"t":"héllo ✓"}' },
    ]);
  });

  it('delivers a last event that the server closed without a blank line', async () => {
    expect(await parse(['data: first\n\ndata: [DONE]'])).toEqual([
      { event: 'message', data: 'first' },
      { event: 'message', data: '[DONE]' },
    ]);
  });

  it('skips events without data and counts every chunk', async () => {
    let chunks = 0;
    const events: SseEvent[] = [];
    for await (const event of readSse(streamOf(['event: empty\n\n', 'data: x\n', '\n']), () => chunks++)) events.push(event);
    expect(events).toEqual([{ event: 'message', data: 'x' }]);
    expect(chunks).toBe(3);
  });
});
