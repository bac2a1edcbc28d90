/**
 * `runner.resume(answers, { audit })` records who answered and why with each answer it
 * applies (docs/operating.md, "Audit trail"), and a decline's comment reaches the model.
 */
import { Toolkit, defineTool, pending, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';

function agent() {
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'pay',
      description: 'Pays after approval',
      run: (_args, ctx) => (ctx?.answer ? success('paid') : pending({ kind: 'approval', prompt: 'Pay?' })),
    }),
  );
  const seen: string[] = [];
  const model = new FunctionModel(({ messages }) => {
    const last = messages[messages.length - 1];
    if (last?.role === 'tool') {
      seen.push(last.content);
      return 'done';
    }
    return { toolCalls: [{ name: 'pay', arguments: {} }] };
  });
  const coordinator = new ResumeCoordinator({ toolkit });
  return { runner: new AgentRunner({ model, toolkit, coordinator }), coordinator, seen };
}

describe('AgentRunner.resume with an audit', () => {
  it('records the principal and comment of an approval', async () => {
    const { runner, coordinator } = agent();
    const halted = await runner.run('pay it');
    const id = halted.pending!.id;
    const final = await runner.resume({ id, ok: true }, { audit: { by: { id: 'user:dana', name: 'Dana' }, comment: 'fine' } });
    expect(final.status).toBe('done');
    expect(await coordinator.get(id)).toMatchObject({ status: 'resolved', answeredBy: { id: 'user:dana', name: 'Dana' }, comment: 'fine' });
  });

  it('tells the model a decline’s comment', async () => {
    const { runner, coordinator, seen } = agent();
    const id = (await runner.run('pay it')).pending!.id;
    await runner.resume({ id, ok: false }, { audit: { by: { id: 'user:sam' }, comment: 'not this month' } });
    expect(seen).toEqual(['declined/expired: Pay? (declined: "not this month")']);
    expect((await coordinator.get(id))?.answeredBy).toEqual({ id: 'user:sam' });
  });
});
