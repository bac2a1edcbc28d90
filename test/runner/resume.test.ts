/**
 * Durable suspension in one process (the default in-memory coordinator) and every way a
 * resume can be asked wrongly: each is a typed error that leaves the stored run as it was.
 */
import { Toolkit, defineTool, pending, type Answer } from 'toolnexus-ts';
import { InvalidAnswerError, AlreadyResolvedError, ResumeCoordinator, UnknownSuspensionError } from 'toolnexus-ts/suspension';
import { FunctionModel, ModelHttpError } from 'toolnexus-ts/models';
import {
  AgentRunner,
  InvalidResumeError,
  RunCheckpointError,
  RunConflictError,
  RunNotFoundError,
  type AgentToolContext,
  type RunEvent,
} from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { PayTool, WeatherTool } from '../fixtures/runner/tools';

/** Turn 1: a weather lookup and two payments; then an answer that lists what came back. */
function agent(options: { coordinator?: ResumeCoordinator; toolkit?: Toolkit } = {}) {
  const payTool = new PayTool();
  const toolkit = options.toolkit ?? new Toolkit().register(WeatherTool, payTool);
  let modelCalls = 0;
  const model = new FunctionModel(({ messages }) => {
    modelCalls++;
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length > 0) return `results: ${results.map((m) => m.content).join(' / ')}`;
    return {
      text: 'working',
      toolCalls: [
        { id: 'w', name: 'weather', arguments: { city: 'Lima' } },
        { id: 'p1', name: 'pay', arguments: { invoice: 'A', cents: 100 } },
        { id: 'p2', name: 'pay', arguments: { invoice: 'B', cents: 200 } },
      ],
    };
  });
  const runner = new AgentRunner({ model, toolkit, coordinator: options.coordinator });
  return { runner, payTool, toolkit, modelCalls: () => modelCalls };
}

describe('durable suspension in one process', () => {
  it('halts, then resumes with the default in-memory coordinator', async () => {
    const { runner, payTool, modelCalls } = agent();
    const halted = await runner.run('pay A and B');
    expect(halted).toMatchObject({ status: 'halted', turns: 1, text: 'working' });
    expect(halted.runId).toMatch(/^run-/);
    expect(halted.pendings).toHaveLength(2);
    expect(halted.messages.map((m) => m.role)).toEqual(['user', 'assistant']);

    const [a, b] = halted.pendings ?? [];
    const stillHalted = await runner.resume({ id: a?.id as string, ok: true });
    expect(stillHalted.status).toBe('halted');
    expect(stillHalted.pending?.id).toBe(b?.id);
    expect(stillHalted.toolCalls.map((c) => c.result.isError)).toEqual([false, false, true]);
    expect(modelCalls()).toBe(1);

    const final = await runner.resume({ id: b?.id as string, ok: true });
    expect(final.status).toBe('done');
    expect(final.text).toBe('results: Lima: sunny / {"paid":"A","cents":100} / {"paid":"B","cents":200}');
    expect(payTool.paid).toEqual(['A', 'B']);
    expect(final.runId).toBe(halted.runId);
  });

  it('streams the halt: tool calls, the finished result, every pause, then done with status pending', async () => {
    const { runner } = agent();
    const events: RunEvent[] = [];
    for await (const event of runner.stream('pay')) events.push(event);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['text', 'tool_call', 'tool_call', 'tool_call']);
    expect(types.slice(4, 7).sort()).toEqual(['pending', 'pending', 'tool_result']); // as each call finishes
    expect(types.at(-1)).toBe('done');
    expect(types).toHaveLength(8);
    const done = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
    expect(done.result.status).toBe('halted');
    const pendingEvents = events.filter((e): e is Extract<RunEvent, { type: 'pending' }> => e.type === 'pending');
    expect(pendingEvents.map((e) => e.callId)).toEqual(['p1', 'p2']);

    const resumed: RunEvent[] = [];
    for await (const event of runner.resumeStream(done.result.pendings?.map((p) => ({ id: p.id, ok: true })) ?? [])) resumed.push(event);
    expect(resumed.map((e) => e.type)).toEqual(['tool_result', 'tool_result', 'text', 'done']);
    expect((resumed.at(-1) as Extract<RunEvent, { type: 'done' }>).result.status).toBe('done');
  });
});

