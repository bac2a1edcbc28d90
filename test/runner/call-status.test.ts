/**
 * Issue 27 item 6: every `RunResult.toolCalls` record says what became of the call, so a
 * suspension never counts as an error; the wire result stays the contract's shape.
 */
import { IsInt, IsString } from 'class-validator';
import { Tool, Toolkit, defineTool, failure, pending, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel, type FunctionToolCall } from 'toolnexus-ts/models';
import { AgentRunner, type RunResult, type ToolCallStatus } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';

class PayArgs {
  @IsInt() cents!: number;
  @IsString() to!: string;
}

@Tool({ name: 'pay', description: 'Pays after a declared approval', args: PayArgs, approval: true })
class Pay {
  run(args: PayArgs) {
    return `paid ${args.cents} to ${args.to}`;
  }
}

/** A model that asks for `calls` on its first turn and answers "done" once it sees results. */
function agent(calls: FunctionToolCall[], waitFor?: ConstructorParameters<typeof ResumeCoordinator>[0]['waitFor']) {
  const toolkit = new Toolkit().register(
    Pay,
    defineTool({ name: 'look', description: 'Looks', run: () => success('looked') }),
    defineTool({ name: 'broken', description: 'Fails', run: () => failure('the ledger is closed') }),
    defineTool({
      name: 'ask',
      description: 'Asks a question',
      run: (_args, ctx) => (ctx?.answer ? success('answered') : pending({ kind: 'question', prompt: 'Which account?' })),
    }),
  );
  const model = new FunctionModel(({ messages }) => (messages[messages.length - 1]?.role === 'tool' ? 'done' : { toolCalls: calls }));
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator(waitFor ? { toolkit, waitFor } : { toolkit, store });
  return { runner: new AgentRunner({ model, toolkit, coordinator }), coordinator, store };
}

const statuses = (result: RunResult): Array<[string, ToolCallStatus]> => result.toolCalls.map((c) => [c.name, c.status]);

describe('RunResult.toolCalls status', () => {
  it('is ok, error and pending; a pending call keeps the wire result isError: true', async () => {
    const { runner } = agent([
      { name: 'look', arguments: {} },
      { name: 'broken', arguments: {} },
      { name: 'missing', arguments: {} },
      { name: 'pay', arguments: { cents: 5, to: 'x' } },
    ]);
    const halted = await runner.run('go');
    expect(halted.status).toBe('halted');
    expect(statuses(halted)).toEqual([
      ['look', 'ok'],
      ['broken', 'error'],
      ['missing', 'error'],
      ['pay', 'pending'],
    ]);
    const pay = halted.toolCalls[3];
    expect(pay?.result.isError).toBe(true);
    expect(pay?.result.metadata?.pending).toMatchObject({ kind: 'approval' });
    // A dashboard counting errors by status counts two, not three.
    expect(halted.toolCalls.filter((c) => c.status === 'error')).toHaveLength(2);
  });

  it('is ok once the approval is given, declined once it is declined', async () => {
    const approve = agent([{ name: 'pay', arguments: { cents: 5, to: 'x' } }]);
    const id = (await approve.runner.run('go')).pending!.id;
    expect(statuses(await approve.runner.resume({ id, ok: true }))).toEqual([['pay', 'ok']]);

    const decline = agent([{ name: 'pay', arguments: { cents: 5, to: 'x' } }]);
    const other = (await decline.runner.run('go')).pending!.id;
    const done = await decline.runner.resume({ id: other, ok: false, reason: 'declined' });
    expect(done.status).toBe('done');
    expect(statuses(done)).toEqual([['pay', 'declined']]);
    // The wire result is the contract's refusal, unchanged: the status is beside it, not in it.
    expect(done.toolCalls[0]?.result).toEqual({
      output: expect.stringMatching(/^declined\/expired: .*\(declined\)$/) as string,
      isError: true,
    });
  });

  it('is cancelled or expired as the answer said, also when the call was settled without the runner', async () => {
    const { runner, coordinator } = agent([{ name: 'pay', arguments: { cents: 5, to: 'x' } }]);
    const id = (await runner.run('go')).pending!.id;
    // Settled through the coordinator alone (a CLI without the runner): the runner reads the store's status.
    await coordinator.resolve({ id, ok: false, reason: 'cancelled' });
    const done = await runner.recover((await coordinator.get(id))!.runId!);
    expect(statuses(done)).toEqual([['pay', 'cancelled']]);
  });

  it('a sibling still pending stays pending beside one that is declined', async () => {
    const { runner } = agent([
      { name: 'pay', arguments: { cents: 5, to: 'x' } },
      { name: 'ask', arguments: {} },
    ]);
    const halted = await runner.run('go');
    const [payId, askId] = halted.pendings!.map((p) => p.id);
    const still = await runner.resume({ id: payId!, ok: false, reason: 'expired' });
    expect(statuses(still)).toEqual([
      ['pay', 'expired'],
      ['ask', 'pending'],
    ]);
    const done = await runner.resume({ id: askId!, ok: true });
    expect(statuses(done)).toEqual([
      ['pay', 'expired'],
      ['ask', 'ok'],
    ]);
  });

  it('is declined for a refusal answered in process (waitFor)', async () => {
    const { runner } = agent([{ name: 'pay', arguments: { cents: 5, to: 'x' } }], (request) =>
      Promise.resolve({ id: request.id, ok: false, reason: 'declined' as const }),
    );
    const done = await runner.run('go');
    expect(done.status).toBe('done');
    expect(statuses(done)).toEqual([['pay', 'declined']]);
  });
});
