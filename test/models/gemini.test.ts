/**
 * GeminiModel + AgentRunner against a Gemini API server on 127.0.0.1, playing back real
 * recorded responses where they exist (test/fixtures/runner/recorded/PROVENANCE-responses-gemini.md).
 */
import { Toolkit, defineTool } from 'toolnexus-ts';
import { GeminiModel, ModelResponseError, type ModelStreamEvent } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent } from 'toolnexus-ts/agents';
import { json, sse, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { geminiJson, geminiStream } from '../fixtures/runner/provider-replies';
import { recordedBody, recordedChunks, recordedJson, recordedStream } from '../fixtures/runner/playback';

const KEY = 'AIzaSy-test-key-0123456789';
const servers: MockServer[] = [];
async function serve(replies: Reply | Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function model(server: MockServer, extra: Partial<ConstructorParameters<typeof GeminiModel>[0]> = {}): GeminiModel {
  return new GeminiModel({ baseUrl: server.url, apiKey: KEY, model: 'gemini-3-pro-preview', retry: { maxAttempts: 1 }, ...extra });
}

const CALL_JSON = 'gemini/google-tool-call-gemini3.json';
const CALL_CHUNKS = 'gemini/google-tool-call-gemini3.chunks.txt';
const TEXT_CHUNKS = 'gemini/google-text.chunks.txt';

function toolkit(): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'weather',
      description: 'Weather for a place',
      inputSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
      run: async (args) => {
        await new Promise((resolve) => setTimeout(resolve, args.location === 'Oslo' ? 40 : 1));
        return `${String(args.location)}: sunny`;
      },
    }),
  );
}

const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [] };

