/**
 * GenAI spans and metrics with the real OpenTelemetry SDK: a two-tool run over each HTTP
 * model (a real server on 127.0.0.1), its span names, kinds, parents and attributes; the
 * metrics; a halted run and its resume linked; the global provider picked up with no option,
 * and `telemetry: false`.
 */
import 'reflect-metadata';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { IsString } from 'class-validator';
import { SEMCONV_VERSION, Tool, Toolkit, defineTool, pending, type TelemetryOptions } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { AnthropicModel, GeminiModel, OpenAIChatModel, OpenAIResponsesModel, type ChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { only, startOtel, type Otel } from '../fixtures/telemetry/sdk';
import {
  anthropicCalls,
  anthropicText,
  json,
  openaiStream,
  openaiText,
  startMockServer,
  type MockServer,
  type Reply,
} from '../fixtures/runner/mock-servers';
import { geminiJson, responsesCall, responsesJson, responsesMessage } from '../fixtures/runner/provider-replies';

class CityArgs {
  @IsString() city!: string;
}

@Tool({ name: 'weather', description: 'Weather for a city', args: CityArgs })
class WeatherTool {
  run(args: CityArgs): string {
    return `${args.city}: sunny`;
  }
}

const clock = defineTool({ name: 'clock', description: 'The time', inputSchema: { type: 'object' }, run: () => '12:00' });
const approve = defineTool({
  name: 'transfer',
  description: 'Moves money; asks first',
  inputSchema: { type: 'object' },
  run: (_args, ctx) => (ctx?.answer ? 'moved' : pending({ kind: 'approval', prompt: 'Move it?' })),
});

const CALLS = [
  { id: 'call_w', name: 'weather', args: { city: 'Oslo' } },
  { id: 'call_c', name: 'clock', args: {} },
];

/** Each HTTP model, its scripted two-tool conversation, and what its spans should say. */
const PROVIDERS: Array<{
  name: string;
  model: (url: string) => ChatModel;
  replies: Reply[];
  requestModel: string;
  /** The model the first answer names, when it names one. */
  responseModel?: string;
  stream?: boolean;
}> = [
  {
    name: 'openai chat',
    model: (url) => new OpenAIChatModel({ baseUrl: `${url}/v1`, apiKey: 'sk-test', model: 'gpt-test', retry: { maxAttempts: 1 } }),
    replies: [
      json(200, {
        id: 'c1',
        object: 'chat.completion',
        model: 'gpt-test-2026-12-01',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: CALLS.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })),
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 16 } },
      }),
      openaiText('done'),
    ],
    requestModel: 'gpt-test',
    responseModel: 'gpt-test-2026-12-01',
  },
  {
    name: 'openai chat, streamed',
    model: (url) => new OpenAIChatModel({ baseUrl: `${url}/v1`, apiKey: 'sk-test', model: 'gpt-stream', retry: { maxAttempts: 1 } }),
    replies: [openaiStream([], CALLS), openaiStream(['do', 'ne'])],
    requestModel: 'gpt-stream',
    stream: true,
  },
  {
    name: 'anthropic',
    model: (url) =>
      new AnthropicModel({ baseUrl: url, apiKey: 'ak-test', model: 'claude-test', maxTokens: 512, retry: { maxAttempts: 1 } }),
    replies: [anthropicCalls(CALLS), anthropicText('done')],
    requestModel: 'claude-test',
  },
  {
    name: 'openai responses',
    model: (url) => new OpenAIResponsesModel({ baseUrl: `${url}/v1`, apiKey: 'sk-test', model: 'o3', retry: { maxAttempts: 1 } }),
    replies: [responsesJson(CALLS.map((c) => responsesCall(c.id, c.name, c.args))), responsesJson([responsesMessage('done')])],
    requestModel: 'o3',
  },
  {
    name: 'gemini',
    model: (url) => new GeminiModel({ baseUrl: url, apiKey: 'AIza-test', model: 'gemini-3-pro-preview', retry: { maxAttempts: 1 } }),
    replies: [geminiJson(CALLS.map((c) => ({ functionCall: { name: c.name, args: c.args } }))), geminiJson([{ text: 'done' }])],
    requestModel: 'gemini-3-pro-preview',
  },
];

