/**
 * OpenAIResponsesModel + AgentRunner against a Responses API server on 127.0.0.1, mostly
 * playing back real recorded responses (test/fixtures/runner/recorded/PROVENANCE-responses-gemini.md).
 */
import { Toolkit, defineTool } from 'toolnexus-ts';
import { ModelResponseError, OpenAIResponsesModel, type ModelStreamEvent } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent } from 'toolnexus-ts/agents';
import { json, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { responsesCall, responsesJson, responsesMessage, responsesReasoning, responsesStream } from '../fixtures/runner/provider-replies';
import { recordedBody, recordedChunks, recordedJson, recordedStream } from '../fixtures/runner/playback';

const servers: MockServer[] = [];
async function serve(replies: Reply | Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function model(server: MockServer, extra: Partial<ConstructorParameters<typeof OpenAIResponsesModel>[0]> = {}): OpenAIResponsesModel {
  return new OpenAIResponsesModel({
    baseUrl: `${server.url}/v1`,
    apiKey: 'sk-test',
    model: 'gpt-test',
    retry: { maxAttempts: 1 },
    ...extra,
  });
}

const O3_CALL = 'openai-responses/issue-7082-o3-optional-tool-parameters.json';
const GPT5_REASONED_ANSWER = 'openai-responses/openai-reasoning-encrypted-content.1.json';
const GPT51_STREAMED_CALL = 'openai-responses/issue-19493-gpt-5.1-tool-call.chunks.txt';

const searchSchema = {
  type: 'object' as const,
  properties: {
    query: { type: 'string' as const },
    limit: { type: 'integer' as const },
    offset: { type: 'integer' as const },
    year: { type: 'integer' as const },
  },
  required: ['query'],
};

function toolkit(): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'semantic_scholar_search',
      description: 'Searches papers',
      inputSchema: searchSchema,
      run: (args) => `3 papers on ${String(args.query)}`,
    }),
    defineTool({
      name: 'get_weather',
      description: 'Weather for a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      run: async (args) => {
        await new Promise((resolve) => setTimeout(resolve, args.city === 'Oslo' ? 40 : 1));
        return `${String(args.city)}: sunny`;
      },
    }),
  );
}