describe('resume refuses what it cannot apply, changing nothing', () => {
  async function halted() {
    const store = new MemoryStore();
    const toolkit = new Toolkit().register(WeatherTool, new PayTool());
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const built = agent({ coordinator, toolkit });
    const result = await built.runner.run('pay', { runId: 'run-1' });
    const snapshot = async () => ({ run: await store.loadRun('run-1'), calls: await store.list() });
    return { ...built, store, coordinator, result, before: await snapshot(), snapshot };
  }

  it.each<[string, (ids: string[]) => Answer | Answer[], new (...args: never[]) => Error, string | RegExp]>([
    ['no answers', () => [], InvalidResumeError, 'resume needs at least one answer'],
    [
      'the same id twice',
      ([a]) => [
        { id: a as string, ok: true },
        { id: a as string, ok: false },
      ],
      InvalidResumeError,
      /^answer pnd-.+ is given twice$/,
    ],
    ['an answer without ok', ([a]) => ({ id: a }) as Answer, InvalidAnswerError, 'invalid answer: ok must be a boolean'],
    [
      'an answer that is not an object',
      () => 'yes' as unknown as Answer,
      InvalidAnswerError,
      'invalid answer: expected an object { id, ok, data?, reason? }',
    ],
    ['an unknown id', () => ({ id: 'pnd-stale', ok: true }), UnknownSuspensionError, 'unknown suspension: pnd-stale'],
    [
      'a batch with one unknown id',
      ([a]) => [
        { id: a as string, ok: true },
        { id: 'pnd-stale', ok: true },
      ],
      UnknownSuspensionError,
      'unknown suspension: pnd-stale',
    ],
  ])('refuses %s', async (_name, answers, type, message) => {
    const { runner, result, before, snapshot, payTool } = await halted();
    const ids = result.pendings?.map((p) => p.id) ?? [];
    const error = await runner.resume(answers(ids)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toMatch(message);
    expect(await snapshot()).toEqual(before);
    expect(payTool.paid).toEqual([]);
  });

  it('refuses answers that belong to different runs', async () => {
    const store = new MemoryStore();
    const toolkit = new Toolkit().register(WeatherTool, new PayTool());
    const { runner } = agent({ coordinator: new ResumeCoordinator({ toolkit, store }), toolkit });
    const one = await runner.run('pay', { runId: 'run-a' });
    const two = await runner.run('pay', { runId: 'run-b' });
    const answers = [one.pending, two.pending].map((p) => ({ id: p?.id as string, ok: true }));
    await expect(runner.resume(answers)).rejects.toThrow('the answers belong to different runs (run-a, run-b): resume one run at a time');
    expect((await store.list({ status: 'pending' })).length).toBe(4);
  });

  it('refuses a suspension that no run recorded, and a run without a checkpoint', async () => {
    const store = new MemoryStore();
    const toolkit = new Toolkit().register(new PayTool());
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const runner = new AgentRunner({ model: new FunctionModel(() => 'x'), toolkit, coordinator });
    const loose = await coordinator.execute('pay', { invoice: 'Z', cents: 1 });
    const orphan = await coordinator.execute('pay', { invoice: 'Y', cents: 1 }, undefined, { runId: 'run-gone', callId: 'c' });
    const looseId = (loose.metadata?.pending as { id: string }).id;
    const orphanId = (orphan.metadata?.pending as { id: string }).id;
    await expect(runner.resume({ id: looseId, ok: true })).rejects.toThrow(
      `suspension ${looseId} belongs to no agent run: resolve it with ResumeCoordinator.resolve`,
    );
    await expect(runner.resume({ id: orphanId, ok: true })).rejects.toThrow(RunNotFoundError);
    await expect(runner.resume({ id: orphanId, ok: true })).rejects.toThrow('no checkpoint for run run-gone');
    expect((await store.list({ status: 'pending' })).length).toBe(2);
  });

  it('refuses a checkpoint it cannot read, naming what is wrong', async () => {
    const { runner, store, result, coordinator } = await halted();
    await store.saveRun({ runId: 'run-1', version: 2, state: { format: 'someone-else/9' }, updatedAt: new Date().toISOString() });
    const error = await runner.resume({ id: result.pending?.id as string, ok: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunCheckpointError);
    expect((error as Error).message).toBe(
      'checkpoint of run run-1 cannot be used: unknown state format "someone-else/9" (expected toolnexus.run/1)',
    );
    expect((await coordinator.get(result.pending?.id as string))?.status).toBe('pending');
  });

  it('refuses to halt a second run under a runId that already has a checkpoint', async () => {
    const { runner, coordinator } = await halted();
    const error = await runner.run('again', { runId: 'run-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunConflictError);
    expect((error as Error).message).toBe('run run-1: a checkpoint with this runId already exists; give each run its own runId');
    // The second run's pauses can never be resumed: they are cancelled, not left pending.
    const second = await coordinator.list({ runId: 'run-1', status: 'cancelled' });
    expect(second).toHaveLength(2);
    expect(await coordinator.list({ runId: 'run-1', status: 'pending' })).toHaveLength(2); // the first run's, untouched
  });
});

describe('recover: a resumed loop that stopped on a model error', () => {
  /** A model that fails on its `failOn`-th call (1-based), and otherwise plays the `agent()` script. */
  function flaky(failOn: number) {
    let calls = 0;
    const store = new MemoryStore();
    const payTool = new PayTool();
    const toolkit = new Toolkit().register(WeatherTool, payTool);
    const model = new FunctionModel(({ messages }) => {
      calls++;
      if (calls === failOn) throw new ModelHttpError('function', 503, 'overloaded', 3);
      const results = messages.filter((m) => m.role === 'tool');
      if (results.length > 0) return `results: ${results.map((m) => m.content).join(' / ')}`;
      return { toolCalls: [{ id: 'p1', name: 'pay', arguments: { invoice: 'A', cents: 100 } }] };
    });
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    return { runner, store, payTool, calls: () => calls };
  }

  it('keeps the spent answers: the checkpoint says failed, and recover asks the model again without re-running tools', async () => {
    const { runner, store, payTool, calls } = flaky(2);
    const halted = await runner.run('pay', { runId: 'run-flaky' });
    const answer = { id: halted.pending?.id as string, ok: true };

    await expect(runner.resume(answer)).rejects.toThrow('function returned HTTP 503: overloaded (after 3 attempts)');
    const failed = await store.loadRun('run-flaky');
    expect(failed?.state).toMatchObject({ phase: 'failed', error: 'function returned HTTP 503: overloaded (after 3 attempts)' });
    expect((failed?.state.messages as Array<{ role: string }>).map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(payTool.paid).toEqual(['A']);

    // A conflicting answer is refused, names the run, and changes nothing.
    const conflict = await runner.resume({ ...answer, ok: false }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(AlreadyResolvedError);
    expect((conflict as AlreadyResolvedError).runId).toBe('run-flaky');
    expect(await store.loadRun('run-flaky')).toEqual(failed);

    const final = await runner.recover('run-flaky');
    expect(final).toMatchObject({ status: 'done', text: 'results: {"paid":"A","cents":100}', turns: 2 });
    expect(calls()).toBe(3);
    expect(payTool.paid).toEqual(['A']);
    expect((await store.loadRun('run-flaky'))?.state).toMatchObject({ phase: 'done' });
    await expect(runner.recover('run-flaky')).rejects.toThrow('run run-flaky is already done');
    // The same answer again (a retried POST) returns the run's result again; nothing runs.
    expect(await runner.resume(answer)).toEqual(final);
    expect(calls()).toBe(3);
  });

  it('the same answer again after the model failed continues the run (a retried POST): the tool does not run again', async () => {
    const { runner, payTool, calls } = flaky(2);
    const halted = await runner.run('pay', { runId: 'run-retry' });
    const answer = { id: halted.pending?.id as string, ok: true };
    await expect(runner.resume(answer)).rejects.toThrow('overloaded');
    const final = await runner.resume(answer);
    expect(final).toMatchObject({ status: 'done', text: 'results: {"paid":"A","cents":100}' });
    expect(calls()).toBe(3);
    expect(payTool.paid).toEqual(['A']);
  });

  it('refuses to recover a run that waits for answers, an unknown run, and (without force) a running one', async () => {
    const { runner, store } = flaky(99);
    const halted = await runner.run('pay', { runId: 'run-wait' });
    await expect(runner.recover('run-wait')).rejects.toThrow(
      `run run-wait is waiting for answers to ${halted.pending?.id}: resume it with them`,
    );
    await expect(runner.recover('run-none')).rejects.toThrow(RunNotFoundError);

    // A checkpoint left `running` by a process that died after taking the last answer.
    const checkpoint = await store.loadRun('run-wait');
    const state = structuredClone(checkpoint?.state) as {
      phase: string;
      halted: { calls: Array<{ pendingId?: string; result: unknown }> };
    };
    state.phase = 'running';
    (state as { driver?: object }).driver = { id: 'driver-elsewhere', renewedAt: new Date().toISOString() };
    for (const call of state.halted.calls) {
      delete call.pendingId;
      call.result = { output: 'paid elsewhere', isError: false };
    }
    await store.saveRun({ runId: 'run-wait', version: 2, state, updatedAt: new Date().toISOString() });
    await expect(runner.recover('run-wait')).rejects.toThrow(
      'run run-wait: another process is continuing it and renewing its lease; pass { force: true } only if that process is gone',
    );
    const forced = await runner.recover('run-wait', { force: true });
    expect(forced).toMatchObject({ status: 'done', text: 'results: paid elsewhere' });
    expect(forced.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});

describe('resume details', () => {
  it('hands the replay the context given to resume (never stored) with the original callId', async () => {
    const seen: Array<{ tenant?: unknown; callId?: string; answered: boolean }> = [];
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'approve',
        description: 'Needs approval',
        run: (_args, ctx?: AgentToolContext<{ tenant?: string }>) => {
          seen.push({ tenant: ctx?.tenant, callId: ctx?.callId, answered: ctx?.answer !== undefined });
          return ctx?.answer ? 'approved' : pending({ kind: 'approval', prompt: 'OK?' });
        },
      }),
    );
    const store = new MemoryStore();
    const model = new FunctionModel(
      ({ messages }) =>
        messages.find((m) => m.role === 'tool')?.content ?? { toolCalls: [{ id: 'call_x', name: 'approve', arguments: {} }] },
    );
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    const halted = await runner.run('go', { context: { tenant: 'acme' } });
    expect(JSON.stringify((await store.loadRun(halted.runId))?.state)).not.toContain('acme');
    const final = await runner.resume({ id: halted.pending?.id as string, ok: true }, { context: { tenant: 'globex' } });
    expect(final.text).toBe('approved');
    expect(seen).toEqual([
      { tenant: 'acme', callId: 'call_x', answered: false },
      { tenant: 'globex', callId: 'call_x', answered: true },
    ]);
  });

  it('ends incomplete after the resume when the halted turn was the last one allowed', async () => {
    const store = new MemoryStore();
    const toolkit = new Toolkit().register(WeatherTool, new PayTool());
    const { runner: base } = agent({ coordinator: new ResumeCoordinator({ toolkit, store }), toolkit });
    const runner = new AgentRunner({ model: base.model, toolkit, coordinator: base.coordinator, maxTurns: 1 });
    const halted = await runner.run('pay', { runId: 'run-limit' });
    const final = await runner.resume((halted.pendings ?? []).map((p) => ({ id: p.id, ok: true })));
    expect(final).toMatchObject({ status: 'incomplete', limit: 'maxTurns', turns: 1 });
    expect(final.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool']);
    expect((await store.loadRun('run-limit'))?.state).toMatchObject({ phase: 'incomplete' });
  });
});
