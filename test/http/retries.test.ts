/**
 * Retries, timeouts and clear failures of the HTTP models, over real HTTP on 127.0.0.1.
 */
import { createServer } from 'node:net';
import { InvalidArgumentError } from 'toolnexus-ts';
import {
  AnthropicModel,
  GeminiModel,
  ModelConnectionError,
  ModelHttpError,
  ModelResponseError,
  ModelTimeoutError,
  OpenAIChatModel,
  OpenAIResponsesModel,
  type AnthropicModelOptions,
  type OpenAIChatModelOptions,
} from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import {
  anthropicText,
  dropConnection,
  hang,
  json,
  openaiStream,
  openaiText,
  startMockServer,
  type MockServer,
  type Reply,
} from '../fixtures/runner/mock-servers';
import { weatherToolkit } from '../fixtures/runner/tools';
import { overEachTransport, transport } from '../fixtures/runner/transports';
import { FakeClock, until } from '../fixtures/fake-clock';

const servers: MockServer[] = [];
async function serve(replies: Reply | Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function openai(server: MockServer | string, options: Partial<OpenAIChatModelOptions> = {}): OpenAIChatModel {
  const url = typeof server === 'string' ? server : server.url;
  return new OpenAIChatModel({ baseUrl: url, model: 'm', retry: { maxAttempts: 3, baseDelayMs: 5 }, ...transport.via, ...options });
}

function run(model: OpenAIChatModel | AnthropicModel, signal?: AbortSignal) {
  return new AgentRunner({ model, toolkit: weatherToolkit() }).run('hi', { signal });
}

async function timed<T>(work: () => Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> {
  const started = Date.now();
  try {
    const value = await work();
    return { value, ms: Date.now() - started };
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
}

overEachTransport(() => {
  describe('retries', () => {
    // The waits run on a fake clock (HttpModelOptions.clock): each test checks what the model
    // waits for, and that it asks again only once that much time has passed, without waiting it.
    async function waitsOut(reply: Reply, ms: number, now = Date.UTC(2030, 0, 1)): Promise<void> {
      const clock = new FakeClock(now);
      const server = await serve([reply, openaiText('ok')]);
      const result = run(openai(server, { clock }));
      await until(() => clock.timers.length === 1);
      expect(clock.timers[0]?.ms).toBe(ms);
      clock.advance(ms - 1);
      expect(clock.timers).toHaveLength(1);
      expect(server.requests).toHaveLength(1);
      clock.advance(1);
      expect((await result).text).toBe('ok');
      expect(server.requests).toHaveLength(2);
    }

    it('waits out a 429 for its retry-after, then succeeds', async () => {
      // The backoff alone would be ~5 ms: the wait is the server's second.
      await waitsOut(json(429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '1' }), 1000);
    });

    it('honours retry-after-ms too', async () => {
      await waitsOut(json(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '300', 'retry-after': '30' }), 300);
    });

    it('honours retry-after given as an HTTP date, read against the clock', async () => {
      const now = Date.UTC(2030, 0, 1, 12, 0, 0);
      const at = new Date(now + 2000).toUTCString();
      await waitsOut(json(503, { error: { message: 'maintenance' } }, { 'retry-after': at }), 2000, now);
    });

    it('gives up at once when retry-after would pass the deadline', async () => {
      const server = await serve([json(429, { error: { message: 'quota' } }, { 'retry-after': '60' }), openaiText('never')]);
      const { error, ms } = await timed(() => run(openai(server, { deadlineMs: 2000 })));
      expect(error).toBeInstanceOf(ModelHttpError);
      expect((error as Error).message).toBe('openai returned HTTP 429: quota');
      expect(server.requests).toHaveLength(1);
      expect(ms).toBeLessThan(5000);
    });

    it('ends a persistent 500 after maxAttempts, saying how many', async () => {
      const server = await serve(json(500, { error: { message: 'upstream exploded' } }));
      const { error } = await timed(() => run(openai(server, { retry: { maxAttempts: 4, baseDelayMs: 5 } })));
      expect(error).toBeInstanceOf(ModelHttpError);
      expect(error).toMatchObject({ status: 500, attempts: 4, providerMessage: 'upstream exploded' });
      expect((error as Error).message).toBe('openai returned HTTP 500: upstream exploded (after 4 attempts)');
      expect(server.requests).toHaveLength(4);
    });

    it('retries an Anthropic 529 (overloaded), then succeeds', async () => {
      const server = await serve([
        json(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
        anthropicText('fine'),
      ]);
      const model = new AnthropicModel({ ...transport.via, baseUrl: server.url, apiKey: 'k', model: 'c', retry: { baseDelayMs: 5 } });
      const result = await run(model);
      expect(result.text).toBe('fine');
      expect(server.requests).toHaveLength(2);
    });

    it('retries a dropped connection (network error), then succeeds', async () => {
      const server = await serve([dropConnection, openaiText('back')]);
      const result = await run(openai(server));
      expect(result.text).toBe('back');
      expect(server.requests).toHaveLength(2);
    });

    it('ends with ModelConnectionError when nothing listens', async () => {
      const port = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const { port: free } = probe.address() as { port: number };
          probe.close(() => resolve(free));
        });
      });
      const error = await run(openai(`http://127.0.0.1:${port}`, { retry: { maxAttempts: 2, baseDelayMs: 5 } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelConnectionError);
      expect((error as Error).message).toMatch(/^openai could not be reached: ECONNREFUSED .* \(after 2 attempts\)$/);
    });

    it('names every address an unreachable host was tried at (an AggregateError cause has no message of its own)', async () => {
      // What undici throws when "localhost" resolves to ::1 and 127.0.0.1 and both refuse.
      const refused = Object.assign(
        new AggregateError([new Error('connect ECONNREFUSED ::1:9'), new Error('connect ECONNREFUSED 127.0.0.1:9')], ''),
        { code: 'ECONNREFUSED' },
      );
      const fetch = (() => Promise.reject(new TypeError('fetch failed', { cause: refused }))) as typeof globalThis.fetch;
      const error = await run(openai('http://localhost:9', { fetch, retry: { maxAttempts: 1 } })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelConnectionError);
      expect((error as Error).message).toBe(
        'openai could not be reached: ECONNREFUSED (connect ECONNREFUSED ::1:9; connect ECONNREFUSED 127.0.0.1:9)',
      );
      expect((error as Error).cause).toBeInstanceOf(TypeError);
    });

    it('retries a 429 before a stream starts, then streams', async () => {
      const server = await serve([json(429, { error: { message: 'busy' } }, { 'retry-after-ms': '10' }), openaiStream(['str', 'eamed'])]);
      const runner = new AgentRunner({ model: openai(server), toolkit: weatherToolkit() });
      const deltas: string[] = [];
      for await (const event of runner.stream('x')) if (event.type === 'text') deltas.push(event.delta);
      expect(deltas).toEqual(['str', 'eamed']);
      expect(server.requests).toHaveLength(2);
    });

    it('stops waiting between attempts as soon as the caller aborts', async () => {
      const server = await serve(json(503, { error: { message: 'down' } }, { 'retry-after': '30' }));
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user gave up')), 150);
      const { error, ms } = await timed(() => run(openai(server, { deadlineMs: 60_000 }), controller.signal));
      expect((error as Error).message).toBe('user gave up');
      expect(ms).toBeLessThan(5000);
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('failing at once', () => {
    it.each([
      [400, 'Invalid value for messages'],
      [401, 'Incorrect API key provided'],
      [402, 'Insufficient credits'],
      [403, 'Model not allowed for this key'],
    ])('fails at once on %i with the status and the provider message', async (status, message) => {
      const server = await serve(json(status, { error: { message, type: 'invalid_request_error' } }));
      const { error, ms } = await timed(() => run(openai(server, { retry: { maxAttempts: 5, baseDelayMs: 1000 } })));
      expect(error).toBeInstanceOf(ModelHttpError);
      expect(error).toMatchObject({ status, providerMessage: message, attempts: 1 });
      expect((error as Error).message).toBe(`openai returned HTTP ${status}: ${message}`);
      expect(server.requests).toHaveLength(1);
      expect(ms).toBeLessThan(3000);
    });

    it('uses a plain-text error body as the message', async () => {
      const server = await serve((res) => {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such route: /chat/completions');
      });
      await expect(run(openai(server))).rejects.toThrow('openai returned HTTP 404: no such route: /chat/completions');
      expect(server.requests).toHaveLength(1);
    });

    it('gives a clear error for a garbage 200 body, without retrying', async () => {
      const server = await serve((res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>Gateway says hello</html>');
      });
      const error = await run(openai(server)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelResponseError);
      expect((error as Error).message).toBe(
        'openai sent an unreadable response: the body is not JSON (body starts: "<html>Gateway says hello</html>")',
      );
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('cancellation', () => {
    it("aborts a model call in flight with the run's signal, rejecting with its reason", async () => {
      const server = await serve(hang);
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('user pressed stop')), 100);
      const { error, ms } = await timed(() => run(openai(server, { timeoutMs: 30_000 }), controller.signal));
      expect((error as Error).message).toBe('user pressed stop');
      expect(ms).toBeLessThan(5000);
      expect(server.requests).toHaveLength(1);
    });
  });

  describe('timeouts', () => {
    it('ends a call to a hanging server at its timeout', async () => {
      const server = await serve(hang);
      const { error, ms } = await timed(() => run(openai(server, { timeoutMs: 300, retry: { maxAttempts: 1 } })));
      expect(error).toBeInstanceOf(ModelTimeoutError);
      expect((error as Error).message).toBe('openai did not answer within 300 ms');
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(ms).toBeLessThan(5000);
    });

    it('bounds retries of a hanging server by the deadline', async () => {
      const server = await serve(hang);
      const { error, ms } = await timed(() =>
        run(openai(server, { timeoutMs: 250, deadlineMs: 600, retry: { maxAttempts: 10, baseDelayMs: 5 } })),
      );
      expect(error).toBeInstanceOf(ModelTimeoutError);
      expect(ms).toBeLessThan(2400);
      expect(server.requests.length).toBeGreaterThanOrEqual(2);
      expect(server.requests.length).toBeLessThanOrEqual(4);
    });

    it('ends a response whose body never finishes at the timeout', async () => {
      const server = await serve((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"choices": [');
      });
      const { error, ms } = await timed(() => run(openai(server, { timeoutMs: 300, retry: { maxAttempts: 1 } })));
      expect(error).toBeInstanceOf(ModelTimeoutError);
      expect(ms).toBeLessThan(5000);
    });

    it('ends a stream that goes quiet at the idle timeout, after what it already sent', async () => {
      const server = await serve((res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'partial' } }] })}\n\n`);
      });
      const runner = new AgentRunner({ model: openai(server, { timeoutMs: 300, retry: { maxAttempts: 1 } }), toolkit: weatherToolkit() });
      const deltas: string[] = [];
      const consume = async () => {
        for await (const event of runner.stream('x')) if (event.type === 'text') deltas.push(event.delta);
      };
      const { error, ms } = await timed(consume);
      expect(error).toBeInstanceOf(ModelTimeoutError);
      expect(deltas).toEqual(['partial']);
      expect(ms).toBeLessThan(5000);
    });
  });
});

describe('configuration', () => {
  it('rejects nonsense settings at construction', () => {
    expect(() => new OpenAIChatModel({ baseUrl: 'http://127.0.0.1:1', model: 'm', retry: { maxAttempts: 0 } })).toThrow(
      'retry.maxAttempts must be an integer >= 1, got 0',
    );
    expect(() => new OpenAIChatModel({ baseUrl: 'http://127.0.0.1:1', model: 'm', timeoutMs: -1 })).toThrow(
      'timeoutMs must be a finite number >= 0, got -1',
    );
    // Every HTTP model checks the options they share the same way (src/models/core.ts).
    for (const make of [
      () => new OpenAIChatModel({ baseUrl: '', model: 'm' }),
      () => new OpenAIResponsesModel({ baseUrl: '', model: 'm' }),
      () => new AnthropicModel({ baseUrl: '', apiKey: 'k', model: 'm' }),
      () => new GeminiModel({ baseUrl: '', apiKey: 'k', model: 'm' }),
      () => new GeminiModel({ provider: '', apiKey: 'k', model: 'm' }),
    ])
      expect(make).toThrow(InvalidArgumentError);
    expect(new OpenAIChatModel({ model: 'm' }).provider).toBe('openai');
    expect(new GeminiModel({ provider: 'vertex-proxy', apiKey: 'k', model: 'm' }).provider).toBe('vertex-proxy');
    expect(() => new AnthropicModel({ apiKey: 'k', model: '' })).toThrow('AnthropicModel needs a model');
    expect(() => new AnthropicModel({ model: 'c' } as unknown as AnthropicModelOptions)).toThrow(InvalidArgumentError);
    expect(() => new OpenAIChatModel({ baseUrl: 'http://127.0.0.1:1', model: 'm', deadlineMs: Number.NaN })).toThrow(
      'deadlineMs must be a finite number >= 0, got NaN',
    );
  });
});
