/**
 * Continuing a halted run whose questions were answered without its runner
 * (`continue` / `continueStream`), and the one driver lease: a durable-steps run renews it
 * on the runner's clock.
 */
import { Toolkit, defineTool, pending } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { AgentRunner, InvalidResumeError, type RunEvent } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FakeClock, until } from '../fixtures/fake-clock';

function approvalAgent(store: MemoryStore, calls = 1) {
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'pay',
      description: 'Pays, once approved',
      inputSchema: { type: 'object', properties: {} },
      run: (_args, ctx) => (ctx?.answer ? 'paid' : pending({ kind: 'approval', prompt: 'Pay?' })),
    }),
  );
  const model = new FunctionModel(({ messages }) => {
    const results = messages.filter((m) => m.role === 'tool');
    if (results.length > 0) return `done: ${results.map((m) => m.content).join(', ')}`;
    return { toolCalls: Array.from({ length: calls }, (_, i) => ({ id: `call_${i}`, name: 'pay', arguments: {} })) };
  });
  const coordinator = new ResumeCoordinator({ toolkit, store });
  return { runner: new AgentRunner({ model, toolkit, coordinator }), coordinator };
}

describe('continue: a halted run answered without its runner', () => {
  it('goes on from the answers the store holds, streamed, once the last is given', async () => {
    const store = new MemoryStore();
    const { runner, coordinator } = approvalAgent(store, 2);
    const halted = await runner.run('pay twice', { runId: 'run-continue' });
    expect(halted.pendings?.length).toBe(2);
    await coordinator.resolve({ id: halted.pendings![0]!.id, ok: true });
    await expect(runner.continue('run-continue')).rejects.toBeInstanceOf(InvalidResumeError);

    await coordinator.resolve({ id: halted.pendings![1]!.id, ok: true });
    const events: RunEvent['type'][] = [];
    let text: string | undefined;
    for await (const event of runner.continueStream('run-continue')) {
      events.push(event.type);
      if (event.type === 'done') text = event.result.text;
    }
    expect(events).toEqual(['text', 'done']);
    expect(text).toBe('done: paid, paid');
    // Continued already: the run's result again, nothing runs twice.
    expect(await runner.continue('run-continue')).toMatchObject({ status: 'done', text: 'done: paid, paid', turns: 2 });
  });
});

describe('the driver lease', () => {
  it('is renewed on the runner clock while a durable-steps run is driven', async () => {
    const store = new MemoryStore();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'wait',
        description: 'Waits',
        inputSchema: { type: 'object', properties: {} },
        idempotent: true,
        run: async () => {
          started = true;
          await gate;
          return 'waited';
        },
      }),
    );
    const model = new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'over' : { toolCalls: [{ id: 'call_1', name: 'wait', arguments: {} }] },
    );
    const clock = new FakeClock();
    const runner = new AgentRunner({
      model,
      toolkit,
      durability: 'step',
      runLeaseMs: 300,
      clock,
      coordinator: new ResumeCoordinator({ toolkit, store }),
    });
    const running = runner.run('wait', { runId: 'run-lease' });
    await until(() => started);
    const before = (await store.loadRun('run-lease'))!;
    clock.advance(100); // a third of the lease: one renewal
    let after = before;
    while (after.version === before.version) {
      await new Promise((resolve) => setImmediate(resolve));
      after = (await store.loadRun('run-lease'))!;
    }
    expect(after.state).toMatchObject({ phase: 'running', step: { turn: 1 } });
    expect((after.state as { driver: { renewedAt: string } }).driver.renewedAt).toBe(new Date(clock.now()).toISOString());
    expect(after.updatedAt).toBe(new Date(clock.now()).toISOString());
    release();
    expect(await running).toMatchObject({ status: 'done', text: 'over' });
  });
});
