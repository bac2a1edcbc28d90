/**
 * The human wait across processes, exported over OTLP/HTTP to a receiver on 127.0.0.1: a run
 * halts in process A; process B (same SQLite file, nothing else shared) resolves and resumes
 * it. B's resolution spans link to A's suspended `execute_tool` spans, and B's `invoke_agent`
 * links to A's halted one, in A's trace.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { payModel } from '../fixtures/runner/pay-harness';
import { startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from '../fixtures/telemetry/otlp-receiver';
import type { RunResult } from 'toolnexus-ts/agents';

let dir: string;
let model: MockServer;
let receiver: OtlpReceiver;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-traces-'));
  model = await startMockServer(payModel);
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await model.close();
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

const one = (spans: OtlpSpan[], name: string, service: string): OtlpSpan => {
  const found = spans.filter((span) => span.name === name && span.service === service);
  if (found.length !== 1) throw new Error(`expected one ${name} in ${service}, got ${found.length}`);
  return found[0] as OtlpSpan;
};

it('a run halted in process A and resumed in process B: B links to A, over OTLP/HTTP', async () => {
  const db = join(dir, 'runs.db');
  const ledger = join(dir, 'ledger.txt');
  const a = await outputOf<{ pid: number; result: RunResult }>(
    startChild('telemetry/traced-child.ts', ['run', db, ledger, model.url, receiver.url]),
    'A',
  );
  expect(a.result.status).toBe('halted');
  const answers = (a.result.pendings ?? []).map((request) => ({ id: request.id, ok: true }));
  expect(answers).toHaveLength(2);
  const b = await outputOf<{ pid: number; result: RunResult }>(
    startChild('telemetry/traced-child.ts', ['resume', db, ledger, model.url, receiver.url, JSON.stringify(answers)]),
    'B',
  );
  expect(b.result.status).toBe('done');
  expect(b.pid).not.toBe(a.pid);

  const spans = receiver.spans();
  if (process.env.TOOLNEXUS_TRACE_OUT) writeFileSync(process.env.TOOLNEXUS_TRACE_OUT, JSON.stringify(receiver.requests));
  const haltedRun = one(spans, 'invoke_agent agent', 'billing-worker-a');
  expect(haltedRun.attributes).toMatchObject({ 'toolnexus.run.status': 'halted', 'gen_ai.conversation.id': 'run-traced' });
  const suspended = spans.filter((span) => span.name === 'execute_tool pay_invoice' && span.service === 'billing-worker-a');
  expect(suspended.map((span) => span.attributes['toolnexus.request.id']).sort()).toEqual(answers.map((answer) => answer.id).sort());
  for (const span of suspended) {
    expect(span.parentSpanId).toBe(haltedRun.spanId);
    expect(span.status.code ?? 0).toBe(0); // a suspension is not an error
  }

  const resumed = one(spans, 'invoke_agent agent', 'billing-worker-b');
  expect(resumed.links).toEqual([{ traceId: haltedRun.traceId, spanId: haltedRun.spanId }]);
  const resolutions = spans.filter((span) => span.name === 'resolve_suspension pay_invoice');
  expect(resolutions).toHaveLength(2);
  for (const resolution of resolutions) {
    expect(resolution.service).toBe('billing-worker-b');
    expect(resolution.parentSpanId).toBe(resumed.spanId);
    const answered = suspended.find((span) => span.attributes['toolnexus.request.id'] === resolution.attributes['toolnexus.request.id']);
    expect(resolution.links).toEqual([{ traceId: answered?.traceId, spanId: answered?.spanId }]);
    // who answered stays out unless the host opts in
    expect(resolution.attributes['toolnexus.answered_by']).toBeUndefined();
    const replay = spans.find((span) => span.parentSpanId === resolution.spanId);
    expect(replay?.name).toBe('execute_tool pay_invoice');
  }
  expect(spans.filter((span) => span.service === 'billing-worker-b' && span.name === 'chat mock')).toHaveLength(1);
});
