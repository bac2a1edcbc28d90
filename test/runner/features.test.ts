/**
 * Run features (issue 47, docs/design.md "The runner"): a stop is a value a feature returns, not
 * something a tool result carries. A call a guardrail refused with a block, recorded in a durable
 * step, still stops the run when another driver recovers that step; and the refused call's result
 * says only why it did not run.
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Tool, Toolkit, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, type GuardrailSubject, type RunState, type StepCall } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';

class NoteArgs {
  @IsString() text!: string;
}

/** A tool whose calls wait until the test lets them go: its driver is "stuck" inside it. */
@Tool({ name: 'note', description: 'Writes a note', args: NoteArgs })
class NoteTool {
  runs = 0;
  release: () => void = () => undefined;
  readonly gate = new Promise<void>((resolve) => (this.release = resolve));
  async run(args: NoteArgs) {
    this.runs++;
    await this.gate;
    return success({ noted: args.text });
  }
}

const blockSecrets = (subject: GuardrailSubject) =>
  subject.stage === 'toolInput' && subject.arguments.includes('secret')
    ? { action: 'block' as const, message: 'no secrets in notes' }
    : { action: 'allow' as const };

function driver(store: MemoryStore, tool: NoteTool, asked: { count: number }) {
  const toolkit = new Toolkit().register(tool);
  const model = new FunctionModel(({ messages }) => {
    asked.count++;
    return messages.some((m) => m.role === 'tool')
      ? 'noted'
      : {
          toolCalls: [
            { id: 'call_1', name: 'note', arguments: { text: 'hi' } },
            { id: 'call_2', name: 'note', arguments: { text: 'secret' } },
          ],
        };
  });
  return new AgentRunner({
    model,
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, store }),
    durability: 'step',
    guardrails: { toolInput: [blockSecrets] },
  });
}

async function until(condition: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 500 && !(await condition()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!(await condition())) throw new Error('timed out waiting');
}

it('a block recorded in a durable step stops the run when another driver recovers the step', async () => {
  const store = new MemoryStore();
  const stuck = new NoteTool();
  const firstAsked = { count: 0 };
  const first = driver(store, stuck, firstAsked)
    .run('note hi and the secret', { runId: 'r-blocked' })
    .catch((error: unknown) => error);
  // call_1 is inside its tool; call_2 was refused, and the step records that with its stop.
  const refused = async (): Promise<StepCall | undefined> => {
    const state = (await store.loadRun('r-blocked'))?.state as RunState | undefined;
    return state?.step?.calls[1];
  };
  await until(async () => stuck.runs === 1 && (await refused())?.result !== undefined);
  const recorded = await refused();
  expect(recorded?.stop).toMatchObject({ status: 'blocked', guardrail: 'blockSecrets', stage: 'toolInput' });
  expect(recorded?.result).toEqual({ output: 'not run: a guardrail stopped the run', isError: true });

  // Another driver takes the step over (its first driver is stuck): the block still ends the run.
  const secondAsked = { count: 0 };
  const recovered = await driver(store, new NoteTool(), secondAsked).recover('r-blocked', { force: true });
  expect(recovered.status).toBe('blocked');
  expect(recovered.stop).toMatchObject({ status: 'blocked', stage: 'toolInput', message: 'no secrets in notes' });
  expect(secondAsked.count).toBe(0); // the model is not asked again
  expect(firstAsked.count).toBe(1);
  stuck.release();
  await first;
});
