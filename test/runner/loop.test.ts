/**
 * The loop itself, driven by an in-process FunctionModel: parallelism, call order,
 * contexts, limits, inline suspension (waitFor) and the event stream.
 */
import { InvalidArgumentError, Toolkit, defineTool, pending, type Answer, type PendingRequest, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel, ModelResponseError, type ChatMessage, type ModelRequest } from 'toolnexus-ts/models';
import { AgentRunner, type AgentToolContext, type RunEvent } from 'toolnexus-ts/agents';
import { PayTool, weatherToolkit } from '../fixtures/runner/tools';

/** A model that asks for `calls` on its first turn and answers `final` once it has seen tool results. */
function scripted(calls: Array<{ id: string; name: string; arguments: Record<string, unknown> | string }>, final = 'done') {
  const seen: ModelRequest[] = [];
  const model = new FunctionModel((request) => {
    seen.push(request);
    return request.messages.some((m) => m.role === 'tool') ? final : { toolCalls: calls };
  });
  return { model, seen };
}

async function collect(events: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const out: RunEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe('the loop', () => {
  it('runs the calls of a turn in parallel and feeds results back in call order', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const finished: string[] = [];
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'slow',
        description: 'Waits',
        inputSchema: { type: 'object', properties: { ms: { type: 'integer' } }, required: ['ms'] },
        run: async ({ ms }) => {
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await new Promise((resolve) => setTimeout(resolve, ms as number));
          inFlight--;
          finished.push(`slow ${String(ms)}`);
          return `waited ${String(ms)}`;
        },
      }),
    );
    const { model, seen } = scripted([
      { id: 'a', name: 'slow', arguments: { ms: 60 } },
      { id: 'b', name: 'slow', arguments: { ms: 1 } },
      { id: 'c', name: 'slow', arguments: { ms: 30 } },
    ]);
    const result = await new AgentRunner({ model, toolkit }).run('go');

    expect(maxInFlight).toBe(3);
    expect(finished).toEqual(['slow 1', 'slow 30', 'slow 60']);
    expect(seen[1]?.messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? [m.callId, m.content] : []))).toEqual([
      ['a', 'waited 60'],
      ['b', 'waited 1'],
      ['c', 'waited 30'],
    ]);
    expect(result.status).toBe('done');
  });

  it('gives each call a shallow copy of the run context plus signal and callId', async () => {
    const contexts: AgentToolContext<{ tenant: string; scope: { db: string } }>[] = [];
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'who',
        description: 'Reports its context',
        run: (_args, ctx) => {
          const agent = ctx as AgentToolContext<{ tenant: string; scope: { db: string } }>;
          // The run's signal: the caller's, joined with the run's own cancel (runner.cancel).
          unaborted.push(agent.signal?.aborted === false);
          contexts.push(agent);
          // The caller leaves while the run runs (its signal is followed while the run lasts, no longer).
          if (contexts.length === 2) controller.abort(new Error('caller gone'));
          return 'ok';
        },
      }),
    );
    const context = { tenant: 'acme', scope: { db: 'primary' } };
    const controller = new AbortController();
    const unaborted: boolean[] = [];
    const { model } = scripted([
      { id: 'call_1', name: 'who', arguments: {} },
      { id: 'call_2', name: 'who', arguments: {} },
    ]);
    await expect(new AgentRunner({ model, toolkit }).run('who?', { context, signal: controller.signal })).rejects.toThrow('caller gone');

    expect(contexts.map((c) => c.callId)).toEqual(['call_1', 'call_2']);
    expect(unaborted).toEqual([true, true]);
    for (const ctx of contexts) {
      expect(ctx).not.toBe(context);
      expect(ctx.tenant).toBe('acme');
      expect(ctx.scope).toBe(context.scope); // shallow: the host's objects are shared, not cloned
    }
    for (const ctx of contexts) expect(ctx.signal?.reason).toEqual(new Error('caller gone'));
    expect(contexts[0]).not.toBe(contexts[1]);
    expect(context).toEqual({ tenant: 'acme', scope: { db: 'primary' } }); // the host's object is untouched
  });

  it('ends incomplete at maxTurns with the last turn results in a balanced transcript', async () => {
    let calls = 0;
    const model = new FunctionModel(() => ({
      text: `turn ${++calls}`,
      toolCalls: [{ id: `c${calls}`, name: 'weather', arguments: { city: 'Lima' } }],
    }));
    const result = await new AgentRunner({ model, toolkit: weatherToolkit(), maxTurns: 3 }).run('loop forever');

    expect(result).toMatchObject({ status: 'incomplete', limit: 'maxTurns', turns: 3, text: 'turn 3' });
    expect(calls).toBe(3);
    expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool']);
    expect(result.toolCalls.map((c) => c.turn)).toEqual([1, 2, 3]);
  });

  it('continues from a given transcript without adding anything before it', async () => {
    const { model, seen } = scripted([], 'unused');
    const result = await new AgentRunner({ model, toolkit: weatherToolkit() }).run([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'bye' },
    ]);
    expect(seen[0]?.messages.map((m) => m.content)).toEqual(['hi', 'hello', 'bye']);
    expect(result.messages).toHaveLength(4);
  });

  it('rejects with the signal reason when the run is cancelled, without calling the model', async () => {
    const { model, seen } = scripted([]);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(new AgentRunner({ model, toolkit: weatherToolkit() }).run('x', { signal: controller.signal })).rejects.toThrow('stop');
    expect(seen).toHaveLength(0);
  });

  it('rejects a function model reply that is neither text nor a turn', async () => {
    const runner = new AgentRunner({ model: new FunctionModel(() => 42 as unknown as string), toolkit: weatherToolkit() });
    await expect(runner.run('x')).rejects.toThrow(ModelResponseError);
    await expect(runner.run('x')).rejects.toThrow(
      'function sent an unreadable response: the function returned number, not a string or { text, toolCalls }',
    );
    const nameless = new AgentRunner({ model: new FunctionModel(() => ({ toolCalls: [{ name: '' }] })), toolkit: weatherToolkit() });
    await expect(nameless.run('x')).rejects.toThrow('tool call #0 has no name');
  });

  it('rejects bad construction and bad input clearly', () => {
    const toolkit = weatherToolkit();
    const model = new FunctionModel(() => 'x');
    expect(() => new AgentRunner({ model: {} as FunctionModel, toolkit })).toThrow('AgentRunner needs a model with a complete() method');
    expect(() => new AgentRunner({ model, toolkit, maxTurns: 0 })).toThrow('maxTurns must be a positive integer, got 0');
    expect(() => new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit: new Toolkit() }) })).toThrow(
      InvalidArgumentError,
    );
    expect(() => new AgentRunner({ model, toolkit, waitFor: 'yes' as unknown as () => never })).toThrow('waitFor must be a function');
    expect(() => new FunctionModel('reply' as unknown as () => string)).toThrow('FunctionModel needs a function');
  });

  it('rejects bad run input clearly', async () => {
    const runner = new AgentRunner({ model: new FunctionModel(() => 'x'), toolkit: weatherToolkit() });
    await expect(runner.run(42 as unknown as string)).rejects.toThrow(
      'run needs a user message (a string) or a transcript (an array of messages)',
    );
    await expect(runner.run('x', { runId: '' })).rejects.toThrow('runId must be a non-empty string');
    await expect(runner.run([{ role: 'system', content: 'x' } as unknown as ChatMessage])).rejects.toThrow(
      'every transcript entry needs a role of "user", "assistant" or "tool"',
    );
    await expect(runner.recover('')).rejects.toThrow(InvalidArgumentError);
  });
});

