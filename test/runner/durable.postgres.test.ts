/**
 * The durable halt and resume on PostgreSQL (the store for several processes or machines):
 * two fresh processes resume the two pauses of one run at the same moment; both results
 * are kept, exactly one process continues, and every side effect happens once.
 * The server is the shared test cluster (TOOLNEXUS_PG_URL: the embedded one jest's global setup starts, or the one you name).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from 'toolnexus-ts/agents';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { buildPayAgent, readLedger, type StoreSpec } from '../fixtures/runner/pay-agent';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { payModel, resumeInChild, succeeded } from '../fixtures/runner/pay-harness';

let dir: string;
let server: MockServer;
let where: StoreSpec & object;

beforeAll(async () => {
  where = { postgres: await postgresUrl(), schema: uniqueSchema('runner') };
});
afterAll(async () => {
  await dropSchema(where.postgres, where.schema);
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-durable-pg-'));
  server = await startMockServer(payModel);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

it('halts on PostgreSQL, and two processes resuming different pauses at once lose nothing', async () => {
  const ledger = join(dir, 'ledger.log');
  const first = buildPayAgent(where, ledger, server.url);
  const halted = await first.runner.run('Pay invoices 7 and 8', { runId: `run-pg-${process.pid}` });
  expect(halted.status).toBe('halted');
  const [pay7, pay8] = halted.pendings ?? [];

  const outputs = await Promise.all([
    resumeInChild(where, ledger, server.url, { id: pay8?.id as string, ok: true, data: { approver: 'second' } }),
    resumeInChild(where, ledger, server.url, { id: pay7?.id as string, ok: true, data: { approver: 'first' } }),
  ]);
  const results = outputs.map((o) => succeeded(o).result);
  expect(results.map((r) => r.status).sort()).toEqual(['done', 'halted']);
  expect(server.requests).toHaveLength(2);
  const final = results.find((r) => r.status === 'done') as RunResult;
  expect(final.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
  expect(final.text).toBe(
    'Done: {"invoice":"inv-7","cents":1250} | {"paid":"inv-7","approver":"first"} | {"paid":"inv-8","approver":"second"}',
  );
  expect(
    readLedger(ledger)
      .map((l) => l.split(' ').slice(0, 3).join(' '))
      .sort(),
  ).toEqual(['lookup inv-7 call_lookup', 'pay inv-7 call_pay_7', 'pay inv-8 call_pay_8']);

  const checkpoint = await first.store.loadRun(halted.runId);
  expect(checkpoint).toMatchObject({ version: 4, state: { phase: 'done', turns: 2 } });
  expect((await first.store.list({ runId: halted.runId })).map((c) => c.status)).toEqual(['resolved', 'resolved']);
  // The same answer again returns the run's result; a conflicting one is refused and names the run.
  expect(await first.runner.resume({ id: pay7?.id as string, ok: true, data: { approver: 'first' } })).toMatchObject({
    status: 'done',
    runId: halted.runId,
  });
  await expect(first.runner.resume({ id: pay7?.id as string, ok: true, data: { approver: 'eve' } })).rejects.toThrow(
    `suspension ${pay7?.id} of run ${halted.runId} is already resolved`,
  );
  await first.store.close();
});
