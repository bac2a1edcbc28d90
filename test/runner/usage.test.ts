/**
 * Token counts per run and per turn, cached and reasoning counts from OpenAI chat, the
 * runner's model metric, and totals that survive a halt and resume.
 */
import { Toolkit } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type ModelMetricEvent, type RunEvent } from 'toolnexus-ts/agents';
import type { MemoryStore } from 'toolnexus-ts/memory';
import { json, openaiCalls, sse, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { PayTool, weatherToolkit } from '../fixtures/runner/tools';

const servers: MockServer[] = [];
async function serve(replies: Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

function openai(server: MockServer): OpenAIChatModel {
  return new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', retry: { maxAttempts: 1 } });
}

/** A chat completion whose usage has the details OpenAI reports for cached prompts and reasoning models. */
function detailed(text: string, prompt: number, cached: number, completion: number, reasoning: number): Reply {
  return json(200, {
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0 },
    },
  });
}

describe('usage per run and per turn', () => {
  it('sums every turn, keeps each turn, and reads cached and reasoning tokens', async () => {
    const server = await serve([
      openaiCalls([{ id: 'call_1', name: 'weather', args: { city: 'Lima' } }]),
      detailed('Sunny.', 2000, 1536, 300, 256),
    ]);
    const metrics: ModelMetricEvent[] = [];
    const runner = new AgentRunner({ model: openai(server), toolkit: weatherToolkit(), onMetric: (event) => metrics.push(event) });

    const result = await runner.run('Weather?', { runId: 'run-usage' });

    expect(result.turnUsage).toEqual([
      { inputTokens: 20, outputTokens: 7 },
      { inputTokens: 2000, outputTokens: 300, cachedInputTokens: 1536, reasoningTokens: 256 },
    ]);
    expect(result.usage).toEqual({ inputTokens: 2020, outputTokens: 307, cachedInputTokens: 1536, reasoningTokens: 256 });
    expect(metrics.map(({ ms, ...rest }) => ({ ...rest, timed: ms >= 0 }))).toEqual([
      { event: 'model', provider: 'openai', runId: 'run-usage', turn: 1, usage: result.turnUsage[0], streamed: false, timed: true },
      { event: 'model', provider: 'openai', runId: 'run-usage', turn: 2, usage: result.turnUsage[1], streamed: false, timed: true },
    ]);
  });

  it('reads the details from the usage chunk of a stream', async () => {
    const server = await serve([
      sse([
        { data: { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' } }] } },
        { data: { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
        {
          data: {
            choices: [],
            usage: {
              prompt_tokens: 50,
              completion_tokens: 9,
              prompt_tokens_details: { cached_tokens: 32 },
              completion_tokens_details: { reasoning_tokens: 4 },
            },
          },
        },
        { data: '[DONE]' },
      ]),
    ]);
    const metrics: ModelMetricEvent[] = [];
    const events: RunEvent[] = [];
    const runner = new AgentRunner({ model: openai(server), toolkit: weatherToolkit(), onMetric: (event) => metrics.push(event) });
    for await (const event of runner.stream('x')) events.push(event);
    const done = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
    expect(done.result.usage).toEqual({ inputTokens: 50, outputTokens: 9, cachedInputTokens: 32, reasoningTokens: 4 });
    expect(metrics[0]).toMatchObject({ turn: 1, streamed: true });
  });

  it('a metric sink that throws changes nothing', async () => {
    const server = await serve([detailed('ok', 1, 0, 1, 0)]);
    const runner = new AgentRunner({
      model: openai(server),
      toolkit: weatherToolkit(),
      onMetric: () => {
        throw new Error('sink down');
      },
    });
    await expect(runner.run('x')).resolves.toMatchObject({ status: 'done', text: 'ok' });
  });

  it('keeps the turns before a halt in the resumed run, in the checkpoint and in the metric', async () => {
    const server = await serve([
      openaiCalls([{ id: 'call_pay', name: 'pay', args: { invoice: 'A', cents: 100 } }]),
      detailed('Paid.', 100, 64, 10, 0),
    ]);
    const metrics: ModelMetricEvent[] = [];
    const runner = new AgentRunner({
      model: openai(server),
      toolkit: new Toolkit().register(new PayTool()),
      onMetric: (event) => metrics.push(event),
    });
    const halted = await runner.run('Pay A', { runId: 'run-halt-usage' });
    expect(halted.turnUsage).toEqual([{ inputTokens: 20, outputTokens: 7 }]);
    const checkpoint = await (runner.coordinator.store as MemoryStore).loadRun('run-halt-usage');
    expect(checkpoint?.state).toMatchObject({
      usage: { inputTokens: 20, outputTokens: 7 },
      turnUsage: [{ inputTokens: 20, outputTokens: 7 }],
    });

    const final = await runner.resume({ id: halted.pending?.id as string, ok: true });
    expect(final.turnUsage).toEqual([
      { inputTokens: 20, outputTokens: 7 },
      { inputTokens: 100, outputTokens: 10, cachedInputTokens: 64, reasoningTokens: 0 },
    ]);
    expect(final.usage).toEqual({ inputTokens: 120, outputTokens: 17, cachedInputTokens: 64, reasoningTokens: 0 });
    expect(metrics.map((m) => [m.runId, m.turn])).toEqual([
      ['run-halt-usage', 1],
      ['run-halt-usage', 2],
    ]);
  });
});