describe('suspension with waitFor (in process)', () => {
  function payModel(ids: string[]) {
    return scripted(
      ids.map((id, i) => ({ id, name: 'pay', arguments: { invoice: `inv-${i + 1}`, cents: 100 * (i + 1) } })),
      'payments handled',
    );
  }

  it('answers each suspended call inline and replays it with the answer; the run continues', async () => {
    const payTool = new PayTool();
    const asked: PendingRequest[] = [];
    const { model, seen } = payModel(['p1', 'p2']);
    const runner = new AgentRunner({
      model,
      toolkit: new Toolkit().register(payTool),
      waitFor: (request) => {
        asked.push(request);
        return { id: request.id, ok: request.prompt.includes('inv-1') };
      },
    });
    const result = await runner.run('pay both');

    expect(result.status).toBe('done');
    expect(asked.map((r) => r.kind)).toEqual(['approval', 'approval']);
    expect(payTool.paid).toEqual(['inv-1']);
    const tools = seen[1]?.messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? [m.callId, m.content] : []));
    expect(tools).toEqual([
      ['p1', '{"paid":"inv-1","cents":100}'],
      ['p2', 'declined/expired: Pay 200 cents for invoice inv-2? (declined)'],
    ]);
  });

  it.each<[string, (request: PendingRequest) => Answer | Promise<Answer>, RegExp]>([
    ['a mismatched id', () => ({ id: 'pnd-other', ok: true }), /^answer id pnd-other does not match pending request pnd-/],
    ['a waitFor that throws', () => Promise.reject(new Error('channel closed')), /^no answer to pnd-.+: channel closed$/],
    ['a malformed answer', (r) => ({ id: r.id }) as Answer, /^invalid answer to pnd-.+: ok must be a boolean$/],
    [
      'a declined answer',
      (r) => ({ id: r.id, ok: false, reason: 'declined' }),
      /^declined\/expired: Pay 100 cents for invoice inv-1\? \(declined\)$/,
    ],
  ])('feeds %s back as an error result, never replaying the tool', async (_name, waitFor, expected) => {
    const payTool = new PayTool();
    const { model, seen } = payModel(['p1']);
    const result = await new AgentRunner({ model, toolkit: new Toolkit().register(payTool), waitFor }).run('pay');
    expect(result.status).toBe('done');
    expect(payTool.paid).toEqual([]);
    const tool = seen[1]?.messages.find((m) => m.role === 'tool');
    expect(tool).toMatchObject({ role: 'tool', callId: 'p1', isError: true });
    expect(tool?.content).toMatch(expected);
  });

  it('reports a replay that suspends again as unresolved instead of looping', async () => {
    let runs = 0;
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'login',
        description: 'Always wants a login',
        run: () => {
          runs++;
          return pending({ kind: 'authorization', prompt: 'Log in', url: 'https://example.test/login' });
        },
      }),
    );
    const { model, seen } = scripted([{ id: 'l1', name: 'login', arguments: {} }]);
    await new AgentRunner({ model, toolkit, waitFor: (r) => ({ id: r.id, ok: true }) }).run('x');
    expect(runs).toBe(2);
    expect(seen[1]?.messages.find((m) => m.role === 'tool')?.content).toBe('unresolved: Log in');
  });

  it('streams the pending event before waitFor runs', async () => {
    const payTool = new PayTool();
    const { model } = payModel(['p1']);
    let announce: (request: PendingRequest) => void = () => undefined;
    const announced = new Promise<PendingRequest>((resolve) => (announce = resolve));
    const runner = new AgentRunner({
      model,
      toolkit: new Toolkit().register(payTool),
      // Answers only once the consumer has seen the pending event: were the event emitted
      // after waitFor, this would time out.
      waitFor: async (request) => {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<never>(
          (_, reject) => (timer = setTimeout(() => reject(new Error('pending was not streamed first')), 2000)),
        );
        const seenRequest = await Promise.race([announced, late]).finally(() => clearTimeout(timer));
        return { id: seenRequest.id, ok: seenRequest.id === request.id };
      },
    });
    const events: RunEvent[] = [];
    for await (const event of runner.stream('pay')) {
      events.push(event);
      if (event.type === 'pending') announce(event.request);
    }
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'pending', 'tool_result', 'text', 'done']);
    expect(events[1]).toMatchObject({ type: 'pending', callId: 'p1', request: { kind: 'approval' } });
    expect(events[2]).toMatchObject({
      type: 'tool_result',
      callId: 'p1',
      result: { output: '{"paid":"inv-1","cents":100}', isError: false },
    });
    expect(payTool.paid).toEqual(['inv-1']);
  });
});

