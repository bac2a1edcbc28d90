/**
 * Progress (issue 36): a tool's `ctx.progress` in a run someone listens to becomes `progress` run
 * events, at most one per call every 100 ms on the runner's clock (the latest in between kept,
 * the last sent before the call's result), a transient `data-toolnexus-progress` part of the
 * UI message stream, and an event of the tool's span.
 */
import { Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent } from 'toolnexus-ts/agents';
import { toUIMessageStream } from 'toolnexus-ts/chat';
import { FakeClock } from '../fixtures/fake-clock';
import { startOtel } from '../fixtures/telemetry/sdk';

function agent(clock: FakeClock, steps: (ctx: ToolContext, clock: FakeClock) => Promise<void>, options: { telemetry?: object } = {}) {
  const toolkit = new Toolkit({ ...options }).register(
    defineTool({
      name: 'export_data',
      description: 'Exports the data',
      run: async (_args, ctx?: ToolContext) => {
        await steps(ctx as ToolContext, clock);
        return 'exported';
      },
    }),
  );
  const model = new FunctionModel(({ messages }) =>
    messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ id: 'c1', name: 'export_data', arguments: {} }] },
  );
  return new AgentRunner({ model, toolkit, clock, ...options });
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const afterAllShutdown: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const shutdown of afterAllShutdown) await shutdown();
});

const progressOf = (events: RunEvent[]) => events.filter((e) => e.type === 'progress');

describe('progress', () => {
  it('sends the first update at once, coalesces the rest into the latest every 100 ms, and the last before the result', async () => {
    const clock = new FakeClock();
    const runner = agent(clock, async (ctx, c) => {
      ctx.progress?.(1, 10, 'starting'); // sent at once
      ctx.progress?.(2, 10); // held...
      ctx.progress?.(3, 10, 'three'); // ...replaced: the latest is kept
      c.advance(100); // the interval ends: 3 goes out
      ctx.progress?.(4, 10); // held
      ctx.progress?.(5, 10, 'five'); // held, replaced; goes out before the result
    });
    const events = await collect(runner.stream('export'));
    expect(progressOf(events)).toEqual([
      { type: 'progress', callId: 'c1', name: 'export_data', progress: 1, total: 10, message: 'starting' },
      { type: 'progress', callId: 'c1', name: 'export_data', progress: 3, total: 10, message: 'three' },
      { type: 'progress', callId: 'c1', name: 'export_data', progress: 5, total: 10, message: 'five' },
    ]);
    const order = events.map((e) => e.type);
    expect(order.lastIndexOf('progress')).toBeLessThan(order.indexOf('tool_result'));
    expect(clock.timers).toHaveLength(0);
  });

  it('is not offered when nobody listens, and drops what comes after the result', async () => {
    const clock = new FakeClock();
    let offered: unknown = 'not called';
    let late: ((p: number) => void) | undefined;
    const runner = agent(clock, async (ctx) => {
      offered = ctx.progress;
      late = ctx.progress;
    });
    expect((await runner.run('export')).status).toBe('done');
    expect(offered).toBeUndefined();
    const streamed = agent(clock, async (ctx) => {
      late = ctx.progress;
    });
    const events = await collect(streamed.stream('export'));
    late?.(9);
    expect(progressOf(events)).toEqual([]);
  });

  it('cuts a long message and ignores a progress that is not a number', async () => {
    const clock = new FakeClock();
    const runner = agent(clock, async (ctx, c) => {
      ctx.progress?.(Number.NaN);
      ctx.progress?.('7' as unknown as number);
      ctx.progress?.(1, undefined, 'x'.repeat(600));
      c.advance(100);
    });
    const [only, ...rest] = progressOf(await collect(runner.stream('export')));
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ progress: 1 });
    expect((only as { message: string }).message).toHaveLength(501);
  });

  it('is a transient data-toolnexus-progress part of the UI message stream', async () => {
    const clock = new FakeClock();
    const runner = agent(clock, async (ctx) => {
      ctx.progress?.(1, 2, 'half way');
    });
    const parts = [];
    for await (const part of toUIMessageStream(runner.stream('export'), { messageId: 'm1' })) parts.push(part);
    expect(parts.filter((p) => p.type === 'data-toolnexus-progress')).toEqual([
      {
        type: 'data-toolnexus-progress',
        id: 'progress-c1',
        data: { toolCallId: 'c1', toolName: 'export_data', progress: 1, total: 2, message: 'half way' },
        transient: true,
      },
    ]);
  });

  it('is an event of the tool’s execute_tool span', async () => {
    const otel = startOtel();
    afterAllShutdown.push(() => otel.shutdown());
    const clock = new FakeClock();
    const telemetry = { tracerProvider: otel.tracerProvider };
    const runner = agent(
      clock,
      async (ctx) => {
        ctx.progress?.(1, 4);
        ctx.progress?.(2, 4);
      },
      { telemetry },
    );
    await collect(runner.stream('export'));
    const span = otel.spans().find((s) => s.name === 'execute_tool export_data');
    expect(span?.events.map((e) => [e.name, e.attributes])).toEqual([
      ['progress', { 'toolnexus.progress': 1, 'toolnexus.progress.total': 4 }],
      ['progress', { 'toolnexus.progress': 2, 'toolnexus.progress.total': 4 }],
    ]);
  });
});