let otel: Otel;
let server: MockServer | undefined;

beforeAll(() => {
  otel = startOtel();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  otel.reset();
});
afterAll(async () => {
  await otel.shutdown();
});

function agent(model: ChatModel, telemetry: TelemetryOptions | false | undefined, tools: object[] = [WeatherTool, clock]) {
  const toolkit = new Toolkit({ telemetry }).register(...tools);
  const coordinator = new ResumeCoordinator({ toolkit, telemetry });
  return new AgentRunner({ model, toolkit, coordinator, telemetry: telemetry === false ? false : { ...telemetry, agentName: 'clerk' } });
}

const children = (spans: readonly ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId).map((span) => span.name);

describe.each(PROVIDERS)('a two-tool run over $name', ({ model, replies, requestModel, responseModel, stream }) => {
  it('has invoke_agent with two chat (CLIENT) and two execute_tool children, with the GenAI attributes', async () => {
    server = await startMockServer(replies);
    const runner = agent(model(server.url), { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider });
    let result;
    if (stream) {
      for await (const event of runner.stream('Weather and time?', { runId: 'run-two' })) if (event.type === 'done') result = event.result;
    } else {
      result = await runner.run('Weather and time?', { runId: 'run-two' });
    }
    expect(result?.status).toBe('done');

    const spans = otel.spans();
    const run = only(spans, 'invoke_agent clerk');
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.instrumentationScope).toMatchObject({ name: 'toolnexus-ts', version: SEMCONV_VERSION });
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'clerk',
      'gen_ai.conversation.id': 'run-two',
      'gen_ai.request.model': requestModel,
      'toolnexus.run.status': 'done',
      'gen_ai.usage.input_tokens': result?.usage.inputTokens,
      'gen_ai.usage.output_tokens': result?.usage.outputTokens,
    });
    expect(children(spans, run).sort()).toEqual([
      `chat ${requestModel}`,
      `chat ${requestModel}`,
      'execute_tool clock',
      'execute_tool weather',
    ]);

    const chats = spans.filter((span) => span.name === `chat ${requestModel}`);
    for (const [i, chat] of chats.entries()) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(chat.status.code).toBe(SpanStatusCode.UNSET);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': requestModel,
        'gen_ai.usage.input_tokens': result?.turnUsage[i]?.inputTokens,
        'gen_ai.usage.output_tokens': result?.turnUsage[i]?.outputTokens,
      });
      expect(chat.attributes['gen_ai.provider.name']).toBe(runner.model.provider);
      expect(chat.attributes['gen_ai.response.finish_reasons']).toHaveLength(1);
      // No content unless asked for.
      expect(chat.attributes['gen_ai.input.messages']).toBeUndefined();
    }
    // The model that answered, as the provider named it (gen_ai.response.model).
    if (responseModel !== undefined) expect(chats[0]?.attributes['gen_ai.response.model']).toBe(responseModel);
    if (result?.turnUsage[0]?.cachedInputTokens !== undefined)
      expect(chats[0]?.attributes['gen_ai.usage.cache_read.input_tokens']).toBe(result.turnUsage[0].cachedInputTokens);

    const weather = only(spans, 'execute_tool weather');
    expect(weather.kind).toBe(SpanKind.INTERNAL);
    expect(weather.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'weather',
      'gen_ai.tool.type': 'function',
      'toolnexus.tool.outcome': 'ok',
    });
    expect(weather.attributes['gen_ai.tool.call.id']).toBe(result?.toolCalls.find((c) => c.name === 'weather')?.id);
    expect(weather.attributes['gen_ai.tool.call.arguments']).toBeUndefined();

    const metrics = (await otel.metrics()).scopeMetrics.flatMap((scope) => scope.metrics);
    const byName = new Map(metrics.map((metric) => [metric.descriptor.name, metric]));
    expect(byName.get('gen_ai.client.operation.duration')?.descriptor.unit).toBe('s');
    const tokens = byName.get('gen_ai.client.token.usage');
    const ours = tokens?.dataPoints.filter((point) => point.attributes['gen_ai.request.model'] === requestModel) ?? [];
    expect(ours.map((point) => [point.attributes['gen_ai.token.type'], point.attributes['gen_ai.provider.name']]).sort()).toEqual([
      ['input', runner.model.provider],
      ['output', runner.model.provider],
    ]);
    const toolCalls = byName.get('toolnexus.tool.calls');
    expect(toolCalls?.dataPoints.map((point) => [point.attributes['gen_ai.tool.name'], point.value])).toEqual(
      expect.arrayContaining([
        ['weather', expect.any(Number)],
        ['clock', expect.any(Number)],
      ]),
    );
  });
});

