/**
 * The path of an answer carries what it checked (docs/design.md): a checked answer is not
 * checked again, and the stored call is read once before the claim, whether the answer comes
 * through `answerAs` with a coordinator, with a runner, or through `resolve`.
 */
import { Toolkit, defineTool, pending, pendingOf, type Answer } from 'toolnexus-ts';
import { ResumeCoordinator, type Audit, type SuspendedCall } from 'toolnexus-ts/suspension';
import { AgentRunner, answerAs } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { MemoryStore } from 'toolnexus-ts/memory';

/** A memory store that logs its reads and claims, in order. */
class LoggedStore extends MemoryStore {
  readonly log: string[] = [];

  override async get(id: string): Promise<SuspendedCall | undefined> {
    this.log.push('get');
    return super.get(id);
  }

  override async claim(...args: [string, Answer, number, Audit?]) {
    this.log.push('claim');
    return super.claim(...args);
  }

  readsBeforeClaim(): number {
    const claim = this.log.indexOf('claim');
    return this.log.slice(0, claim === -1 ? undefined : claim).filter((entry) => entry === 'get').length;
  }
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys after approval',
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  run: (args, ctx) => (ctx?.answer ? `deployed ${String(args.env)}` : pending({ kind: 'approval', prompt: `Deploy ${String(args.env)}?` })),
});

function coordinator(): { store: LoggedStore; coordinator: ResumeCoordinator } {
  const store = new LoggedStore();
  return { store, coordinator: new ResumeCoordinator({ toolkit: new Toolkit().register(deploy), store }) };
}

describe('the path of an answer', () => {
  it('resolve reads the stored call once before its claim', async () => {
    const { store, coordinator: c } = coordinator();
    const first = await c.execute('deploy', '{"env":"prod"}');
    store.log.length = 0;
    expect(await c.resolve({ id: pendingOf(first)!.id, ok: true })).toEqual({ output: 'deployed prod', isError: false });
    expect(store.readsBeforeClaim()).toBe(1);
  });

  it('answerAs with a coordinator reads the call once before the claim, and the answer it checked is not checked again', async () => {
    const { store, coordinator: c } = coordinator();
    const first = await c.execute('deploy', { env: 'prod' });
    store.log.length = 0;
    const answered = await answerAs(c, { id: pendingOf(first)!.id, ok: true }, { by: { id: 'alice' } });
    expect(answered).toMatchObject({ won: true, outcome: { output: 'deployed prod', isError: false } });
    expect(store.readsBeforeClaim()).toBe(1);
  });

  it('answerAs with a runner reads the call once before the claim, through the resume', async () => {
    const store = new LoggedStore();
    const toolkit = new Toolkit().register(deploy);
    const model = new FunctionModel(({ messages }) => {
      const results = messages.filter((m) => m.role === 'tool');
      return results.length > 0
        ? results.map((m) => m.content).join(' | ')
        : { toolCalls: [{ id: 'c1', name: 'deploy', arguments: '{"env":"prod"}' }] };
    });
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    const halted = await runner.run('deploy');
    const id = halted.status === 'halted' ? halted.pending.id : '';
    store.log.length = 0;
    const answered = await answerAs(runner, { id, ok: true }, { by: { id: 'alice' } });
    expect(answered.run).toMatchObject({ continued: true, result: { status: 'done', text: 'deployed prod' } });
    expect(store.readsBeforeClaim()).toBe(1);
  });

  it('answerAs given the call a door just read reads it no more before the claim, and refuses a call of another id', async () => {
    const { store, coordinator: c } = coordinator();
    const id = pendingOf(await c.execute('deploy', { env: 'prod' }))!.id;
    const other = pendingOf(await c.execute('deploy', { env: 'test' }))!.id;
    const read = (await c.get(id))!;
    await expect(answerAs(c, { id: other, ok: true }, { by: { id: 'alice' }, call: read })).rejects.toThrow(
      /the call given is not suspension/,
    );
    store.log.length = 0;
    const answered = await answerAs(c, { id, ok: true }, { by: { id: 'alice' }, call: read });
    expect(answered).toMatchObject({ won: true, outcome: { output: 'deployed prod', isError: false } });
    expect(store.readsBeforeClaim()).toBe(0);
    expect((await c.get(other))?.status).toBe('pending');
  });

  it('a checked answer is an Answer like any other: its mark is not enumerable', () => {
    const { coordinator: c } = coordinator();
    const checked = c.checkAnswer({ id: 'pnd-1', ok: true, data: { n: 1 } });
    expect(checked).toStrictEqual({ id: 'pnd-1', ok: true, data: { n: 1 } });
    expect(JSON.stringify(checked)).toBe('{"id":"pnd-1","ok":true,"data":{"n":1}}');
    expect(c.checkAnswer(checked)).toBe(checked);
    const other = new ResumeCoordinator({ toolkit: new Toolkit(), maxAnswerBytes: 16 });
    expect(() => other.checkAnswer(checked)).not.toThrow();
    expect(() => other.checkAnswer(c.checkAnswer({ id: 'pnd-1', ok: true, data: { text: 'x'.repeat(64) } }))).toThrow(
      /larger than 16 bytes/,
    );
  });
});
