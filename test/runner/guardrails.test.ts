/**
 * Guardrails (issue 36, docs/guardrails.md): input guardrails before the first model call
 * (or beside it, opted in, with nothing of the call used until they pass), output guardrails
 * that hold streamed text back (whole turns, or sentence by sentence) so text that fails never
 * reaches the UI stream (read by the AI SDK's own `readUIMessageStream`), tool guardrails on
 * arguments and results, each allowing, blocking (status `blocked`, never a successful-looking
 * result) or giving feedback (the model reads it and the run goes on, bounded), recorded in
 * the result and checkpoint, traced, and in sub-agents too. Models answer over real HTTP on
 * 127.0.0.1 where the wire matters (the streamed cases); the loop logic uses FunctionModel.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage, UIMessageChunk } from 'ai';
import { Toolkit, defineTool, success } from 'toolnexus-ts';
import { FunctionModel, OpenAIChatModel } from 'toolnexus-ts/models';
import {
  AgentRunner,
  type AgentRunnerOptions,
  type GuardrailVerdict,
  type OutputSubject,
  type RunEvent,
  type Guardrail,
  type ToolOutputSubject,
} from 'toolnexus-ts/agents';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { toUIMessageStream, type UIStreamPart } from 'toolnexus-ts/chat';
import { loadAiClient } from '../fixtures/chat/ai-client';
import { openaiStream, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { startOtel } from '../fixtures/telemetry/sdk';

const ai = loadAiClient();
const servers: MockServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function httpModel(replies: Reply[]): Promise<{ model: OpenAIChatModel; server: MockServer }> {
  const server = await startMockServer(replies);
  servers.push(server);
  return { server, model: new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }) };
}

/** A tool that counts its runs. */
function countedToolkit(): { toolkit: Toolkit; runs: string[] } {
  const runs: string[] = [];
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'lookup',
      description: 'Looks an order up',
      run: (args: object) => {
        runs.push(JSON.stringify(args));
        return success({ status: 'shipped', secret: 'hunter2' });
      },
    }),
  );
  return { toolkit, runs };
}

/** No answer may mention the secret: blocks it, or (feedback) tells the model. */
class NoSecrets implements Guardrail<OutputSubject> {
  constructor(private readonly mode: 'block' | 'feedback' = 'block') {}
  check(subject: OutputSubject): GuardrailVerdict {
    return /secret/i.test(subject.segment) ? { action: this.mode, message: 'never mention the secret' } : { action: 'allow' };
  }
}

/** The run's UI message stream, as chunks and as the AI SDK's client assembles it. */
async function uiOf(events: AsyncGenerator<RunEvent>): Promise<{ chunks: UIStreamPart[]; message: UIMessage }> {
  const chunks: UIStreamPart[] = [];
  for await (const part of toUIMessageStream(events, { messageId: 'm1' })) chunks.push(part);
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let message: UIMessage | undefined;
  for await (const next of ai.readUIMessageStream<UIMessage>({ stream })) message = next;
  return { chunks, message: message as UIMessage };
}

const textOf = (message: UIMessage) =>
  message.parts
    .filter((p) => p.type === 'text')
    .map((p) => (p as { text: string }).text)
    .join('');

const ANSWER = ['Your order ', 'has shipped.', ' The secret', ' code is 1234.', ' Thanks!'];