describe('GeminiModel in the loop (recorded responses)', () => {
  it('sends the recorded call back with its thought signature, and the result as a functionResponse; the key only in its header', async () => {
    const server = await serve([recordedBody(CALL_JSON), geminiJson([{ text: 'It is sunny in San Francisco.' }])]);
    const tools = toolkit();
    const runner = new AgentRunner({ model: model(server), toolkit: tools, systemPrompt: 'Be brief.' });

    const result = await runner.run('Weather in San Francisco?');

    expect(result.status).toBe('done');
    expect(result.text).toBe('It is sunny in San Francisco.');
    const [first, second] = server.requests;
    expect(first?.path).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
    expect(first?.headers['x-goog-api-key']).toBe(KEY);
    expect(server.requests.every((r) => !r.path.includes(KEY) && !r.raw.includes(KEY))).toBe(true);
    expect(first?.body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Weather in San Francisco?' }] }],
      tools: tools.toGemini(),
    });
    const recorded = recordedJson<{ candidates: Array<{ content: { parts: unknown[] } }> }>(CALL_JSON);
    expect(second?.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in San Francisco?' }] },
      { role: 'model', parts: recorded.candidates[0]?.content.parts },
      // The API sent no call id: none goes back (the runner's own id stays in the transcript).
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { output: 'San Francisco: sunny' } } }] },
    ]);
    const [call] = result.toolCalls;
    expect(call).toMatchObject({ name: 'weather', arguments: '{"location":"San Francisco"}' });
    expect(call?.id).toMatch(/^gemini_call_[0-9a-f]{24}$/);
    expect(result.messages.filter((m) => m.role === 'tool').map((m) => m.role === 'tool' && m.callId)).toEqual([call?.id]);
  });

  it('reads usage with thoughts and the finish reason from a recorded body', async () => {
    const server = await serve(recordedBody(CALL_JSON));
    const response = await model(server).complete(request);
    expect(response.usage).toEqual({ inputTokens: 29, outputTokens: 15 + 1801, reasoningTokens: 1801 });
    expect(response.stopReason).toBe('STOP');
    expect(response.items?.map((i) => [i.provider, i.type])).toEqual([['gemini', 'functionCall']]);
  });

  it('streams the recorded call (5 KB signature), then the recorded text answer whose signature rides an empty text part', async () => {
    const server = await serve([recordedStream(CALL_CHUNKS, false), recordedStream(TEXT_CHUNKS, false)]);
    const runner = new AgentRunner({ model: model(server), toolkit: toolkit() });
    const seen: string[] = [];
    let done: RunEvent | undefined;
    for await (const event of runner.stream('Weather?')) {
      seen.push(event.type === 'text' ? `text(${event.delta})` : event.type);
      if (event.type === 'done') done = event;
    }
    expect(server.requests[0]?.path).toBe('/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse');
    expect(server.requests[0]?.headers.accept).toBe('text/event-stream');
    expect(seen).toEqual(['tool_call', 'tool_result', 'text(There are **3**)', 'text( "r"s in strawberry.\n\nst**r**awbe**rr**y)', 'done']);
    const result = done?.type === 'done' ? done.result : undefined;
    expect(result?.text).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    const callChunk = JSON.parse(recordedChunks(CALL_CHUNKS)[0] as string) as {
      candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }>;
    };
    const callPart = callChunk.candidates[0]?.content.parts[0] as Record<string, unknown>;
    // The empty text part that closed the call's stream is dropped (the API refuses empty text); the signed call goes back as sent.
    expect(server.requests[1]?.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [callPart] },
      { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { output: 'San Francisco: sunny' } } }] },
    ]);
    // The answer's parts are kept as they came (plain text merged), the signature on its own empty part.
    const answer = result?.messages.at(-1);
    const textChunks = recordedChunks(TEXT_CHUNKS).map(
      (line) => JSON.parse(line) as { candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }> },
    );
    expect(answer?.role === 'assistant' && answer.items?.map((i) => i.data)).toEqual([
      { text: 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y' },
      textChunks[2]?.candidates[0]?.content.parts[0],
    ]);
  });

  it("waits out a 429's RetryInfo delay from the body, and gives up at once on the recorded 34.4 s one that would pass the deadline", async () => {
    const recorded = recordedJson<{ error: { details: Array<Record<string, unknown>> } }>('gemini/google-429-retry-info.json');
    // hand-written: the recorded body with a shorter retryDelay, so the test waits 0.4 s and not 34.
    const shorter = {
      error: { ...recorded.error, details: recorded.error.details.map((d) => ('retryDelay' in d ? { ...d, retryDelay: '0.4s' } : d)) },
    };
    const server = await serve([json(429, shorter), recordedBody(CALL_JSON)]);
    const started = Date.now();
    const retried = await model(server, { retry: { maxAttempts: 2, baseDelayMs: 5 } }).complete(request);
    expect(retried.toolCalls).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380); // the backoff alone would be ~5 ms

    const failing = await serve(recordedBody('gemini/google-429-retry-info.json', 429));
    const begun = Date.now();
    const error = await model(failing, { retry: { maxAttempts: 3, baseDelayMs: 5 }, deadlineMs: 5000 })
      .complete(request)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'TOOLNEXUS_MODEL_HTTP',
      status: 429,
      attempts: 1,
      message: 'gemini returned HTTP 429: You exceeded your current quota, please check your plan.',
    });
    expect(failing.requests).toHaveLength(1);
    expect(Date.now() - begun).toBeLessThan(3000);
  });
});

