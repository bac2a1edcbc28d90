/**
 * Limits (issue 36): `maxParallelTools` bounds the calls of one turn running at once, also the
 * replays of a halted turn's answers; a tool's `concurrency` bounds its calls through its
 * Toolkit across runs. Concurrency is counted inside the tools; they yield to the event loop
 * (no timers), so without a limit every call of a turn would be in flight together.
 */
import { InvalidArgumentError, Toolkit, ToolRegistrationError, defineTool, pending, type JsonSchema, type ToolContext } from 'toolnexus-ts';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';

function counter() {
  const state = { inFlight: 0, max: 0, started: [] as string[] };
  const work = async (label: string) => {
    state.inFlight++;
    state.max = Math.max(state.max, state.inFlight);
    state.started.push(label);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    state.inFlight--;
    return `done ${label}`;
  };
  return { state, work };
}

/** A model that asks for `n` calls of `tool` at once, then answers with the results it got. */
function fanOut(tool: string, n: number) {
  return new FunctionModel(({ messages }) => {
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length === 0) return { toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i}`, name: tool, arguments: { i } })) };
    return results.map((m) => m.content).join(',');
  });
}

const schema: JsonSchema = { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] };

describe('maxParallelTools', () => {
  it('runs at most two of five calls of a turn at once, and returns the five results in call order', async () => {
    const { state, work } = counter();
    const toolkit = new Toolkit().register(
      defineTool({ name: 'slow', description: 'Slow', inputSchema: schema, run: ({ i }) => work(String(i)) }),
    );
    const result = await new AgentRunner({ model: fanOut('slow', 5), toolkit, maxParallelTools: 2 }).run('go');
    expect(state.max).toBe(2);
    expect(result.status).toBe('done');
    expect(result.status === 'done' && result.text).toBe('done 0,done 1,done 2,done 3,done 4');

    const unbounded = counter();
    const free = new Toolkit().register(
      defineTool({ name: 'slow', description: 'Slow', inputSchema: schema, run: ({ i }) => unbounded.work(String(i)) }),
    );
    await new AgentRunner({ model: fanOut('slow', 5), toolkit: free }).run('go');
    expect(unbounded.state.max).toBe(5);
  });

  it('holds with durable steps too', async () => {
    const { state, work } = counter();
    const toolkit = new Toolkit().register(
      defineTool({ name: 'slow', description: 'Slow', inputSchema: schema, idempotent: true, run: ({ i }) => work(String(i)) }),
    );
    const result = await new AgentRunner({ model: fanOut('slow', 4), toolkit, maxParallelTools: 2, durability: 'step' }).run('go');
    expect(result.status).toBe('done');
    expect(state.max).toBe(2);
  });

  it('bounds the replays of a halted turn answered all at once', async () => {
    const { state, work } = counter();
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'pay',
        description: 'Pays, once approved',
        inputSchema: schema,
        run: (args, ctx?: ToolContext) =>
          ctx?.answer ? work(String(args.i)) : pending({ kind: 'approval', prompt: `Pay ${String(args.i)}?` }),
      }),
    );
    const runner = new AgentRunner({ model: fanOut('pay', 5), toolkit, maxParallelTools: 2 });
    const halted = await runner.run('pay all');
    expect(halted.status).toBe('halted');
    const answers = (halted.status === 'halted' ? halted.pendings : []).map((request) => ({ id: request.id, ok: true }));
    expect(answers).toHaveLength(5);
    const done = await runner.resume(answers);
    expect(done.status === 'done' && done.text).toBe('done 0,done 1,done 2,done 3,done 4');
    expect(state.max).toBe(2);
  });

  it('is a positive integer', () => {
    const toolkit = new Toolkit();
    for (const bad of [0, 1.5, -1]) {
      expect(() => new AgentRunner({ model: fanOut('x', 1), toolkit, maxParallelTools: bad })).toThrow(InvalidArgumentError);
    }
  });
});

describe('a tool’s concurrency', () => {
  it('holds its calls through one Toolkit to its limit, across runs', async () => {
    const { state, work } = counter();
    const toolkit = new Toolkit().register(
      defineTool({ name: 'report', description: 'Builds a report', inputSchema: schema, concurrency: 1, run: ({ i }) => work(String(i)) }),
    );
    const runner = new AgentRunner({ model: fanOut('report', 3), toolkit });
    const [a, b] = await Promise.all([runner.run('one'), runner.run('two')]);
    expect([a.status, b.status]).toEqual(['done', 'done']);
    expect(state.started).toHaveLength(6);
    expect(state.max).toBe(1);
  });

  it('does not run a call cancelled while it waited, and the wait is not its timeout', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: number[] = [];
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'one_at_a_time',
        description: 'One at a time',
        inputSchema: schema,
        concurrency: 1,
        timeoutMs: 50,
        run: async ({ i }) => {
          ran.push(i as number);
          if (i === 0) await gate;
          return `ran ${String(i)}`;
        },
      }),
    );
    const first = toolkit.execute('one_at_a_time', { i: 0 }, { timeout: 10_000 });
    const controller = new AbortController();
    const cancelled = toolkit.execute('one_at_a_time', { i: 1 }, { signal: controller.signal });
    const waitsLong = toolkit.execute('one_at_a_time', { i: 2 });
    controller.abort(new Error('stop'));
    await new Promise((resolve) => setTimeout(resolve, 120)); // longer than the 50 ms timeout, spent waiting
    release();
    expect(await first).toEqual({ output: 'ran 0', isError: false });
    expect(await cancelled).toMatchObject({ isError: true, output: 'one_at_a_time cancelled' });
    expect(await waitsLong).toEqual({ output: 'ran 2', isError: false });
    expect(ran).toEqual([0, 2]);
  });

  it('is a positive integer', () => {
    expect(() => new Toolkit().register(defineTool({ name: 't', description: 'd', concurrency: 0, run: () => 'x' }))).toThrow(
      ToolRegistrationError,
    );
  });
});
