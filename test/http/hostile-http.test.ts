/**
 * The HTTP models against hostile servers on 127.0.0.1 (issue 10): keys that are not
 * header values, servers that echo the key, redirect elsewhere, send huge bodies, never
 * stop streaming, drip bytes without a line end, or send absurd tool-call indices.
 * Each server lives in this file; nothing leaves loopback.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { getEventListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Toolkit, defineTool, pending, InvalidArgumentError } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import {
  AnthropicModel,
  ModelHttpError,
  ModelRedirectError,
  ModelRequestError,
  ModelResponseError,
  ModelResponseTooLargeError,
  ModelTimeoutError,
  OpenAIChatModel,
  type ChatModel,
  type ModelStreamEvent,
} from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { readSse } from '../../src/http/sse';
import { overEachTransport, transport } from '../fixtures/runner/transports';

const CANARY = 'sk-live-CANARY0123456789abcdef';
const MB = 1024 * 1024;

interface Seen {
  url: string;
  headers: IncomingMessage['headers'];
}
interface Host {
  url: string;
  seen: Seen[];
  server: Server;
}

const hosts: Host[] = [];
async function host(handler: (req: IncomingMessage, res: ServerResponse, index: number) => void | Promise<void>): Promise<Host> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      void Promise.resolve(handler(req, res, seen.length - 1)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const created = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
  hosts.push(created);
  return created;
}
afterEach(async () => {
  for (const { server } of hosts.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

function openai(url: string, extra: Partial<ConstructorParameters<typeof OpenAIChatModel>[0]> = {}): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: `${url}/v1`, apiKey: CANARY, model: 'm', retry: { maxAttempts: 1 }, ...transport.via, ...extra });
}

async function drain(model: ChatModel): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = [];
  for await (const event of model.stream?.(request) ?? []) events.push(event);
  return events;
}

/** Rejects after `ms`, so a test of code that never ends fails fast instead of hanging. */
function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms)));
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/** Every string reachable from an error: message, fields, causes. */
function allText(error: unknown, depth = 0): string {
  if (depth > 4 || typeof error !== 'object' || error === null) return String(error);
  const parts = [String((error as Error).message), String((error as Error).stack)];
  for (const key of Object.keys(error)) parts.push(allText((error as Record<string, unknown>)[key], depth + 1));
  parts.push(allText((error as { cause?: unknown }).cause, depth + 1));
  return parts.join('\n');
}

/** Resolves once `res` can take more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Writes `total` bytes of `fill` in 1 MiB chunks, honouring back-pressure; stops when the client goes. */
async function pour(res: ServerResponse, total: number, fill = 'x'): Promise<number> {
  const chunk = Buffer.alloc(MB, fill);
  let sent = 0;
  while (sent < total && !res.destroyed) {
    if (!res.write(chunk)) await drained(res);
    sent += MB;
  }
  res.end();
  return sent;
}

