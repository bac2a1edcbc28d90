/**
 * OpenAIChatModel + AgentRunner against a real chat-completions server on 127.0.0.1.
 */
import { Toolkit, defineTool } from 'toolnexus-ts';
import { ModelResponseError, OpenAIChatModel, type ModelResponse } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent } from 'toolnexus-ts/agents';
import { json, openaiCalls, openaiStream, openaiText, sse, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { weatherToolkit } from '../fixtures/runner/tools';

const servers: MockServer[] = [];
async function serve(...args: Parameters<typeof startMockServer>): Promise<MockServer> {
  const server = await startMockServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function model(server: MockServer, extra: Partial<ConstructorParameters<typeof OpenAIChatModel>[0]> = {}): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: 'sk-test', model: 'gpt-test', retry: { maxAttempts: 1 }, ...extra });
}

const threeCities = [
  { id: 'call_oslo', name: 'weather', args: { city: 'Oslo' } },
  { id: 'call_lima', name: 'weather', args: { city: 'Lima' } },
  { id: 'call_rome', name: 'weather', args: { city: 'Rome' } },
];

describe('OpenAIChatModel in the loop', () => {
  it('runs parallel tool calls and feeds the results back as tool messages, in call order', async () => {
    const server = await serve([openaiCalls(threeCities), openaiText('Sunny everywhere.')]);
    const toolkit = weatherToolkit();
    const runner = new AgentRunner({ model: model(server), toolkit, systemPrompt: 'Be brief.' });

    const result = await runner.run('Weather in Oslo, Lima and Rome?');

    expect(result).toMatchObject({ status: 'done', text: 'Sunny everywhere.', turns: 2, usage: { inputTokens: 30, outputTokens: 12 } });
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests;
    expect(first?.path).toBe('/v1/chat/completions');
    expect(first?.headers.authorization).toBe('Bearer sk-test');
    expect(first?.body).toEqual({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Oslo, Lima and Rome?' },
      ],
      tools: toolkit.toOpenAI(),
    });
    // Lima finishes first and Oslo last; the transcript keeps the order the model asked in.
    expect(second?.body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo, Lima and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: threeCities.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: 'weather', arguments: JSON.stringify(c.args) },
        })),
      },
      { role: 'tool', tool_call_id: 'call_oslo', content: 'Oslo: sunny' },
      { role: 'tool', tool_call_id: 'call_lima', content: 'Lima: sunny' },
      { role: 'tool', tool_call_id: 'call_rome', content: 'Rome: sunny' },
    ]);
    expect(result.toolCalls.map((c) => [c.id, c.result.output, c.turn])).toEqual([
      ['call_oslo', 'Oslo: sunny', 1],
      ['call_lima', 'Lima: sunny', 1],
      ['call_rome', 'Rome: sunny', 1],
    ]);
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'Sunny everywhere.' });
  });

  it('feeds malformed argument JSON, unknown tools and failing tools back as error results, and carries on', async () => {
    const server = await serve([
      openaiCalls([
        { id: 'c1', name: 'weather', args: '{"city": Oslo' },
        { id: 'c2', name: 'nope', args: {} },
        { id: 'c3', name: 'fail', args: {} },
        { id: 'c4', name: 'weather', args: { city: 42 } },
      ]),
      openaiText('Sorry, something went wrong.'),
    ]);
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });

    const result = await runner.run('Weather?');

    expect(result.status).toBe('done');
    const toolMessages = (server.requests[1]?.body.messages as Array<{ role: string; content: string; tool_call_id?: string }>).filter(
      (m) => m.role === 'tool',
    );
    expect(toolMessages.map((m) => m.tool_call_id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(toolMessages[0]?.content).toMatch(/^invalid arguments for weather: arguments are not valid JSON \(.+\): \{"city": Oslo$/);
    expect(toolMessages[1]?.content).toBe('unknown tool: nope');
    expect(toolMessages[2]?.content).toBe('it broke');
    expect(toolMessages[3]?.content).toMatch(/^invalid arguments for weather: city: /);
    expect(result.toolCalls.every((c) => c.result.isError)).toBe(true);
  });

  it('sends the tools JSON once per toolkit state: a tool registered later is offered on the next run', async () => {
    const server = await serve(openaiText('ok'));
    const toolkit = weatherToolkit();
    const runner = new AgentRunner({ model: model(server), toolkit });
    await runner.run('a');
    await runner.run('b');
    toolkit.register(defineTool({ name: 'extra', description: 'Added later', run: () => 'x' }));
    await runner.run('c');

    const names = server.requests.map((r) => (r.body.tools as Array<{ function: { name: string } }>).map((t) => t.function.name));
    expect(names).toEqual([
      ['weather', 'fail'],
      ['weather', 'fail'],
      ['weather', 'fail', 'extra'],
    ]);
  });

  it('merges params into the body and omits tools when the toolkit is empty', async () => {
    const server = await serve(openaiText('hi'));
    const runner = new AgentRunner({ model: model(server, { params: { temperature: 0 }, apiKey: undefined }), toolkit: new Toolkit() });
    await runner.run('hello');
    expect(server.requests[0]?.body).toEqual({ temperature: 0, model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] });
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('reads content given as an array of text parts', async () => {
    const server = await serve(
      json(200, {
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Hello, ' },
                { type: 'text', text: 'world.' },
              ],
            },
            finish_reason: 'stop',
          },
        ],
      }),
    );
    const result = await new AgentRunner({ model: model(server), toolkit: weatherToolkit() }).run('hi');
    expect(result).toMatchObject({ status: 'done', text: 'Hello, world.', usage: { inputTokens: 0, outputTokens: 0 } });
  });

  it('reports an error object in a 200 body with the provider message', async () => {
    const server = await serve(json(200, { error: { message: 'Provider returned error', code: 502 } }));
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    const error = await runner.run('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelResponseError);
    expect((error as Error).message).toBe('openai sent an unreadable response: the provider reported an error: Provider returned error');
  });

  it('rejects a 200 body without choices, naming what is missing', async () => {
    const server = await serve(json(200, { id: 'x', object: 'chat.completion' }));
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    await expect(runner.run('x')).rejects.toThrow(/openai sent an unreadable response: the body has no choices\[0\]\.message/);
  });
});