describe('OpenAIResponsesModel in the loop (recorded responses)', () => {
  it('sends reasoning back before the function call it led to, verbatim, with each result as a function_call_output', async () => {
    const server = await serve([recordedBody(O3_CALL), recordedBody(GPT5_REASONED_ANSWER)]);
    const tools = toolkit();
    const runner = new AgentRunner({ model: model(server), toolkit: tools, systemPrompt: 'Be brief.' });

    const result = await runner.run('Find papers on machine learning.');

    expect(result.status).toBe('done');
    expect(result.text).toBe('12 + 7 = 19\n19 × 3 = 57\n57 × 10 = 570\n\nFinal result: 570');
    const [first, second] = server.requests;
    expect(first?.path).toBe('/v1/responses');
    expect(first?.headers.authorization).toBe('Bearer sk-test');
    expect(first?.body).toEqual({
      model: 'gpt-test',
      store: false,
      include: ['reasoning.encrypted_content'],
      instructions: 'Be brief.',
      input: [{ type: 'message', role: 'user', content: 'Find papers on machine learning.' }],
      tools: tools
        .tools()
        .map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.inputSchema, strict: false })),
    });
    const o3 = recordedJson<{ output: unknown[] }>(O3_CALL);
    expect(second?.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Find papers on machine learning.' },
      o3.output[0], // the reasoning item, as sent
      o3.output[1], // then the function_call it led to
      { type: 'function_call_output', call_id: 'call_2mhz5FtwkZnzXQkTOMtYZpZH', output: '3 papers on machine learning' },
    ]);
    expect(result.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ['call_2mhz5FtwkZnzXQkTOMtYZpZH', 'semantic_scholar_search', '{"query":"machine learning","limit":10,"offset":0,"year":0}'],
    ]);
    // The final turn reasoned too: its items stay in the transcript for a later turn.
    const answer = recordedJson<{ output: Array<Record<string, unknown>> }>(GPT5_REASONED_ANSWER);
    expect(result.messages.at(-1)).toEqual({
      role: 'assistant',
      content: result.text,
      items: answer.output.map((data) => ({ provider: 'openai', type: data.type, data })),
    });
    expect(result.usage).toMatchObject({ inputTokens: 114 + 865, outputTokens: 88 + 163 });
  });

  it('reads usage with cached and reasoning tokens, and the encrypted reasoning, from a recorded body', async () => {
    const server = await serve(recordedBody(GPT5_REASONED_ANSWER));
    const response = await model(server).complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(response.usage).toEqual({ inputTokens: 865, outputTokens: 163, cachedInputTokens: 0, reasoningTokens: 128 });
    expect(response.stopReason).toBe('completed');
    expect(response.items?.map((i) => i.type)).toEqual(['reasoning', 'message']);
    expect(String(response.items?.[0]?.data.encrypted_content)).toMatch(/^gAAAAABpPMlc/);
  });

  it('streams a recorded function call: one call with its id and arguments, usage from response.completed', async () => {
    const server = await serve(recordedStream(GPT51_STREAMED_CALL, true));
    const events: ModelStreamEvent[] = [];
    for await (const event of model(server).stream({ messages: [{ role: 'user', content: 'Weather in Beijing?' }], tools: [] }))
      events.push(event);
    expect(server.requests[0]?.body.stream).toBe(true);
    expect(server.requests[0]?.headers.accept).toBe('text/event-stream');
    expect(events).toEqual([
      {
        type: 'response',
        response: {
          text: '',
          toolCalls: [{ id: 'call_2FQdm3Br7Qb35YUBSkDR7kue', name: 'get_weather', arguments: '{"city":"Beijing"}' }],
          usage: { inputTokens: 45, outputTokens: 25, cachedInputTokens: 0, reasoningTokens: 0 },
          stopReason: 'completed',
          // The model the recording says answered (its response.created event).
          model: 'gpt-5.1-2025-11-13',
        },
      },
    ]);
  });

  it('runs the loop streaming: the recorded call, then a streamed answer; the call goes back rebuilt (no reasoning to keep)', async () => {
    const server = await serve([recordedStream(GPT51_STREAMED_CALL, true), responsesStream([responsesMessage('Sunny in Beijing.')])]);
    const runner = new AgentRunner({ model: model(server), toolkit: toolkit() });
    const seen: string[] = [];
    let done: RunEvent | undefined;
    for await (const event of runner.stream('Weather in Beijing?')) {
      seen.push(event.type === 'text' ? `text(${event.delta})` : event.type);
      if (event.type === 'done') done = event;
    }
    expect(seen).toEqual(['tool_call', 'tool_result', 'text(Sunny in )', 'text(Beijing.)', 'done']);
    expect(done?.type === 'done' && done.result.text).toBe('Sunny in Beijing.');
    expect(server.requests[1]?.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Weather in Beijing?' },
      { type: 'function_call', call_id: 'call_2FQdm3Br7Qb35YUBSkDR7kue', name: 'get_weather', arguments: '{"city":"Beijing"}' },
      { type: 'function_call_output', call_id: 'call_2FQdm3Br7Qb35YUBSkDR7kue', output: 'Beijing: sunny' },
    ]);
  });

  it('streams recorded reasoning: summary deltas as reasoning events; the item kept is the completed one, sent back before its call', async () => {
    const file = 'openai-responses/openai-reasoning-encrypted-content.1.first-response.chunks.txt';
    const completed = JSON.parse(recordedChunks(file).at(-1) as string) as { response: { output: Array<Record<string, unknown>> } };
    const direct = await serve(recordedStream(file, true));
    const events: ModelStreamEvent[] = [];
    for await (const event of model(direct).stream({ messages: [{ role: 'user', content: 'x' }], tools: [] })) events.push(event);
    const reasoning = events.flatMap((e) => (e.type === 'reasoning' ? [e.delta] : []));
    expect(reasoning).toHaveLength(32);
    expect(reasoning.join('')).toBe(
      "**Calculating step-by-step using calculator**\n\nI'll compute 12 plus 7, then multiply the result by 3, and finally multiply that by 10, reporting the final product.",
    );
    const last = events.at(-1);
    const response = last?.type === 'response' ? last.response : undefined;
    expect(response?.toolCalls).toEqual([
      { id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' },
    ]);
    expect(response?.usage).toEqual({ inputTokens: 134, outputTokens: 28, cachedInputTokens: 0, reasoningTokens: 0 });
    expect(response?.items?.map((i) => i.data)).toEqual(completed.response.output);

    const server = await serve([recordedStream(file, true), responsesJson([responsesMessage('19')])]);
    const calculator = defineTool({
      name: 'calculator',
      description: 'Adds',
      inputSchema: { type: 'object' },
      run: (args) => String(Number(args.a) + Number(args.b)),
    });
    const runner = new AgentRunner({ model: model(server), toolkit: new Toolkit().register(calculator) });
    for await (const event of runner.stream('12 + 7?')) void event;
    const input = server.requests[1]?.body.input as Array<Record<string, unknown>>;
    expect(input).toEqual([
      { type: 'message', role: 'user', content: '12 + 7?' },
      ...completed.response.output,
      { type: 'function_call_output', call_id: 'call_AB6AaRZ1FYZB2RwS6A5vbdqn', output: '19' },
    ]);
    expect(String(input[1]?.encrypted_content)).toMatch(/^gAAAAABpPDIVYBwu/);
  });

  it.each([
    ['openai-responses/openai-error.1.chunks.txt', 'insufficient_quota: You exceeded your current quota'],
    ['openai-responses/openai-response-failed-only.1.chunks.txt', 'rate_limit_exceeded: Request too large for gpt-4o-mini'],
  ])('a recorded failing stream (%s) is a ModelResponseError with the provider words', async (file, words) => {
    const server = await serve(recordedStream(file, true));
    const runner = new AgentRunner({ model: model(server), toolkit: toolkit() });
    const error = await (async () => {
      for await (const _ of runner.stream('hi')) void _;
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelResponseError);
    expect((error as Error).message).toContain(`openai sent an unreadable response: the provider reported an error: ${words}`);
  });
});