describe('output guardrails while streaming (hold-back)', () => {
  it('segments: the first sentence reaches the UI stream, the failing second never does, and the run ends blocked', async () => {
    const { model, server } = await httpModel([openaiStream(ANSWER)]);
    const { toolkit } = countedToolkit();
    const runner = new AgentRunner({ model, toolkit, guardrails: { output: [new NoSecrets()], holdBack: 'segments' } });
    const { chunks, message } = await uiOf(runner.stream('Where is my order?'));
    expect(textOf(message)).toBe('Your order has shipped. ');
    expect(JSON.stringify(chunks)).not.toMatch(/The secret|1234|Thanks/);
    const done = chunks.find((c) => c.type === 'data-toolnexus-stop') as { data: unknown } | undefined;
    expect(done?.data).toEqual({ status: 'blocked', guardrail: 'NoSecrets', stage: 'output', message: 'never mention the secret' });
    expect(chunks[chunks.length - 1]).toEqual({ type: 'finish', finishReason: 'content-filter' });
    expect(message.parts.some((p) => p.type === 'data-toolnexus-stop')).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('turn: nothing of a failing turn reaches the stream; the result is blocked, never done, and keeps no failed text', async () => {
    const { model } = await httpModel([openaiStream(ANSWER)]);
    const runner = new AgentRunner({ model, toolkit: countedToolkit().toolkit, guardrails: { output: [new NoSecrets()] } });
    const events: RunEvent[] = [];
    for await (const event of runner.stream('Where is my order?')) events.push(event);
    expect(events.filter((e) => e.type === 'text')).toEqual([]);
    const done = events.find((e) => e.type === 'done') as Extract<RunEvent, { type: 'done' }>;
    expect(done.result.status).toBe('blocked');
    expect(done.result.text).toBe('');
    expect(JSON.stringify(done.result.messages)).not.toMatch(/secret/);
    expect(done.result.output).toBeUndefined();
    expect(done.result.guardrails).toEqual([
      { guardrail: 'NoSecrets', stage: 'output', action: 'block', message: 'never mention the secret', turn: 1 },
    ]);
  });

  it('a passing answer streams whole in turn mode, and in pieces (one check per sentence, not per chunk) in segments mode', async () => {
    const clean = ['Your order ', 'has shipped.', ' It arrives', ' Monday.', ' Thanks!'];
    const seen: string[] = [];
    const spy = (subject: OutputSubject): GuardrailVerdict => {
      seen.push(subject.segment);
      return { action: 'allow' };
    };
    const { model } = await httpModel([openaiStream(clean)]);
    const runner = new AgentRunner({ model, toolkit: countedToolkit().toolkit, guardrails: { output: [spy], holdBack: 'segments' } });
    const { message, chunks } = await uiOf(runner.stream('Where?'));
    expect(textOf(message)).toBe('Your order has shipped. It arrives Monday. Thanks!');
    expect(chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(1);
    expect(seen.join('')).toBe('Your order has shipped. It arrives Monday. Thanks!');
    expect(seen.length).toBeLessThanOrEqual(4);

    const whole = await httpModel([openaiStream(clean)]);
    const turnRunner = new AgentRunner({ model: whole.model, toolkit: countedToolkit().toolkit, guardrails: { output: [spy] } });
    const turn = await uiOf(turnRunner.stream('Where?'));
    expect(turn.chunks.filter((c) => c.type === 'text-delta')).toHaveLength(1);
    expect(textOf(turn.message)).toBe('Your order has shipped. It arrives Monday. Thanks!');
  });

  it('feedback: the model gets the feedback (not its withheld text) and its next answer passes', async () => {
    const { model, server } = await httpModel([openaiStream(ANSWER), openaiStream(['Your order has shipped.'])]);
    const runner = new AgentRunner({
      model,
      toolkit: countedToolkit().toolkit,
      guardrails: { output: [new NoSecrets('feedback')], holdBack: 'segments' },
    });
    const { chunks, message } = await uiOf(runner.stream('Where is my order?'));
    expect(JSON.stringify(chunks)).not.toMatch(/secret|1234/);
    expect(chunks.some((c) => c.type === 'data-toolnexus-stop')).toBe(false);
    expect(chunks[chunks.length - 1]).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(textOf(message)).toContain('Your order has shipped.');
    const second = server.requests[1]?.body as { messages: Array<{ role: string; content: string }> };
    expect(second.messages.at(-1)).toEqual({ role: 'user', content: '[guardrail] never mention the secret' });
    expect(JSON.stringify(second.messages)).not.toMatch(/1234/);
  });

  it('feedback rounds are bounded: one more than maxFeedback blocks', async () => {
    let asked = 0;
    const model = new FunctionModel(() => {
      asked++;
      return 'The secret is out.';
    });
    const runner = new AgentRunner({
      model,
      toolkit: countedToolkit().toolkit,
      guardrails: { output: [new NoSecrets('feedback')], maxFeedback: 2 },
    });
    const result = await runner.run('Tell me');
    expect(asked).toBe(3);
    expect(result.status).toBe('blocked');
    expect(result.stop).toMatchObject({
      status: 'blocked',
      guardrail: 'NoSecrets',
      message: 'feedback rounds spent: never mention the secret',
    });
  });

  it('holdBack none streams at once and still blocks the run at the end (the documented trade-off)', async () => {
    const { model } = await httpModel([openaiStream(ANSWER)]);
    const runner = new AgentRunner({
      model,
      toolkit: countedToolkit().toolkit,
      guardrails: { output: [new NoSecrets()], holdBack: 'none' },
    });
    const { message, chunks } = await uiOf(runner.stream('Where?'));
    expect(textOf(message)).toContain('secret');
    expect(chunks[chunks.length - 1]).toEqual({ type: 'finish', finishReason: 'content-filter' });
  });
});

describe('input guardrails', () => {
  const noRefunds = (subject: { text: string }): GuardrailVerdict =>
    /refund/i.test(subject.text) ? { action: 'block', message: 'refunds go through a person' } : { action: 'allow' };

  it('a trip makes zero model calls and zero tool calls', async () => {
    const { model, server } = await httpModel([openaiText('never asked')]);
    const { toolkit, runs } = countedToolkit();
    const runner = new AgentRunner({ model, toolkit, guardrails: { input: [noRefunds] } });
    const result = await runner.run('I want a refund');
    expect(result.status).toBe('blocked');
    expect(result.stop).toEqual({ status: 'blocked', guardrail: 'noRefunds', stage: 'input', message: 'refunds go through a person' });
    expect(server.requests).toHaveLength(0);
    expect(runs).toHaveLength(0);
    expect(result.turns).toBe(0);
    expect(result.toolCalls).toEqual([]);
  });

  it('run beside the first model call (opted in): the call is made, but none of its text leaves and none of its tools run', async () => {
    const { model, server } = await httpModel([openaiStream(['Refunding now.'], [{ id: 'c1', name: 'lookup', args: { order: '7' } }])]);
    const { toolkit, runs } = countedToolkit();
    const slow = async (subject: { text: string }): Promise<GuardrailVerdict> => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return noRefunds(subject);
    };
    const runner = new AgentRunner({ model, toolkit, guardrails: { input: [slow], parallelInput: true } });
    const events: RunEvent[] = [];
    for await (const event of runner.stream('I want a refund')) events.push(event);
    expect(server.requests).toHaveLength(1);
    expect(runs).toHaveLength(0);
    expect(events.filter((e) => e.type === 'text' || e.type === 'tool_call')).toEqual([]);
    expect((events.at(-1) as Extract<RunEvent, { type: 'done' }>).result.status).toBe('blocked');
  });

  it('feedback joins the transcript for the model to read, and the run goes on', async () => {
    const model = new FunctionModel(({ messages }) => `I read: ${messages.map((m) => ('content' in m ? m.content : '')).join(' | ')}`);
    const runner = new AgentRunner({
      model,
      toolkit: countedToolkit().toolkit,
      guardrails: { input: [() => ({ action: 'feedback', message: 'the user is a guest' })] },
    });
    const result = await runner.run('Hello');
    expect(result.status).toBe('done');
    expect(result.text).toBe('I read: Hello | [guardrail] the user is a guest');
  });
});

describe('tool guardrails', () => {
  const calling = () =>
    new FunctionModel(({ messages }) => {
      const tool = messages.filter((m) => m.role === 'tool');
      if (tool.length === 0) return { toolCalls: [{ id: 'c1', name: 'lookup', arguments: { order: '7' } }] };
      return `seen: ${tool.map((m) => (m.role === 'tool' ? m.content : '')).join(' | ')}`;
    });

  it('on arguments: a block stops the run before the tool runs; the transcript stays whole', async () => {
    const { toolkit, runs } = countedToolkit();
    const runner = new AgentRunner({
      model: calling(),
      toolkit,
      guardrails: { toolInput: [(s) => (s.tool === 'lookup' ? { action: 'block', message: 'no lookups today' } : { action: 'allow' })] },
    });
    const result = await runner.run('Where is 7?');
    expect(runs).toEqual([]);
    expect(result.status).toBe('blocked');
    expect(result.stop).toMatchObject({ stage: 'toolInput', message: 'no lookups today' });
    expect(result.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'c1', isError: true });
  });

  it('on arguments: feedback is the call’s result (it never runs) and the model goes on', async () => {
    const { toolkit, runs } = countedToolkit();
    const runner = new AgentRunner({
      model: calling(),
      toolkit,
      guardrails: { toolInput: [() => ({ action: 'feedback', message: 'ask for the order number first' })] },
    });
    const result = await runner.run('Where is it?');
    expect(runs).toEqual([]);
    expect(result.status).toBe('done');
    expect(result.text).toBe('seen: ask for the order number first');
  });

  it('on results: feedback replaces what the model would have seen; a block stops the run', async () => {
    const redact = (s: ToolOutputSubject): GuardrailVerdict =>
      s.result.output.includes('hunter2')
        ? { action: 'feedback', message: 'the result held a secret and was withheld' }
        : { action: 'allow' };
    const { toolkit, runs } = countedToolkit();
    const runner = new AgentRunner({ model: calling(), toolkit, guardrails: { toolOutput: [redact] } });
    const result = await runner.run('Where is 7?');
    expect(runs).toHaveLength(1);
    expect(result.text).toBe('seen: the result held a secret and was withheld');
    expect(JSON.stringify(result.messages)).not.toMatch(/hunter2/);

    const blocking = new AgentRunner({
      model: calling(),
      toolkit: countedToolkit().toolkit,
      guardrails: { toolOutput: [() => ({ action: 'block', message: 'leak' })] },
    });
    expect((await blocking.run('Where is 7?')).status).toBe('blocked');
  });

  it('a guardrail that throws blocks (fail closed) and its error is not shown', async () => {
    const runner = new AgentRunner({
      model: calling(),
      toolkit: countedToolkit().toolkit,
      guardrails: {
        toolInput: [
          function classifier(): GuardrailVerdict {
            throw new Error('classifier down: token sk-live-123');
          },
        ],
      },
    });
    const result = await runner.run('Where is 7?');
    expect(result.stop).toEqual({
      status: 'blocked',
      guardrail: 'classifier',
      stage: 'toolInput',
      message: 'the guardrail classifier failed',
    });
    expect(JSON.stringify(result)).not.toMatch(/sk-live/);
  });

  it('a halted call’s result is checked when its answer comes, in the resuming runner, and the blocked run is final', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tnx-guard-'));
    dirs.push(dir);
    const store = new SqliteStore({ filename: join(dir, 'runs.db') });
    const toolkit = new Toolkit().register(
      defineTool({ name: 'lookup', description: 'Looks up', approval: { prompt: 'Look it up?' }, run: () => success('secret: hunter2') }),
    );
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const options: AgentRunnerOptions = { model: calling(), toolkit, coordinator };
    const halted = await new AgentRunner(options).run('Where is 7?');
    expect(halted.status).toBe('halted');
    const guarded = new AgentRunner({ ...options, guardrails: { toolOutput: [() => ({ action: 'block', message: 'leak' })] } });
    const result = await guarded.resume({ id: halted.pending!.id, ok: true });
    expect(result.status).toBe('blocked');
    const stored = await store.loadRun(halted.runId);
    expect(stored?.state).toMatchObject({ phase: 'blocked', stop: { status: 'blocked', stage: 'toolOutput' } });
    await expect(guarded.recover(halted.runId, { force: true })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_RESUME' });
    await store.close();
  });
});

describe('guardrails in sub-agents, traces and results', () => {
  it('a sub-agent’s block ends the calling run blocked too, with the path it happened in', async () => {
    const child = new AgentRunner({
      name: 'research',
      model: new FunctionModel(() => 'The secret is 42.'),
      toolkit: new Toolkit(),
      guardrails: { output: [new NoSecrets()] },
    });
    const toolkit = new Toolkit().register(child.asTool({ name: 'research', description: 'Researches' }));
    const parent = new AgentRunner({
      model: new FunctionModel(({ messages }) =>
        messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ id: 'c1', name: 'research', arguments: { input: 'dig' } }] },
      ),
      toolkit,
    });
    const result = await parent.run('Find out');
    expect(result.status).toBe('blocked');
    expect(result.stop).toEqual({
      status: 'blocked',
      guardrail: 'NoSecrets',
      stage: 'output',
      message: 'never mention the secret',
      path: ['research'],
    });
  });

  it('each check is an event of the active span', async () => {
    const otel = startOtel();
    try {
      const runner = new AgentRunner({
        model: new FunctionModel(() => 'fine'),
        toolkit: new Toolkit(),
        telemetry: { tracerProvider: otel.tracerProvider },
        guardrails: { input: [() => ({ action: 'allow' })], output: [new NoSecrets()] },
      });
      const result = await runner.run('hi');
      expect(result.guardrails?.map((r) => [r.stage, r.action])).toEqual([
        ['input', 'allow'],
        ['output', 'allow'],
      ]);
      const events = otel.spans().flatMap((span) => span.events.filter((e) => e.name === 'guardrail'));
      expect(events.map((e) => e.attributes?.['toolnexus.guardrail.stage'])).toEqual(['input', 'output']);
    } finally {
      await otel.shutdown();
    }
  });

  it('bad options are refused clearly', () => {
    const base = { model: new FunctionModel(() => 'x'), toolkit: new Toolkit() };
    expect(() => new AgentRunner({ ...base, guardrails: { holdBack: 'never' as never } })).toThrow(/holdBack/);
    expect(() => new AgentRunner({ ...base, guardrails: { output: [{} as never] } })).toThrow(/check\(\)/);
    expect(() => new AgentRunner({ ...base, guardrails: { maxFeedback: -1 } })).toThrow(/maxFeedback/);
  });
});
