/** `redactRun`: a copy of a run fit for a client (docs/agents.md, "Returning a run to a client"). */
import { IsString } from 'class-validator';
import { REDACTED, Sensitive, Tool, Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel, type FunctionToolCall } from 'toolnexus-ts/models';
import { AgentRunner, redactRun } from 'toolnexus-ts/agents';

const SECRET = 'sk-live-canary-4711';

class LoginArgs {
  @IsString() user!: string;
  @IsString() @Sensitive() password!: string;
}

@Tool({ name: 'login', description: 'Logs in', args: LoginArgs })
class Login {
  run(args: LoginArgs) {
    return `logged in ${args.user} with ${args.password}`;
  }
}

async function runWith(calls: FunctionToolCall[]) {
  const toolkit = new Toolkit().register(Login);
  const model = new FunctionModel(({ messages }) => {
    const last = messages[messages.length - 1];
    return last?.role === 'tool' ? `result: ${last.content}` : { toolCalls: calls };
  });
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit }) });
  return { toolkit, result: await runner.run(`log in, the password is ${SECRET}`) };
}

describe('redactRun', () => {
  it('redacts the sensitive field in toolCalls and the transcript, and every quoted copy, leaving the run as it was', async () => {
    const { toolkit, result } = await runWith([{ id: 'c1', name: 'login', arguments: { user: 'dana', password: SECRET } }]);
    const before = JSON.stringify(result);
    const view = redactRun(result, toolkit);
    expect(JSON.stringify(view)).not.toContain(SECRET);
    expect(JSON.parse(view.toolCalls[0]!.arguments)).toEqual({ user: 'dana', password: REDACTED });
    expect(view.toolCalls[0]).toMatchObject({ status: 'ok', result: { output: `logged in dana with ${REDACTED}` } });
    expect(view.messages[0]).toEqual({ role: 'user', content: `log in, the password is ${REDACTED}` });
    expect(view.text).toBe(`result: logged in dana with ${REDACTED}`);
    expect(JSON.stringify(result)).toBe(before);
    expect(JSON.stringify(result)).toContain(SECRET);
  });

  it('redacts whole the arguments of a tool the toolkit does not know, and malformed arguments of one with sensitive fields', async () => {
    const { toolkit, result } = await runWith([
      { id: 'c1', name: 'elsewhere', arguments: { token: SECRET } },
      { id: 'c2', name: 'login', arguments: `{"user":"dana","password":"${SECRET}"` },
    ]);
    const view = redactRun(result, toolkit);
    expect(view.toolCalls.map((c) => [c.name, c.arguments, c.status])).toEqual([
      ['elsewhere', REDACTED, 'error'],
      ['login', REDACTED, 'error'],
    ]);
    const assistant = view.messages.find((m) => m.role === 'assistant');
    expect(assistant?.role === 'assistant' ? assistant.toolCalls?.map((c) => c.arguments) : undefined).toEqual([REDACTED, REDACTED]);
  });
});
