/**
 * AnthropicModel + AgentRunner against a real messages-API server on 127.0.0.1.
 */
import { AnthropicModel, ModelHttpError, ModelResponseError } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent } from 'toolnexus-ts/agents';
import {
  anthropicCalls,
  anthropicStream,
  anthropicText,
  json,
  sse,
  startMockServer,
  type MockServer,
} from '../fixtures/runner/mock-servers';
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

function model(server: MockServer): AnthropicModel {
  return new AnthropicModel({ baseUrl: server.url, apiKey: 'ak-test', model: 'claude-test', maxTokens: 512, retry: { maxAttempts: 1 } });
}

describe('AnthropicModel in the loop', () => {
  it('sends tool_use back with every tool_result of the turn in ONE user message, in call order', async () => {
    const server = await serve([
      anthropicCalls(
        [
          { id: 'toolu_oslo', name: 'weather', args: { city: 'Oslo' } },
          { id: 'toolu_lima', name: 'weather', args: { city: 'Lima' } },
          { id: 'toolu_fail', name: 'fail', args: {} },
        ],
        'Checking.',
      ),
      anthropicText('Sunny, except for the broken one.'),
    ]);
    const toolkit = weatherToolkit();
    const runner = new AgentRunner({ model: model(server), toolkit, systemPrompt: 'Be brief.' });

    const result = await runner.run('Weather?');

    expect(result).toMatchObject({
      status: 'done',
      text: 'Sunny, except for the broken one.',
      turns: 2,
      usage: { inputTokens: 42, outputTokens: 13 },
    });
    const [first, second] = server.requests;
    expect(first?.path).toBe('/v1/messages');
    expect(first?.headers['x-api-key']).toBe('ak-test');
    expect(first?.headers['anthropic-version']).toBe('2023-06-01');
    expect(first?.body).toEqual({
      max_tokens: 512,
      model: 'claude-test',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: toolkit.toAnthropic(),
    });
    expect(second?.body.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_oslo', name: 'weather', input: { city: 'Oslo' } },
          { type: 'tool_use', id: 'toolu_lima', name: 'weather', input: { city: 'Lima' } },
          { type: 'tool_use', id: 'toolu_fail', name: 'fail', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_oslo', content: 'Oslo: sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_lima', content: 'Lima: sunny' },
          { type: 'tool_result', tool_use_id: 'toolu_fail', content: 'it broke', is_error: true },
        ],
      },
    ]);
    // The neutral transcript has no extra user turn: the tool results are tool messages.
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
  });

  it('names the status and the provider message of an error body', async () => {
    const server = await serve(
      json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: field required' } }),
    );
    const error = await new AgentRunner({ model: model(server), toolkit: weatherToolkit() }).run('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelHttpError);
    expect(error).toMatchObject({ status: 400, providerMessage: 'max_tokens: field required', provider: 'anthropic' });
    expect((error as Error).message).toBe('anthropic returned HTTP 400: max_tokens: field required');
  });

  it('rejects a 200 body without a content array', async () => {
    const server = await serve(json(200, { id: 'msg', type: 'message' }));
    await expect(new AgentRunner({ model: model(server), toolkit: weatherToolkit() }).run('x')).rejects.toThrow(
      /^anthropic sent an unreadable response: the body has no content array/,
    );
  });
});

describe('AnthropicModel streaming', () => {
  it('streams text deltas and assembles input_json_delta into tool calls', async () => {
    const server = await serve([
      anthropicStream(['Let me ', 'look.'], [{ id: 'toolu_1', name: 'weather', args: { city: 'Rome' } }]),
      anthropicStream(['Rome is ', 'sunny.']),
    ]);
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });

    const events: RunEvent[] = [];
    for await (const event of runner.stream('Rome?')) events.push(event);

    expect(events.map((e) => e.type)).toEqual(['text', 'text', 'tool_call', 'tool_result', 'text', 'text', 'done']);
    expect(events[2]).toEqual({ type: 'tool_call', call: { id: 'toolu_1', name: 'weather', arguments: '{"city":"Rome"}' } });
    expect(events[3]).toEqual({
      type: 'tool_result',
      callId: 'toolu_1',
      name: 'weather',
      result: { output: 'Rome: sunny', isError: false },
    });
    const done = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
    expect(done.result).toMatchObject({ status: 'done', text: 'Rome is sunny.', usage: { inputTokens: 30, outputTokens: 12 } });
    expect(server.requests[0]?.body.stream).toBe(true);
    expect((server.requests[1]?.body.messages as unknown[])[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Rome: sunny' }],
    });
  });

  it('accepts a gateway that answers a stream request with a whole message', async () => {
    const server = await serve(anthropicText('No streaming here.'));
    const events: RunEvent[] = [];
    for await (const event of new AgentRunner({ model: model(server), toolkit: weatherToolkit() }).stream('x')) events.push(event);
    expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    expect((events[1] as Extract<RunEvent, { type: 'done' }>).result).toMatchObject({
      text: 'No streaming here.',
      usage: { inputTokens: 12, outputTokens: 4 },
    });
  });

  it('surfaces an error event in the stream with the provider message', async () => {
    const server = await serve(
      sse([
        { event: 'message_start', data: { type: 'message_start', message: { usage: { input_tokens: 1 } } } },
        { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      ]),
    );
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    const consume = async () => {
      for await (const _event of runner.stream('x'));
    };
    const error = await consume().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelResponseError);
    expect((error as Error).message).toBe(
      'anthropic sent an unreadable response: the provider reported an error: overloaded_error: Overloaded',
    );
  });

  it('fails clearly when the stream ends before message_stop', async () => {
    const server = await serve(sse([{ event: 'message_start', data: { type: 'message_start', message: { usage: { input_tokens: 1 } } } }]));
    const runner = new AgentRunner({ model: model(server), toolkit: weatherToolkit() });
    const consume = async () => {
      for await (const _event of runner.stream('x'));
    };
    await expect(consume()).rejects.toThrow('anthropic sent an unreadable response: the stream ended before message_stop');
  });
});