overEachTransport(() => {
  describe('API keys', () => {
    it.each([
      ['CR LF', `${CANARY}\r\nx-injected: 1`],
      ['LF', `${CANARY}\n`],
      ['NUL', `${CANARY}\0`],
      ['a non-ASCII character', `${CANARY}é`],
    ])('a key containing %s is refused when the model is built, without quoting it', (_, key) => {
      for (const build of [
        () => new OpenAIChatModel({ ...transport.via, baseUrl: 'http://127.0.0.1:9/v1', apiKey: key, model: 'm' }),
        () => new AnthropicModel({ ...transport.via, baseUrl: 'http://127.0.0.1:9', apiKey: key, model: 'm' }),
      ]) {
        let thrown: unknown;
        try {
          build();
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(InvalidArgumentError);
        expect((thrown as Error).message).toMatch(/apiKey contains a character not allowed/);
        expect(allText(thrown)).not.toContain('CANARY');
      }
    });

    it('an extra header with a line break and a bad base URL are refused at construction, values unquoted', () => {
      expect(() => openai('http://127.0.0.1:9', { headers: { 'x-gateway-key': `${CANARY}\r\n` } })).toThrow(
        /header "x-gateway-key" contains a character/,
      );
      expect(() => new OpenAIChatModel({ ...transport.via, baseUrl: `not a url ${CANARY}`, model: 'm' })).toThrow(InvalidArgumentError);
      try {
        new OpenAIChatModel({ ...transport.via, baseUrl: `not a url ${CANARY}`, model: 'm' });
      } catch (error) {
        expect(allText(error)).not.toContain('CANARY');
      }
    });

    it('a request fetch refuses locally is one attempt, not three "connection" retries, and its message drops the value', async () => {
      let calls = 0;
      const fetch = (async () => {
        calls++;
        throw new TypeError(`Headers.append: "Bearer ${CANARY}" is an invalid header value.`);
      }) as unknown as typeof globalThis.fetch;
      const model = openai('http://127.0.0.1:9', { fetch, retry: { maxAttempts: 3, baseDelayMs: 1 } });
      const error = await failure(model.complete(request));
      expect(error).toBeInstanceOf(ModelRequestError);
      expect(calls).toBe(1);
      expect(allText(error)).not.toContain('CANARY');
    });

    it('a server echoing the key in its error body (retried 5xx, then a 401) never gets it into an error', async () => {
      const echo = await host((req, res, index) => {
        res.writeHead(index < 2 ? 500 : 401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `bad key ${String(req.headers.authorization ?? req.headers['x-api-key'])}` } }));
      });
      const error = await failure(openai(echo.url, { retry: { maxAttempts: 3, baseDelayMs: 1 } }).complete(request));
      expect(error).toBeInstanceOf(ModelHttpError);
      expect((error as ModelHttpError).status).toBe(401);
      expect(error.message).toContain('[redacted]');
      expect(allText(error)).not.toContain('CANARY');
      const streamed = await failure(
        drain(new AnthropicModel({ ...transport.via, baseUrl: echo.url, apiKey: CANARY, model: 'm', retry: { maxAttempts: 1 } })),
      );
      expect(allText(streamed)).not.toContain('CANARY');
    });
  });

  describe('a key echoed back never reaches a checkpoint', () => {
    it('a failed resume stores state.error with the key redacted, and throws it redacted', async () => {
      const server = await host((req, res, index) => {
        if (index === 0) {
          res.writeHead(200, { 'content-type': 'application/json' });
          const call = { id: 'call_1', type: 'function', function: { name: 'approve', arguments: '{}' } };
          return void res.end(
            JSON.stringify({ choices: [{ message: { content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }] }),
          );
        }
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `invalid key: ${String(req.headers.authorization)}` } }));
      });
      const toolkit = new Toolkit().register(
        defineTool({
          name: 'approve',
          description: 'Asks a human',
          inputSchema: { type: 'object' },
          run: (_, ctx) => (ctx?.answer ? 'approved' : pending({ kind: 'approval', prompt: 'ok?' })),
        }),
      );
      const store = new MemoryStore();
      const runner = new AgentRunner({ model: openai(server.url), toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
      const halted = await runner.run('go', { runId: 'run-canary' });
      expect(halted.status).toBe('halted');
      const error = await failure(runner.resume({ id: halted.pending?.id as string, ok: true }));
      expect(error.message).toContain('[redacted]');
      expect(allText(error)).not.toContain('CANARY');
      const saved = await store.loadRun('run-canary');
      expect(saved?.state).toMatchObject({ phase: 'failed', error: expect.stringContaining('invalid key: [redacted]') as unknown });
      expect(JSON.stringify(saved)).not.toContain('CANARY');
    });
  });

  describe('redirects', () => {
    it.each(['openai', 'anthropic'])(
      '%s: a 307 to another origin is refused, naming the status and the origin only; the target gets nothing',
      async (kind) => {
        const thief = await host((_, res) => {
          res.end('{}');
        });
        const endpoint = await host((_, res) => {
          res.writeHead(307, { location: `${thief.url}/steal?token=secret-path` });
          res.end();
        });
        const model =
          kind === 'openai'
            ? openai(endpoint.url)
            : new AnthropicModel({
                ...transport.via,
                baseUrl: endpoint.url,
                apiKey: CANARY,
                model: 'm',
                retry: { maxAttempts: 3, baseDelayMs: 1 },
              });
        const error = await failure(model.complete(request));
        expect(error).toBeInstanceOf(ModelRedirectError);
        expect(error).toMatchObject({ status: 307, targetOrigin: thief.url });
        expect(error.message).toContain(`HTTP 307`);
        expect(error.message).toContain(thief.url);
        expect(error.message).not.toContain('steal');
        expect(allText(error)).not.toContain('CANARY');
        expect(thief.seen).toHaveLength(0);
        expect(endpoint.seen).toHaveLength(1);
      },
    );

    it('a same-origin redirect is refused too (point baseUrl at the final URL)', async () => {
      const endpoint = await host((req, res) => {
        if (req.url === '/moved') return void res.end(JSON.stringify({ choices: [{ message: { content: 'hijacked' } }] }));
        res.writeHead(301, { location: '/moved' });
        res.end();
      });
      const error = await failure(openai(endpoint.url).complete(request));
      expect(error).toMatchObject({ code: 'TOOLNEXUS_MODEL_REDIRECT', status: 301, targetOrigin: endpoint.url });
      expect(endpoint.seen).toHaveLength(1);
    });
  });

  describe('response size caps', () => {
    it('a 600 MB body from a generator is refused after maxResponseBytes (default 32 MiB), RSS far below it', async () => {
      const big = await host(async (_, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        await pour(res, 600 * MB);
      });
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
      const started = performance.now();
      const error = await within(9000, failure(openai(big.url).complete(request))).finally(() => clearInterval(sampler));
      const wall = performance.now() - started;
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(error).toBeInstanceOf(ModelResponseTooLargeError);
      expect(error).toMatchObject({ limitBytes: 32 * MB, option: 'maxResponseBytes' });
      expect(peak - before).toBeLessThan(200 * MB);
      expect(wall).toBeLessThan(5000);
    }, 12_000);

    it('a declared content-length over the cap is refused before reading; a stream over it too', async () => {
      const declared = await host((_, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2 * MB) });
        res.end('{}');
      });
      await expect(openai(declared.url, { maxResponseBytes: MB }).complete(request)).rejects.toBeInstanceOf(ModelResponseTooLargeError);
      const streaming = await host(async (_, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = `data: ${JSON.stringify({ choices: [{ delta: { content: 'y'.repeat(1000) } }] })}\n\n`;
        while (!res.destroyed) if (!res.write(event)) await drained(res);
      });
      const error = await within(9000, failure(drain(openai(streaming.url, { maxResponseBytes: 2 * MB }))));
      expect(error).toMatchObject({ code: 'TOOLNEXUS_MODEL_RESPONSE_TOO_LARGE', what: 'a stream', limitBytes: 2 * MB });
    });

    it('a small gzip body that inflates past the cap is refused: the cap counts what is decoded, not what was declared', async () => {
      const bomb = gzipSync(Buffer.alloc(8 * MB, 0x20)); // 8 MiB of spaces: a few KiB on the wire
      const zipped = await host((_, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
        res.end(bomb);
      });
      expect(bomb.length).toBeLessThan(MB);
      const error = await failure(openai(zipped.url, { maxResponseBytes: MB }).complete(request));
      expect(error).toMatchObject({ code: 'TOOLNEXUS_MODEL_RESPONSE_TOO_LARGE', limitBytes: MB });
    });

    it('a 400 MB error body is read up to maxErrorBodyBytes (default 64 KiB) on each of its retries, not buffered', async () => {
      const sent: number[] = [];
      const big = await host(async (_, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        sent.push(await pour(res, 400 * MB, 'e'));
      });
      global.gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
      const started = performance.now();
      const error = await within(9000, failure(openai(big.url, { retry: { maxAttempts: 3, baseDelayMs: 1 } }).complete(request))).finally(
        () => clearInterval(sampler),
      );
      peak = Math.max(peak, process.memoryUsage().rss);
      expect(error).toBeInstanceOf(ModelHttpError);
      expect(error).toMatchObject({ status: 500, attempts: 3 });
      // The provider's message is the start of the body, shortened for the message.
      expect((error as ModelHttpError).providerMessage).toMatch(/^e{500}\.\.\.$/);
      expect(big.seen).toHaveLength(3);
      expect(peak - before).toBeLessThan(150 * MB);
      expect(performance.now() - started).toBeLessThan(5000);
    }, 12_000);
  });

  describe('streams are bounded in time and size', () => {
    it('deadlineMs ends a stream that never stops sending (each chunk used to restart the timer)', async () => {
      const endless = await host(async (_, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        while (!res.destroyed) {
          res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: '.' } }] })}\n\n`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      });
      const started = performance.now();
      const error = await within(8000, failure(drain(openai(endless.url, { timeoutMs: 5000, deadlineMs: 1500 }))));
      const wall = performance.now() - started;
      expect(error).toBeInstanceOf(ModelTimeoutError);
      expect(error.message).toContain('within 1500 ms');
      expect(wall).toBeGreaterThanOrEqual(1400);
      expect(wall).toBeLessThan(3000);
    });

    it('a server dripping bytes without a line end is stopped at maxEventBytes, with memory bounded', async () => {
      const drip = await host(async (_, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: ');
        const piece = 'x'.repeat(16 * 1024);
        while (!res.destroyed) {
          if (!res.write(piece)) await drained(res);
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
      const before = process.memoryUsage().rss;
      const started = performance.now();
      const error = await within(8000, failure(drain(openai(drip.url, { maxEventBytes: MB }))));
      expect(error).toBeInstanceOf(ModelResponseTooLargeError);
      expect(error).toMatchObject({ what: 'a stream line', limitBytes: MB, option: 'maxEventBytes' });
      expect(performance.now() - started).toBeLessThan(3000);
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * MB);
    });

    it('an event of many short data lines is capped as a whole', async () => {
      const lines = await host(async (_, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        while (!res.destroyed) if (!res.write('data: 0123456789\n'.repeat(1000))) await drained(res);
      });
      const error = await within(8000, failure(drain(openai(lines.url, { maxEventBytes: MB }))));
      expect(error).toMatchObject({ code: 'TOOLNEXUS_MODEL_RESPONSE_TOO_LARGE', what: 'a stream event' });
    });

    it('a line split over thousands of chunks is scanned once, not once per chunk', async () => {
      const chunks = 8000;
      const piece = new TextEncoder().encode('x'.repeat(256));
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('data: '));
          for (let i = 0; i < chunks; i++) controller.enqueue(piece);
          controller.enqueue(new TextEncoder().encode('\n\n'));
          controller.close();
        },
      });
      const started = performance.now();
      const events = [];
      for await (const event of readSse(body)) events.push(event);
      expect(events).toHaveLength(1);
      expect(events[0]?.data.length).toBe(chunks * 256);
      expect(performance.now() - started).toBeLessThan(1000);
    });
  });

  describe('streamed OpenAI tool-call indices', () => {
    function toolStream(parts: Array<Record<string, unknown>>): (req: IncomingMessage, res: ServerResponse) => void {
      return (_, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const part of parts) res.write(`data: ${JSON.stringify({ choices: [{ delta: { tool_calls: [part] } }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] })}\n\n`);
        res.end('data: [DONE]\n\n');
      };
    }

    it('index 1e9 is one call, found at once (it used to build a 1e9-slot array)', async () => {
      const server = await host(toolStream([{ index: 1e9, id: 'call_1', function: { name: 'weather', arguments: '{}' } }]));
      const started = performance.now();
      const events = await within(8000, drain(openai(server.url)));
      expect(performance.now() - started).toBeLessThan(1000);
      const last = events.at(-1);
      expect(last?.type === 'response' && last.response.toolCalls).toEqual([{ id: 'call_1', name: 'weather', arguments: '{}' }]);
    });

    it.each([-1, 1.5, 1e300, '0'])('index %p is a clear error, not a silently dropped call', async (index) => {
      const server = await host(toolStream([{ index, id: 'call_1', function: { name: 'weather', arguments: '{}' } }]));
      const started = performance.now();
      const error = await within(8000, failure(drain(openai(server.url))));
      expect(error).toBeInstanceOf(ModelResponseError);
      expect(error.message).toContain('index');
      expect(performance.now() - started).toBeLessThan(1000);
    });

    it('sparse and out-of-order indices give the calls in index order', async () => {
      const server = await host(
        toolStream([
          { index: 7, id: 'call_b', function: { name: 'b', arguments: '{"x"' } },
          { index: 2, id: 'call_a', function: { name: 'a', arguments: '{}' } },
          { index: 7, function: { arguments: ':1}' } },
        ]),
      );
      const events = await drain(openai(server.url));
      const last = events.at(-1);
      expect(last?.type === 'response' && last.response.toolCalls).toEqual([
        { id: 'call_a', name: 'a', arguments: '{}' },
        { id: 'call_b', name: 'b', arguments: '{"x":1}' },
      ]);
    });
  });

  describe('a long-lived caller signal', () => {
    it('holds nothing per call once the call is over (AbortSignal.any kept a dependent signal per call on Node 20)', async () => {
      const body = JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] });
      const fetch = (async () => new Response(body, { headers: { 'content-type': 'application/json' } })) as typeof globalThis.fetch;
      const model = openai('http://127.0.0.1:9', { fetch });
      const controller = new AbortController();
      for (let i = 0; i < 2000; i++) await model.complete({ ...request, signal: controller.signal });
      const dependants = Object.getOwnPropertySymbols(controller.signal).find((symbol) => /dependant|dependent/i.test(String(symbol)));
      const held =
        dependants === undefined ? 0 : ((controller.signal as unknown as Record<symbol, Set<unknown> | undefined>)[dependants]?.size ?? 0);
      expect(held).toBe(0);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });
  });

  describe('timeouts beyond setTimeout’s range', () => {
    it.each([2 ** 31, 2 ** 40, Number.POSITIVE_INFINITY])('timeoutMs / deadlineMs %p do not fire early or spin', async (ms) => {
      const slow = await host(async (_, res) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }));
      });
      // The bug was a timer re-armed every millisecond (setTimeout turns a delay over 2^31-1 into 1 ms).
      const spy = jest.spyOn(global, 'setTimeout');
      let armed: unknown[][] = [];
      try {
        const response = await openai(slow.url, { timeoutMs: ms, deadlineMs: ms }).complete(request);
        expect(response.text).toBe('ok');
        armed = [...spy.mock.calls];
      } finally {
        spy.mockRestore();
      }
      expect(armed.length).toBeGreaterThan(0);
      expect(armed.length).toBeLessThan(10);
      // Node turns any delay over 2^31-1 into 1 ms (with a TimeoutOverflowWarning): none may be asked for.
      expect(armed.map(([, delay]) => Number(delay ?? 0)).filter((delay) => delay > 2 ** 31 - 1)).toEqual([]);
    });
  });
});