describe('stream()', () => {
  it('yields the model text once when the model cannot stream, then done', async () => {
    const runner = new AgentRunner({ model: new FunctionModel(() => 'hello there'), toolkit: weatherToolkit() });
    const events = await collect(runner.stream('hi'));
    expect(events.map((e) => e.type)).toEqual(['text', 'done']);
    expect(events[0]).toEqual({ type: 'text', delta: 'hello there' });
  });

  it('cancels the run when the consumer stops reading', async () => {
    let toolSignal: AbortSignal | undefined;
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'wait',
        description: 'Waits for cancellation',
        run: (_args, ctx?: ToolContext) =>
          new Promise<string>((resolve) => {
            toolSignal = ctx?.signal;
            ctx?.signal?.addEventListener('abort', () => resolve('aborted'));
          }),
      }),
    );
    const { model, seen } = scripted([{ id: 'w', name: 'wait', arguments: {} }]);
    for await (const event of new AgentRunner({ model, toolkit }).stream('x')) {
      if (event.type === 'tool_call') break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(toolSignal?.aborted).toBe(true);
    expect(seen).toHaveLength(1); // the model is not asked again after the consumer left
  });

  it('rethrows a model failure to the consumer', async () => {
    const runner = new AgentRunner({
      model: new FunctionModel(() => {
        throw new Error('backend down');
      }),
      toolkit: weatherToolkit(),
    });
    await expect(collect(runner.stream('x'))).rejects.toThrow('backend down');
  });
});