describe('spans of a halted run and its resume', () => {
  it('a suspension ends execute_tool unset, naming the request; the resolution and the resumed run link back', async () => {
    server = await startMockServer([
      json(200, {
        id: 'c1',
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'call_t', type: 'function', function: { name: 'transfer', arguments: '{}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 20, completion_tokens: 7 },
      }),
      openaiText('moved it'),
    ]);
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
    const runner = agent(model, { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider }, [approve]);
    const first = await runner.run('Move the money', { runId: 'run-halt' });
    expect(first.status).toBe('halted');
    const halted = only(otel.spans(), 'invoke_agent clerk');
    const suspended = only(otel.spans(), 'execute_tool transfer');
    expect(halted.status.code).toBe(SpanStatusCode.UNSET);
    expect(halted.attributes['toolnexus.run.status']).toBe('halted');
    expect(suspended.status.code).toBe(SpanStatusCode.UNSET);
    expect(suspended.attributes).toMatchObject({
      'toolnexus.tool.outcome': 'pending',
      'toolnexus.request.kind': 'approval',
      'toolnexus.request.id': first.pending?.id,
    });
    const stored = await runner.coordinator.get(first.pending?.id as string);
    expect(stored?.traceparent).toBe(`00-${suspended.spanContext().traceId}-${suspended.spanContext().spanId}-01`);
    otel.reset();

    const final = await runner.resume({ id: first.pending?.id as string, ok: true });
    expect(final.status).toBe('done');
    const spans = otel.spans();
    const resumed = only(spans, 'invoke_agent clerk');
    const resolution = only(spans, 'resolve_suspension transfer');
    const replay = only(spans, 'execute_tool transfer');
    expect(resumed.links.map((link) => link.context.spanId)).toEqual([halted.spanContext().spanId]);
    expect(resumed.links[0]?.context.traceId).toBe(halted.spanContext().traceId);
    expect(resolution.links.map((link) => link.context.spanId)).toEqual([suspended.spanContext().spanId]);
    expect(resolution.parentSpanContext?.spanId).toBe(resumed.spanContext().spanId);
    expect(resolution.attributes).toMatchObject({ 'toolnexus.request.id': first.pending?.id, 'toolnexus.suspension.status': 'resolved' });
    expect(replay.parentSpanContext?.spanId).toBe(resolution.spanContext().spanId);
    expect(replay.attributes['toolnexus.tool.outcome']).toBe('ok');
    expect(children(spans, resumed)).toEqual(expect.arrayContaining(['resolve_suspension transfer', 'chat gpt-test']));

    const suspensions = (await otel.metrics()).scopeMetrics
      .flatMap((scope) => scope.metrics)
      .find((metric) => metric.descriptor.name === 'toolnexus.suspensions');
    expect(suspensions?.dataPoints.map((point) => [point.attributes['toolnexus.suspension.status'], point.value]).sort()).toEqual([
      ['pending', 1],
      ['resolved', 1],
    ]);
  });

  it('a model HTTP failure ends chat and invoke_agent as errors, with the status code', async () => {
    server = await startMockServer([json(400, { error: { message: 'bad request' } })]);
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
    const runner = agent(model, { tracerProvider: otel.tracerProvider });
    await expect(runner.run('hi')).rejects.toThrow('HTTP 400');
    const chat = only(otel.spans(), 'chat gpt-test');
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(chat.attributes).toMatchObject({ 'error.type': 'TOOLNEXUS_MODEL_HTTP', 'http.response.status_code': 400 });
    expect(only(otel.spans(), 'invoke_agent clerk').status.code).toBe(SpanStatusCode.ERROR);
  });

  it('a retried model call carries a retry event', async () => {
    server = await startMockServer([json(503, { error: { message: 'busy' } }), openaiText('fine')]);
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 2, baseDelayMs: 1 } });
    await agent(model, { tracerProvider: otel.tracerProvider }).run('hi');
    const chat = only(otel.spans(), 'chat gpt-test');
    expect(chat.events.map((event) => [event.name, event.attributes?.['http.response.status_code']])).toEqual([
      ['toolnexus.http.retry', 503],
    ]);
  });
});

