/**
 * The Responses and Gemini models against hostile or unlucky servers, as the older models
 * are in hostile-http.test.ts and hostile-sse-fuzz.test.ts: recorded streams split at every
 * byte, keys echoed back, redirects, oversized bodies and events, retry-after, timeouts, and
 * a seeded fuzz of garbled streams. Every server is on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  GeminiModel,
  ModelError,
  ModelHttpError,
  ModelRedirectError,
  ModelResponseTooLargeError,
  ModelTimeoutError,
  OpenAIResponsesModel,
  type ChatModel,
  type HttpModelOptions,
  type ModelResponse,
  type ModelStreamEvent,
} from 'toolnexus-ts/models';
import { recordedChunks, splitFetch, sseBody } from '../fixtures/runner/playback';

const CANARY = 'sk-live-CANARY0123456789abcdef';
const MB = 1024 * 1024;
const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

type Kind = 'responses' | 'gemini';
const KINDS: Kind[] = ['responses', 'gemini'];

function build(kind: Kind, url: string, extra: HttpModelOptions = {}): ChatModel {
  return kind === 'responses'
    ? new OpenAIResponsesModel({ baseUrl: url, apiKey: CANARY, model: 'm', retry: { maxAttempts: 1 }, ...extra })
    : new GeminiModel({ baseUrl: url, apiKey: CANARY, model: 'm', retry: { maxAttempts: 1 }, ...extra });
}

const hosts: Server[] = [];
async function host(
  handler: (req: IncomingMessage, res: ServerResponse, index: number) => void | Promise<void>,
): Promise<{ url: string; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req);
      void Promise.resolve(handler(req, res, seen.length - 1)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hosts.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}
afterEach(async () => {
  for (const server of hosts.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function drain(model: ChatModel): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of model.stream?.(request) ?? []) events.push(event);
  return events;
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/** Every string reachable from an error: message, stack, fields, causes. */
function allText(error: unknown, depth = 0): string {
  if (depth > 4 || typeof error !== 'object' || error === null) return String(error);
  const parts = [String((error as Error).message), String((error as Error).stack)];
  for (const key of Object.keys(error)) parts.push(allText((error as Record<string, unknown>)[key], depth + 1));
  parts.push(allText((error as { cause?: unknown }).cause, depth + 1));
  return parts.join('\n');
}

function finalOf(events: ModelStreamEvent[]): ModelResponse | undefined {
  const last = events.at(-1);
  return last?.type === 'response' ? last.response : undefined;
}

/** Tool-call ids Gemini did not send are made up per call: compare without them. */
function comparable(response: ModelResponse | undefined): unknown {
  return response && { ...response, toolCalls: response.toolCalls.map(({ name, arguments: args }) => ({ name, args })) };
}

describe('recorded streams split at every byte', () => {
  it.each([
    ['responses', 'openai-responses/issue-19493-gpt-5.1-tool-call.chunks.txt', true],
    ['responses', 'openai-responses/openai-reasoning-encrypted-content.1.first-response.chunks.txt', true],
    ['gemini', 'gemini/google-tool-call-gemini3.chunks.txt', false],
    ['gemini', 'gemini/google-text.chunks.txt', false],
  ] as const)('%s %s reads the same one byte at a time, and with CRLF line ends', async (kind, file, named) => {
    const body = sseBody(recordedChunks(file), named);
    const whole = await drain(build(kind, 'http://127.0.0.1:9', { fetch: splitFetch(body, body.length) }));
    const bytewise = await drain(build(kind, 'http://127.0.0.1:9', { fetch: splitFetch(body, 1) }));
    const crlf = body.replace(/\n/g, '\r\n');
    const crlfBytewise = await drain(build(kind, 'http://127.0.0.1:9', { fetch: splitFetch(crlf, 1) }));
    expect(finalOf(whole)).toBeDefined();
    for (const events of [bytewise, crlfBytewise]) {
      expect(events.filter((e) => e.type !== 'response')).toEqual(whole.filter((e) => e.type !== 'response'));
      expect(comparable(finalOf(events))).toEqual(comparable(finalOf(whole)));
    }
  });
});

