/**
 * The agent span names the agent by the runner's `name` (unless `telemetry.agentName` says
 * otherwise) and the conversation by the session the run belongs to: a chat's session id,
 * kept in the checkpoint, so the resume of a halted run (in any process) names the same
 * conversation. A run outside a session is its own conversation (its run id).
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { Tool, Toolkit, pending, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { startOtel, type Otel } from '../fixtures/telemetry/sdk';

class CloseArgs {
  @IsString() account!: string;
}

@Tool({ name: 'close_account', description: 'Closes an account; asks first', args: CloseArgs })
class CloseAccountTool {
  run(args: CloseArgs, ctx?: ToolContext): unknown {
    return ctx?.answer ? `closed ${args.account}` : pending({ kind: 'approval', prompt: `Close ${args.account}?` });
  }
}

let otel: Otel;
let server: MockServer;

beforeAll(async () => {
  otel = startOtel();
  server = await startMockServer((res, req) => {
    // Asks to close the account until the transcript holds a tool result, then answers.
    const answered = JSON.stringify(req.body).includes('"role":"tool"');
    return answered
      ? openaiText('Closed.')(res, req, 0)
      : openaiCalls([{ id: 'call_1', name: 'close_account', args: { account: 'A-1' } }])(res, req, 0);
  });
});
beforeEach(() => otel.reset());
afterAll(async () => {
  await server.close();
  await otel.shutdown();
});

function runner(telemetry: { agentName?: string } = {}): AgentRunner {
  const toolkit = new Toolkit().register(CloseAccountTool);
  const store = new MemoryStore();
  const coordinator = new ResumeCoordinator({ toolkit, store, telemetry: { tracerProvider: otel.tracerProvider } });
  const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'gpt-test', apiKey: 'sk-test', retry: { maxAttempts: 1 } });
  return new AgentRunner({
    model,
    toolkit,
    coordinator,
    name: 'billing',
    telemetry: { tracerProvider: otel.tracerProvider, ...telemetry },
  });
}

const agentSpans = () => otel.spans().filter((span) => span.name.startsWith('invoke_agent'));

it('a run of a session and its resume: the agent by its name, the session as the conversation', async () => {
  const billing = runner();
  const halted = await billing.run('close A-1', { session: 'chat-ada-7' });
  expect(halted.status).toBe('halted');
  const done = await billing.resume({ id: halted.pending?.id as string, ok: true }, { audit: { by: { id: 'user:ops' } } });
  expect(done.status).toBe('done');

  const spans = agentSpans();
  expect(spans.map((span) => span.name)).toEqual(['invoke_agent billing', 'invoke_agent billing']);
  for (const span of spans) {
    expect(span.attributes['gen_ai.agent.name']).toBe('billing');
    expect(span.attributes['gen_ai.conversation.id']).toBe('chat-ada-7');
  }
  // The answer's span names the same conversation: the session is kept with the suspension.
  const resolved = otel.spans().filter((span) => span.name.startsWith('resolve_suspension'));
  expect(resolved.map((span) => span.attributes['gen_ai.conversation.id'])).toEqual(['chat-ada-7']);
});

it('a run outside a session is its own conversation; telemetry.agentName overrides the name', async () => {
  const result = await runner({ agentName: 'billing-eu' }).run('close A-1');
  const [span] = agentSpans();
  expect(span?.name).toBe('invoke_agent billing-eu');
  expect(span?.attributes['gen_ai.conversation.id']).toBe(result.runId);
});