describe('set-up', () => {
  it('uses the global tracer provider with no option, and nothing with telemetry: false', async () => {
    server = await startMockServer(openaiText('hello'));
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
    const plain = new Toolkit();
    const silent = new AgentRunner({ model, toolkit: plain });
    await silent.run('hi');
    expect(otel.spans()).toEqual([]); // no global provider registered yet
    trace.setGlobalTracerProvider(otel.tracerProvider);
    try {
      await new AgentRunner({ model, toolkit: plain }).run('hi');
      expect(otel.spans().map((span) => span.name)).toEqual(['chat gpt-test', 'invoke_agent agent']);
      otel.reset();
      await new AgentRunner({ model, toolkit: plain, telemetry: false }).run('hi');
      expect(otel.spans()).toEqual([]);
    } finally {
      trace.disable();
    }
  });
});

describe('the telemetry option', () => {
  it('refuses what is not a provider, a secret list or a name, saying which', () => {
    const bad: Array<[unknown, string]> = [
      ['yes', 'Toolkit: telemetry must be an object or false'],
      [{ tracerProvider: {} }, 'Toolkit: telemetry.tracerProvider must be an OpenTelemetry TracerProvider (getTracer)'],
      [{ meterProvider: { getMeter: 1 } }, 'Toolkit: telemetry.meterProvider must be an OpenTelemetry MeterProvider (getMeter)'],
      [{ secrets: 'sk-1' }, 'Toolkit: telemetry.secrets must be an array of strings'],
      [{ agentName: '' }, 'Toolkit: telemetry.agentName must be a non-empty string'],
    ];
    for (const [telemetry, message] of bad) expect(() => new Toolkit({ telemetry: telemetry as TelemetryOptions })).toThrow(message);
  });

  it('enabled: false records nothing, even with a provider given', async () => {
    const toolkit = new Toolkit({ telemetry: { enabled: false, tracerProvider: otel.tracerProvider } }).register(clock);
    expect(await toolkit.execute('clock', {})).toEqual({ output: '12:00', isError: false });
    expect(otel.spans()).toEqual([]);
  });

  it('an unknown tool is an error span, counted as _OTHER so invented names add no series', async () => {
    const toolkit = new Toolkit({ telemetry: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider } });
    await toolkit.execute('made_up_tool', {});
    const span = only(otel.spans(), 'execute_tool made_up_tool');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('unknown_tool');
    const calls = (await otel.metrics()).scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === 'toolnexus.tool.calls');
    const names = calls?.dataPoints.map((point) => point.attributes['gen_ai.tool.name']);
    expect(names).toContain('_OTHER');
    expect(names).not.toContain('made_up_tool');
  });
});