describe.each(KINDS)('%s: keys, redirects, sizes, waits', (kind) => {
  it('a server echoing the key (retried 5xx, then a 4xx, then in a stream error event) never gets it into an error', async () => {
    const echo = await host((req, res, index) => {
      const key = String(req.headers.authorization ?? req.headers['x-goog-api-key']);
      if (index < 3) {
        res.writeHead(index < 2 ? 500 : 401, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ error: { message: `bad key ${key}` } }));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event =
        kind === 'responses'
          ? { type: 'error', error: { code: 'invalid_api_key', message: `bad key ${key}` } }
          : { error: { status: 'UNAUTHENTICATED', message: `bad key ${key}` } };
      res.end(`data: ${JSON.stringify(event)}\n\n`);
    });
    const error = await failure(build(kind, echo.url, { retry: { maxAttempts: 3, baseDelayMs: 1 } }).complete(request));
    expect(error).toBeInstanceOf(ModelHttpError);
    expect((error as ModelHttpError).status).toBe(401);
    expect(error.message).toContain('[redacted]');
    expect(allText(error)).not.toContain('CANARY');
    const streamed = await failure(drain(build(kind, echo.url)));
    expect(streamed).toBeInstanceOf(ModelError);
    expect(streamed.message).toContain('[redacted]');
    expect(allText(streamed)).not.toContain('CANARY');
    // The key travels in a header only, never in a URL a proxy or access log would keep.
    expect(echo.seen.every((req) => !(req.url ?? '').includes('CANARY'))).toBe(true);
  });

  it('a redirect is refused, naming the origin only; the target gets nothing', async () => {
    const thief = await host((_, res) => void res.end('{}'));
    const endpoint = await host((_, res) => {
      res.writeHead(307, { location: `${thief.url}/steal?token=x` });
      res.end();
    });
    const error = await failure(build(kind, endpoint.url, { retry: { maxAttempts: 3, baseDelayMs: 1 } }).complete(request));
    expect(error).toBeInstanceOf(ModelRedirectError);
    expect(error).toMatchObject({ status: 307, targetOrigin: thief.url });
    expect(error.message).not.toContain('steal');
    expect(thief.seen).toHaveLength(0);
    expect(endpoint.seen).toHaveLength(1);
  });

  it('a body over maxResponseBytes, and a stream event over maxEventBytes, end with ModelResponseTooLargeError', async () => {
    const big = await host((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"pad":"${'x'.repeat(2 * MB)}"}`);
    });
    await expect(build(kind, big.url, { maxResponseBytes: MB }).complete(request)).rejects.toMatchObject({ option: 'maxResponseBytes' });
    const drip = await host(async (_, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: ');
      while (!res.destroyed) {
        res.write('y'.repeat(16 * 1024));
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    const error = await failure(drain(build(kind, drip.url, { maxEventBytes: 256 * 1024 })));
    expect(error).toBeInstanceOf(ModelResponseTooLargeError);
    expect(error).toMatchObject({ option: 'maxEventBytes' });
  });

  it("waits out a 429's retry-after, then succeeds", async () => {
    const ok =
      kind === 'responses'
        ? { status: 'completed', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }] }
        : { candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP' }] };
    const server = await host((_, res, index) => {
      res.writeHead(index === 0 ? 429 : 200, { 'content-type': 'application/json', ...(index === 0 ? { 'retry-after': '1' } : {}) });
      res.end(JSON.stringify(index === 0 ? { error: { message: 'slow down' } } : ok));
    });
    const started = Date.now();
    const response = await build(kind, server.url, { retry: { maxAttempts: 3, baseDelayMs: 5 } }).complete(request);
    expect(response.text).toBe('ok');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.seen).toHaveLength(2);
  });

  it('a stream that goes quiet ends at the idle timeout', async () => {
    const quiet = await host((_, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': keep-alive\n\n');
    });
    const error = await failure(drain(build(kind, quiet.url, { timeoutMs: 300 })));
    expect(error).toBeInstanceOf(ModelTimeoutError);
  });
});

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

const INDICES: unknown[] = [0, 1, 3, 1e9, -1, 1.5, '0', null, undefined, {}];

/** One hostile event's data, for either API. */
function hostileData(kind: Kind, random: () => number, i: number): string {
  const kindOf = random();
  if (kindOf < 0.08) return '{not json';
  if (kindOf < 0.12) return JSON.stringify([1]);
  if (kindOf < 0.16)
    return kind === 'responses'
      ? JSON.stringify({ type: 'error', error: { message: `echo ${CANARY}` } })
      : JSON.stringify({ error: { message: `echo ${CANARY}` } });
  if (kind === 'responses') {
    const index = INDICES[Math.floor(random() * INDICES.length)];
    const events = [
      { type: 'response.output_text.delta', delta: 'x'.repeat(Math.floor(random() * 200)) },
      {
        type: 'response.output_item.added',
        output_index: index,
        item: { type: 'function_call', call_id: `c${i}`, name: random() < 0.8 ? 't' : '', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', output_index: index, delta: '{"a":1}'.slice(0, Math.floor(random() * 8)) },
      {
        type: 'response.output_item.done',
        output_index: index,
        item: random() < 0.9 ? { type: 'reasoning', id: `rs${i}`, encrypted_content: 'e', summary: [] } : 7,
      },
      { type: 'response.reasoning_summary_text.delta', delta: 'r' },
      {
        type: 'response.completed',
        response: random() < 0.8 ? { status: 'completed', output: [], usage: { input_tokens: 1 } } : { output: 'nope' },
      },
    ];
    return JSON.stringify(events[Math.floor(random() * events.length)]);
  }
  const parts = [
    { text: 'x'.repeat(Math.floor(random() * 200)) },
    { text: 'thinking', thought: true },
    { functionCall: { name: random() < 0.8 ? 't' : '', args: random() < 0.8 ? { a: 1 } : 'str' } },
    { text: '', thoughtSignature: 'c2ln' },
    7,
  ];
  const candidate: Record<string, unknown> = { content: { parts: [parts[Math.floor(random() * parts.length)]], role: 'model' } };
  if (random() < 0.2) candidate.finishReason = 'STOP';
  return JSON.stringify(
    random() < 0.9 ? { candidates: [candidate], usageMetadata: { promptTokenCount: 2 } } : { promptFeedback: { blockReason: 'OTHER' } },
  );
}

function hostileStream(kind: Kind, random: () => number): string {
  const eol = ['\n', '\r\n', '\r'][Math.floor(random() * 3)] as string;
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * 10);
  for (let i = 0; i < count; i++) {
    if (random() < 0.1) parts.push(`: ping${eol}`);
    parts.push(`data: ${hostileData(kind, random, i)}${eol}${eol}`);
  }
  if (random() < 0.2) parts.push('z'.repeat(3000));
  return parts.join('');
}

describe('hostile streamed responses (seeded fuzz)', () => {
  it.each(KINDS)('%s: every call answers or fails with a ModelError, never with the key', async (kind) => {
    let answered = 0;
    let failed = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const random = rng(seed * 7919 + (kind === 'gemini' ? 1 : 0));
      const body = hostileStream(kind, random);
      const model = build(kind, 'http://127.0.0.1:9', {
        maxEventBytes: 2048,
        maxResponseBytes: 32 * 1024,
        fetch: splitFetch(body, 1 + Math.floor(random() * 40)),
      });
      try {
        const events = await drain(model);
        answered++;
        const last = finalOf(events);
        expect(last).toBeDefined();
        for (const call of last?.toolCalls ?? []) expect(call.name).not.toBe('');
      } catch (error) {
        failed++;
        if (!(error instanceof ModelError)) throw new Error(`seed ${seed}: threw ${String(error)}`);
        expect(allText(error)).not.toContain('CANARY');
      }
    }
    expect(answered).toBeGreaterThan(0);
    expect(failed).toBeGreaterThan(0);
  });
});
