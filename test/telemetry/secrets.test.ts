/**
 * Content capture is off by default; opted in, it records messages, tool arguments and
 * results with `@Sensitive` fields and the configured secrets redacted. A canary in the API
 * key, a header, a `@Sensitive` DTO field (of a call that runs and of one that suspends) and
 * a tool result never reaches any attribute of any span, event, link or metric point.
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Sensitive, Tool, Toolkit, pending, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { json, openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { everyAttributeText, startOtel, type Otel } from '../fixtures/telemetry/sdk';

const CANARY = 'canary-5e1f0c7a9b';
const RESULT_SECRET = 'tok-live-41d2aa';

class LoginArgs {
  @IsString() user!: string;
  @IsString() @Sensitive() password!: string;
}

@Tool({ name: 'login', description: 'Signs in', args: LoginArgs })
class LoginTool {
  run(args: LoginArgs): string {
    return `signed in ${args.user} with session ${RESULT_SECRET}`;
  }
}

@Tool({ name: 'rotate', description: 'Rotates a password; asks first', args: LoginArgs })
class RotateTool {
  run(args: LoginArgs, ctx?: ToolContext): unknown {
    return ctx?.answer ? `rotated for ${args.user}` : pending({ kind: 'approval', prompt: `Rotate the password of ${args.user}?` });
  }
}

const ECHOED = 'echoed-pw-7c3d91';

/** Copies its sensitive argument into its result, as a careless tool does: no `secrets` option names it. */
@Tool({ name: 'echo_login', description: 'Signs in and says how', args: LoginArgs })
class EchoLoginTool {
  run(args: LoginArgs): string {
    return JSON.stringify({ user: args.user, usedPassword: args.password, note: `signed in with ${args.password}` });
  }
}

let otel: Otel;
let server: MockServer;

beforeAll(async () => {
  otel = startOtel();
  const args = JSON.stringify({ user: 'dana', password: CANARY });
  server = await startMockServer([
    json(200, {
      id: 'c1',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_login', type: 'function', function: { name: 'login', arguments: args } },
              { id: 'call_rotate', type: 'function', function: { name: 'rotate', arguments: args } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 7 },
    }),
    openaiText('All set.'),
  ]);
});
afterAll(async () => {
  await server.close();
  await otel.shutdown();
});

it('no canary in any exported span or metric, with content capture on', async () => {
  const telemetry = {
    tracerProvider: otel.tracerProvider,
    meterProvider: otel.meterProvider,
    captureContent: true,
    secrets: [RESULT_SECRET],
  };
  const toolkit = new Toolkit({ telemetry }).register(LoginTool, RotateTool);
  const coordinator = new ResumeCoordinator({ toolkit, telemetry: { ...telemetry, recordAnsweredBy: true } });
  const model = new OpenAIChatModel({
    baseUrl: `${server.url}/v1`,
    model: 'gpt-test',
    apiKey: `sk-${CANARY}`,
    headers: { 'x-gateway-key': CANARY },
    retry: { maxAttempts: 1 },
  });
  const runner = new AgentRunner({ model, toolkit, coordinator, telemetry, systemPrompt: 'You sign people in.' });
  const first = await runner.run('Sign dana in and rotate');
  expect(first.status).toBe('halted');
  const final = await runner.resume({ id: first.pending?.id as string, ok: true }, { audit: { by: { id: 'user:ops' } } });
  expect(final.status).toBe('done');
  // The canary really went through the model's wire and the tools.
  expect(server.requests[0]?.headers.authorization).toBe(`Bearer sk-${CANARY}`);
  expect(server.requests[1]?.raw).toContain(RESULT_SECRET);

  const spans = otel.spans();
  const texts = everyAttributeText(spans);
  const metrics = JSON.stringify((await otel.metrics()).scopeMetrics.flatMap((scope) => scope.metrics.map((m) => m.dataPoints)));
  // Capture is on: content is there, redacted.
  const login = spans.find((span) => span.name === 'execute_tool login');
  expect(JSON.parse(login?.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ user: 'dana', password: '[redacted]' });
  expect(login?.attributes['gen_ai.tool.call.result']).toBe('signed in dana with session [redacted]');
  const secondChat = spans.filter((span) => span.name === 'chat gpt-test')[1];
  expect(secondChat?.attributes['gen_ai.input.messages']).toContain('"password":"[redacted]"');
  expect(spans.find((span) => span.name === 'resolve_suspension rotate')?.attributes['toolnexus.answered_by']).toBe('user:ops');
  for (const text of [...texts, metrics]) {
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(RESULT_SECRET);
  }
});

it('records no content by default', async () => {
  otel.reset();
  const telemetry = { tracerProvider: otel.tracerProvider };
  const toolkit = new Toolkit({ telemetry }).register(LoginTool);
  await toolkit.execute('login', { user: 'dana', password: CANARY }, { callId: 'call_1' });
  const [span] = otel.spans();
  expect(span?.name).toBe('execute_tool login');
  expect(Object.keys(span?.attributes ?? {}).sort()).toEqual([
    'gen_ai.operation.name',
    'gen_ai.tool.call.id',
    'gen_ai.tool.name',
    'gen_ai.tool.type',
    'toolnexus.tool.outcome',
  ]);
});

it('masks a @Sensitive value a tool copied into its result, in the tool span and in the next model call', async () => {
  otel.reset();
  const echoServer = await startMockServer([
    openaiCalls([{ id: 'call_echo', name: 'echo_login', args: { user: 'dana', password: ECHOED } }]),
    openaiText('Done.'),
  ]);
  try {
    const telemetry = { tracerProvider: otel.tracerProvider, captureContent: true };
    const toolkit = new Toolkit({ telemetry }).register(EchoLoginTool);
    const model = new OpenAIChatModel({ baseUrl: `${echoServer.url}/v1`, model: 'gpt-test', apiKey: 'sk-test', retry: { maxAttempts: 1 } });
    const runner = new AgentRunner({ model, toolkit, telemetry });
    expect((await runner.run('Sign dana in')).status).toBe('done');
    // The tool really copied it, and the model really got it back.
    expect(echoServer.requests[1]?.raw).toContain(ECHOED);

    const spans = otel.spans();
    const tool = spans.find((span) => span.name === 'execute_tool echo_login');
    expect(JSON.parse(tool?.attributes['gen_ai.tool.call.result'] as string)).toEqual({
      user: 'dana',
      usedPassword: '[redacted]',
      note: 'signed in with [redacted]',
    });
    const secondChat = spans.filter((span) => span.name === 'chat gpt-test')[1];
    expect(secondChat?.attributes['gen_ai.input.messages']).toContain('usedPassword');
    for (const text of everyAttributeText(spans)) expect(text).not.toContain(ECHOED);
  } finally {
    await echoServer.close();
  }
});