describe('GeminiModel (hand-written cases)', () => {
  it('gives parallel calls without ids distinct ids, and answers them in one user content, in call order', async () => {
    // hand-written: two calls in one turn, the first signed (as Gemini 3 signs the first call of a turn).
    const parts = [
      { functionCall: { name: 'weather', args: { location: 'Oslo' } }, thoughtSignature: 'c2lnLW9zbG8=' },
      { functionCall: { name: 'weather', args: { location: 'Lima' } } },
    ];
    const server = await serve([geminiJson(parts), geminiJson([{ text: 'Both sunny.' }])]);
    const result = await new AgentRunner({ model: model(server), toolkit: toolkit() }).run('Oslo and Lima?');
    const ids = result.toolCalls.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    expect(server.requests[1]?.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Oslo and Lima?' }] },
      { role: 'model', parts },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'weather', response: { output: 'Oslo: sunny' } } },
          { functionResponse: { name: 'weather', response: { output: 'Lima: sunny' } } },
        ],
      },
    ]);
  });

  it('keeps ids the API did send, and sends them back on calls and responses', async () => {
    const parts = [{ functionCall: { id: 'fc-1', name: 'weather', args: { location: 'Rome' } } }];
    const server = await serve([geminiJson(parts), geminiJson([{ text: 'ok' }])]);
    const result = await new AgentRunner({ model: model(server), toolkit: toolkit() }).run('Rome?');
    expect(result.toolCalls.map((c) => c.id)).toEqual(['fc-1']);
    // No signature and no thoughts: the turn is rebuilt from the transcript.
    expect(server.requests[1]?.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Rome?' }] },
      { role: 'model', parts: [{ functionCall: { id: 'fc-1', name: 'weather', args: { location: 'Rome' } } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'fc-1', name: 'weather', response: { output: 'Rome: sunny' } } }] },
    ]);
  });

  it('streams thought summaries as reasoning events, not as text, and keeps them for the next turn', async () => {
    const server = await serve(
      geminiStream([{ text: 'Thinking about it.', thought: true }, { text: 'Answer.' }, { text: '', thoughtSignature: 'c2ln' }]),
    );
    const events: ModelStreamEvent[] = [];
    for await (const event of model(server).stream(request)) events.push(event);
    expect(events.slice(0, 2)).toEqual([
      { type: 'reasoning', delta: 'Thinking about it.' },
      { type: 'text', delta: 'Answer.' },
    ]);
    const last = events.at(-1);
    expect(last?.type === 'response' && last.response.text).toBe('Answer.');
    expect(last?.type === 'response' && last.response.items?.map((i) => i.type)).toEqual(['thought', 'text', 'text']);
  });

  it('an error body, an error event in a stream, a blocked prompt and a stream without a finish reason are clear errors', async () => {
    const server = await serve([
      json(400, { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } }),
      sse([{ data: { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } } }]),
      json(200, { promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 3 } }),
      sse([{ data: { candidates: [{ content: { parts: [{ text: 'Hel' }], role: 'model' }, index: 0 }] } }]),
    ]);
    await expect(model(server, { retry: { maxAttempts: 3, baseDelayMs: 5 } }).complete(request)).rejects.toMatchObject({
      code: 'TOOLNEXUS_MODEL_HTTP',
      status: 400,
      attempts: 1,
      providerMessage: 'Invalid JSON payload received.',
    });
    const drain = async () => {
      for await (const _ of model(server).stream(request)) void _;
    };
    await expect(drain()).rejects.toThrow(
      'gemini sent an unreadable response: the provider reported an error: INTERNAL: Internal error encountered.',
    );
    await expect(model(server).complete(request)).rejects.toThrow('the prompt was blocked: SAFETY');
    await expect(drain()).rejects.toThrow(ModelResponseError);
    expect(server.requests.every((r) => !r.path.includes(KEY))).toBe(true);
  });

  it('takes params into the body and a full model path; refuses a model name that would change the URL', async () => {
    const server = await serve(geminiJson([{ text: 'ok' }]));
    await model(server, {
      model: 'models/gemini-2.5-flash',
      apiVersion: 'v1',
      params: { generationConfig: { thinkingConfig: { includeThoughts: true } } },
    }).complete(request);
    expect(server.requests[0]?.path).toBe('/v1/models/gemini-2.5-flash:generateContent');
    expect(server.requests[0]?.body).toEqual({
      generationConfig: { thinkingConfig: { includeThoughts: true } },
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    });
    for (const bad of ['../x', 'gemini?key=1', 'models/a/b', 'a#b'])
      expect(() => new GeminiModel({ apiKey: KEY, model: bad })).toThrow('GeminiModel: model must be a name like gemini-2.5-flash');
    expect(() => new GeminiModel({ apiKey: KEY, model: 'm', apiVersion: 'v1/../x' })).toThrow('apiVersion');
    expect(() => new GeminiModel({ model: 'm' } as unknown as ConstructorParameters<typeof GeminiModel>[0])).toThrow(
      'GeminiModel needs an apiKey',
    );
  });
});