describe('OpenAIChatModel streaming', () => {
  it('streams text deltas, assembles split tool-call arguments, and ends with done', async () => {
    const server = await serve([
      openaiStream(['Let me ', 'check.'], [threeCities[0] as (typeof threeCities)[0], threeCities[1] as (typeof threeCities)[0]]),
      openaiStream(['Sunny ', 'in both.']),
    ]);
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });

    const events: RunEvent[] = [];
    for await (const event of runner.stream('Oslo and Lima?')) events.push(event);

    expect(events.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta)).toEqual([
      'Let me ',
      'check.',
      'Sunny ',
      'in both.',
    ]);
    expect(events.filter((e) => e.type === 'tool_call').map((e) => e.call)).toEqual([
      { id: 'call_oslo', name: 'weather', arguments: '{"city":"Oslo"}' },
      { id: 'call_lima', name: 'weather', arguments: '{"city":"Lima"}' },
    ]);
    const results = events.filter((e): e is Extract<RunEvent, { type: 'tool_result' }> => e.type === 'tool_result');
    expect(results.map((e) => e.callId).sort()).toEqual(['call_lima', 'call_oslo']);
    const types = events.map((e) => e.type);
    expect(types.indexOf('tool_call')).toBeGreaterThan(types.indexOf('text'));
    expect(types.at(-1)).toBe('done');
    const done = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
    expect(done.result).toMatchObject({ status: 'done', text: 'Sunny in both.', turns: 2, usage: { inputTokens: 22, outputTokens: 6 } });
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.requests[0]?.headers.accept).toBe('text/event-stream');
    expect((server.requests[1]?.body.messages as Array<{ role: string }>).filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: 'call_oslo', content: 'Oslo: sunny' },
      { role: 'tool', tool_call_id: 'call_lima', content: 'Lima: sunny' },
    ]);
  });

  it('fails clearly on a stream event that is not JSON', async () => {
    const server = await serve(sse([{ data: { choices: [{ index: 0, delta: { content: 'a' } }] } }, { data: '{oops' }]));
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    const seen: string[] = [];
    const consume = async () => {
      for await (const event of runner.stream('x')) seen.push(event.type);
    };
    await expect(consume()).rejects.toThrow('openai sent an unreadable response: a stream event is not JSON (body starts: "{oops")');
    expect(seen).toEqual(['text']);
  });

  it('fails clearly when the stream stops before the response is complete', async () => {
    const server = await serve(sse([{ data: { choices: [{ index: 0, delta: { content: 'half' } }] } }]));
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    const consume = async () => {
      for await (const _event of runner.stream('x'));
    };
    await expect(consume()).rejects.toThrow('openai sent an unreadable response: the stream ended before the response was complete');
  });

  it('accepts a server that answers a stream request with a whole JSON completion', async () => {
    const server = await serve([openaiCalls([threeCities[1] as (typeof threeCities)[0]]), openaiText('Lima is sunny.')]);
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    const events = [];
    for await (const event of runner.stream('Lima?')) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_result', 'text', 'done']);
    expect(events[2]).toEqual({ type: 'text', delta: 'Lima is sunny.' });
  });

  it('omits stream_options when streamUsage is off', async () => {
    const server = await serve(openaiStream(['ok']));
    const runner = new AgentRunner({ model: model(server, { streamUsage: false }), toolkit: weatherToolkit() });
    for await (const _event of runner.stream('x'));
    expect(server.requests[0]?.body.stream).toBe(true);
    expect(server.requests[0]?.body.stream_options).toBeUndefined();
  });
});

describe('the answering model', () => {
  it('is read from the answer, whole or streamed (its first event that names one)', async () => {
    const server = await startMockServer([
      json(200, {
        model: 'gpt-answered-1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      }),
      sse([
        { data: { model: 'gpt-answered-2', choices: [{ index: 0, delta: { role: 'assistant', content: 'h' } }] } },
        { data: { model: 'gpt-answered-2', choices: [{ index: 0, delta: { content: 'i' }, finish_reason: 'stop' }] } },
        { data: '[DONE]' },
      ]),
    ]);
    try {
      const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: 'sk-test', model: 'gpt-asked', retry: { maxAttempts: 1 } });
      await expect(model.complete({ messages: [{ role: 'user', content: 'x' }], tools: [] })).resolves.toMatchObject({
        model: 'gpt-answered-1',
      });
      let last: ModelResponse | undefined;
      for await (const event of model.stream({ messages: [{ role: 'user', content: 'x' }], tools: [] }))
        if (event.type === 'response') last = event.response;
      expect(last).toMatchObject({ text: 'hi', model: 'gpt-answered-2' });
    } finally {
      await server.close();
    }
  });
});
