/**
 * `@opentelemetry/api` is an optional peer: without it, importing the package and running an
 * agent, a suspension and its resume load nothing of OpenTelemetry and change nothing.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- jest.isolateModules needs a synchronous require to see the missing api */
import type * as Root from 'toolnexus-ts';
import type * as Agents from 'toolnexus-ts/agents';
import type * as Models from 'toolnexus-ts/models';
import { trace } from '@opentelemetry/api';
import { startMockServer } from '../fixtures/runner/mock-servers';
import { startOtel } from '../fixtures/telemetry/sdk';
import { payModel } from '../fixtures/runner/pay-harness';

afterEach(() => {
  jest.resetModules();
});

it('runs, halts and resumes with the api absent, and never loads it', async () => {
  const server = await startMockServer(payModel);
  // A provider registered globally: the isolated package, not seeing the api, must not find it.
  const otel = startOtel();
  trace.setGlobalTracerProvider(otel.tracerProvider);
  try {
    jest.doMock('@opentelemetry/api', () => {
      throw Object.assign(new Error("Cannot find module '@opentelemetry/api' from 'otel.ts'"), { code: 'MODULE_NOT_FOUND' });
    });
    type Toolnexus = typeof Root & typeof Agents & typeof Models;
    let lib: Toolnexus | undefined;
    jest.isolateModules(() => {
      lib = {
        ...(require('toolnexus-ts') as typeof Root),
        ...(require('toolnexus-ts/agents') as typeof Agents),
        ...(require('toolnexus-ts/models') as typeof Models),
      };
    });
    const { AgentRunner, OpenAIChatModel, Toolkit, defineTool, pending } = lib as Toolnexus;
    const toolkit = new Toolkit({ telemetry: { captureContent: true } }).register(
      defineTool({ name: 'lookup_invoice', description: 'x', inputSchema: { type: 'object' }, run: () => 'found' }),
      defineTool({
        name: 'pay_invoice',
        description: 'x',
        inputSchema: { type: 'object' },
        run: (_args, ctx) => (ctx?.answer ? 'paid' : pending({ kind: 'approval', prompt: 'Pay?' })),
      }),
    );
    const model = new OpenAIChatModel({ baseUrl: `${server.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } });
    const runner = new AgentRunner({ model, toolkit });
    const first = await runner.run('Pay');
    expect(first.status).toBe('halted');
    const final = await runner.resume((first.pendings ?? []).map((request) => ({ id: request.id, ok: true })));
    expect(final.status).toBe('done');
    expect((await runner.coordinator.list({ status: 'resolved' })).every((call) => call.traceparent === undefined)).toBe(true);
    expect(otel.spans()).toEqual([]);
  } finally {
    trace.disable();
    await otel.shutdown();
    await server.close();
  }
});
/* eslint-enable @typescript-eslint/no-require-imports -- end of the isolated requires */
