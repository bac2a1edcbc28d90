/**
 * Hostile model responses, generated (issue 10): random SSE framing (chunk splits, CR / LF /
 * CRLF, comments, junk fields), random tool-call indices and sizes, truncated streams.
 * Every call either answers or fails with a ModelError; nothing else is thrown, no error
 * ever holds the key, and memory stays bounded by the limits.
 */
import { ModelError, OpenAIChatModel, type ModelStreamEvent } from 'toolnexus-ts/models';

const CANARY = 'sk-live-FUZZCANARY-9f8e7d6c5b4a';
const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

/** mulberry32: a seeded generator, so a failing case can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

const INDICES: unknown[] = [0, 1, 2, 7, 1e9, -1, 1.5, 2 ** 53, Number.MAX_VALUE, '0', null, undefined, {}, []];

/** One hostile stream body, as the bytes a server would send. */
function hostileStream(random: () => number): string {
  const eol = pick(random, ['\n', '\r\n', '\r']);
  const parts: string[] = [];
  const events = 1 + Math.floor(random() * 12);
  for (let i = 0; i < events; i++) {
    const kind = random();
    if (kind < 0.1) parts.push(`: keep-alive${eol}`);
    if (kind < 0.15) parts.push(`retry: 10${eol}id: ${i}${eol}`);
    let data: string;
    if (kind < 0.45) data = JSON.stringify({ choices: [{ delta: { content: 'x'.repeat(Math.floor(random() * 300)) } }] });
    else if (kind < 0.8) {
      const part: Record<string, unknown> = {
        index: pick(random, INDICES),
        function: { arguments: '{"a":1}'.slice(0, Math.floor(random() * 8)) },
      };
      if (random() < 0.6) part.id = `call_${i}`;
      if (random() < 0.7) (part.function as Record<string, unknown>).name = pick(random, ['t', '', 'tool']);
      data = JSON.stringify({ choices: [{ delta: { tool_calls: [part] } }] });
    } else if (kind < 0.85) data = JSON.stringify({ error: { message: `upstream said ${CANARY}` } });
    else if (kind < 0.9) data = '{not json';
    else if (kind < 0.95) data = JSON.stringify([1, 2]);
    else data = 'y'.repeat(Math.floor(random() * 5000));
    parts.push(`data: ${data}${eol}${eol}`);
  }
  const end = random();
  if (end < 0.4)
    parts.push(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'stop' }] })}${eol}${eol}data: [DONE]${eol}${eol}`);
  else if (end < 0.6) parts.push('data: [DONE]');
  else if (end < 0.7) parts.push('z'.repeat(3000)); // bytes without a line end, then the close
  return parts.join('');
}

/** Serves `text` split at random places (multi-byte characters and CRLFs split too). */
function fetchOf(text: string, random: () => number): typeof globalThis.fetch {
  return async () => {
    const bytes = new TextEncoder().encode(text);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.length;) {
      const size = 1 + Math.floor(random() * (random() < 0.5 ? 4 : 700));
      chunks.push(bytes.subarray(at, at + size));
      at += size;
    }
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift();
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
}

describe('hostile streamed responses (seeded fuzz)', () => {
  it('every call answers or fails with a ModelError, never with the key, within bounded memory', async () => {
    const before = process.memoryUsage().rss;
    let answered = 0;
    let failed = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const random = rng(seed);
      const model = new OpenAIChatModel({
        baseUrl: 'http://127.0.0.1:9/v1',
        apiKey: CANARY,
        model: 'm',
        retry: { maxAttempts: 1 },
        maxEventBytes: 4096,
        maxResponseBytes: 64 * 1024,
        fetch: fetchOf(hostileStream(random), random),
      });
      const events: ModelStreamEvent[] = [];
      try {
        for await (const event of model.stream(request)) events.push(event);
        answered++;
        const last = events.at(-1);
        expect(last?.type).toBe('response');
        if (last?.type === 'response') {
          for (const call of last.response.toolCalls) expect(call.name).not.toBe('');
        }
      } catch (error) {
        failed++;
        if (!(error instanceof ModelError)) throw new Error(`seed ${seed}: threw ${String(error)}`);
        expect(`${error.message}\n${error.stack ?? ''}\n${JSON.stringify(error)}`).not.toContain('FUZZCANARY');
      }
    }
    expect(answered).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
  });
});
