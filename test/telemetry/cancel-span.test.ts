/**
 * A cancelled run’s spans (issue 36) with the real OpenTelemetry SDK: its `invoke_agent` span
 * ends, not as an error, saying `toolnexus.run.status: cancelled`; the aborted tool's
 * `execute_tool` span ends too. Nothing is left open. A run stopped by its budget or a guardrail
 * says why on its span: the limit, its value, what was spent and whose budget; the guardrail and stage.
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { only, startOtel, type Otel } from '../fixtures/telemetry/sdk';

let otel: Otel;
beforeEach(() => {
  otel = startOtel();
});
afterEach(() => otel.shutdown());

it('a cancelled run: its invoke_agent span ends unset (not an error) with run status cancelled, and its tool span ends', async () => {
  const telemetry = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  const toolkit = new Toolkit({ telemetry }).register(
    defineTool({
      name: 'export_all',
      description: 'Exports everything (slowly)',
      inputSchema: { type: 'object' },
      run: (_args, ctx?: ToolContext) =>
        new Promise<string>((resolve) => {
          started();
          ctx?.signal?.addEventListener('abort', () => resolve('aborted'));
        }),
    }),
  );
  const model = new FunctionModel(() => ({ toolCalls: [{ id: 'e1', name: 'export_all', arguments: {} }] }));
  const runner = new AgentRunner({
    model,
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, telemetry }),
    telemetry: { ...telemetry, agentName: 'clerk' },
  });
  const run = runner.run('Export', { runId: 'run-cancel-span' });
  await running;
  await runner.cancel('run-cancel-span', { reason: 'stop' });
  expect((await run).status).toBe('cancelled');
  const agentSpan = only(otel.spans(), 'invoke_agent clerk');
  expect(agentSpan.status.code).toBe(SpanStatusCode.UNSET);
  expect(agentSpan.attributes['toolnexus.run.status']).toBe('cancelled');
  const toolSpan = only(otel.spans(), 'execute_tool export_all');
  expect(toolSpan.ended).toBe(true);
});

it('a run stopped by its budget or a guardrail: its invoke_agent span says which limit, or which guardrail', async () => {
  const telemetry = { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider };
  const toolkit = new Toolkit({ telemetry }).register(
    defineTool({ name: 'note', description: 'Takes a note', inputSchema: { type: 'object' }, run: () => 'noted' }),
  );
  const model = new FunctionModel(() => ({ toolCalls: [{ id: `n${Math.random()}`, name: 'note', arguments: {} }] }));
  const spent = new AgentRunner({ model, toolkit, budget: { toolCalls: 2 }, telemetry: { ...telemetry, agentName: 'spender' } });
  expect((await spent.run('Note everything')).status).toBe('budget_exceeded');
  expect(only(otel.spans(), 'invoke_agent spender').attributes).toMatchObject({
    'toolnexus.run.status': 'budget_exceeded',
    'toolnexus.budget.limit': 'toolCalls',
    'toolnexus.budget.value': 2,
    'toolnexus.budget.spent': 2,
    'toolnexus.budget.scope': 'run',
  });
  const guarded = new AgentRunner({
    model,
    toolkit,
    guardrails: { input: [{ name: 'no-secrets', check: () => ({ action: 'block', message: 'no' }) }] },
    telemetry: { ...telemetry, agentName: 'guarded' },
  });
  expect((await guarded.run('my password is hunter2')).status).toBe('blocked');
  expect(only(otel.spans(), 'invoke_agent guarded').attributes).toMatchObject({
    'toolnexus.run.status': 'blocked',
    'toolnexus.guardrail.name': 'no-secrets',
    'toolnexus.guardrail.stage': 'input',
  });
});