describe('OpenAIResponsesModel (hand-written cases)', () => {
  it('streams reasoning summaries as reasoning events and keeps the final encrypted content, in order with parallel calls', async () => {
    // hand-written: reasoning, then two parallel calls; no recorded stream of the pair is small enough to keep.
    const reasoning = responsesReasoning('rs_1', 'gAAAA-final-encrypted', ['Two cities, ', 'two calls.']);
    const calls = [
      responsesCall('call_oslo', 'get_weather', { city: 'Oslo' }),
      responsesCall('call_lima', 'get_weather', { city: 'Lima' }),
    ];
    const server = await serve([responsesStream([reasoning, ...calls]), responsesStream([responsesMessage('Both sunny.')])]);
    const runner = new AgentRunner({ model: model(server), toolkit: toolkit() });
    const reasoningDeltas: string[] = [];
    const modelEvents: ModelStreamEvent[] = [];
    const direct = await serve(responsesStream([reasoning, ...calls]));
    for await (const event of model(direct).stream({ messages: [{ role: 'user', content: 'x' }], tools: [] })) {
      modelEvents.push(event);
      if (event.type === 'reasoning') reasoningDeltas.push(event.delta);
    }
    expect(reasoningDeltas.join('')).toBe('Two cities, two calls.');
    const last = modelEvents.at(-1);
    expect(last?.type === 'response' && last.response.items?.map((i) => i.data)).toEqual([reasoning, ...calls]);

    let text = '';
    for await (const event of runner.stream('Oslo and Lima?')) if (event.type === 'done') text = event.result.text;
    expect(text).toBe('Both sunny.');
    // Oslo finishes last; the outputs keep the order of the calls, after the reasoning and the calls.
    expect(server.requests.at(-1)?.body.input).toEqual([
      { type: 'message', role: 'user', content: 'Oslo and Lima?' },
      reasoning,
      ...calls,
      { type: 'function_call_output', call_id: 'call_oslo', output: 'Oslo: sunny' },
      { type: 'function_call_output', call_id: 'call_lima', output: 'Lima: sunny' },
    ]);
    expect(JSON.stringify(server.requests.at(-1)?.body)).not.toContain('provisional');
  });

  it('rebuilds a transcript from another model: text and calls as items, no foreign provider items', async () => {
    const server = await serve(responsesJson([responsesMessage('ok')]));
    await model(server).complete({
      system: 'sys',
      messages: [
        { role: 'user', content: 'a' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Rome"}' }],
          items: [{ provider: 'anthropic', type: 'thinking', data: { type: 'thinking', thinking: 'x', signature: 'sig' } }],
        },
        { role: 'tool', callId: 'toolu_1', name: 'get_weather', content: 'bad city', isError: true },
        { role: 'assistant', content: 'Rome failed.' },
        { role: 'user', content: 'b' },
      ],
      tools: [],
    });
    expect(server.requests[0]?.body.input).toEqual([
      { type: 'message', role: 'user', content: 'a' },
      { type: 'message', role: 'assistant', content: 'Looking.' },
      { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'toolu_1', output: 'bad city' },
      { type: 'message', role: 'assistant', content: 'Rome failed.' },
      { type: 'message', role: 'user', content: 'b' },
    ]);
    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });

  it('merges params (and their include), honours store and strictTools', async () => {
    const server = await serve(responsesJson([responsesMessage('ok')]));
    const tools = toolkit().tools();
    await model(server, {
      params: { reasoning: { effort: 'low', summary: 'auto' }, include: ['message.output_text.logprobs'] },
      strictTools: true,
    }).complete({
      messages: [{ role: 'user', content: 'a' }],
      tools,
    });
    await model(server, { store: true }).complete({ messages: [{ role: 'user', content: 'a' }], tools: [] });
    await model(server, { encryptedReasoning: false }).complete({ messages: [{ role: 'user', content: 'a' }], tools: [] });
    const [first, stored, plain] = server.requests.map((r) => r.body);
    expect(first).toMatchObject({
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['message.output_text.logprobs', 'reasoning.encrypted_content'],
      store: false,
    });
    expect((first?.tools as Array<{ strict: boolean }>).map((t) => t.strict)).toEqual([true, true]);
    expect(stored).toMatchObject({ store: true });
    expect(stored).not.toHaveProperty('include');
    expect(plain).not.toHaveProperty('include');
  });

  it('asks for a typed answer natively as text.format json_schema when the request carries an output schema', async () => {
    const server = await serve(responsesJson([responsesMessage('{"city":"Oslo","celsius":4}')]));
    const schema = {
      type: 'object' as const,
      properties: { city: { type: 'string' as const }, celsius: { type: 'number' as const } },
      required: ['city'],
    };
    // The runner's ModelRequest.output (thinking-output branch); this branch's type does not name it yet.
    const typed = { messages: [{ role: 'user' as const, content: 'Oslo?' }], tools: [], output: { name: 'Weather', schema } };
    const response = await model(server).complete(typed);
    await model(server, { structuredOutput: false, params: { text: { verbosity: 'low' } } }).complete(typed);
    await model(server, { params: { text: { verbosity: 'low' } } }).complete(typed);
    expect(response.text).toBe('{"city":"Oslo","celsius":4}');
    expect(model(server).structuredOutput).toBe(true);
    expect(server.requests[0]?.body.text).toEqual({ format: { type: 'json_schema', name: 'Weather', schema, strict: false } });
    expect(server.requests[1]?.body.text).toEqual({ verbosity: 'low' });
    expect(server.requests[2]?.body.text).toEqual({
      verbosity: 'low',
      format: { type: 'json_schema', name: 'Weather', schema, strict: false },
    });
  });

  it('a stream that ends before response.completed, a garbled event, and a failed body are clear errors', async () => {
    const cut: Reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`data: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'Hel' })}\n\n`);
    };
    const garbled: Reply = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {"type":"response.output_text.delta",\n\n');
    };
    const failed = json(200, { id: 'r', status: 'failed', error: { code: 'server_error', message: 'boom' }, output: [] });
    const server = await serve([cut, garbled, failed]);
    const request = { messages: [{ role: 'user' as const, content: 'x' }], tools: [] };
    const drain = async () => {
      for await (const _ of model(server).stream(request)) void _;
    };
    await expect(drain()).rejects.toThrow('openai sent an unreadable response: the stream ended before response.completed');
    await expect(drain()).rejects.toThrow('a stream event is not JSON');
    await expect(model(server).complete(request)).rejects.toThrow('the provider reported an error: server_error: boom');
  });

  it('needs a model; refuses a bad key without quoting it', () => {
    expect(() => new OpenAIResponsesModel({ model: '' })).toThrow('OpenAIResponsesModel needs a model');
    expect(() => new OpenAIResponsesModel({ model: 'm', apiKey: 'sk-secret-value\n' })).toThrow(/apiKey contains a character not allowed/);
  });
});
