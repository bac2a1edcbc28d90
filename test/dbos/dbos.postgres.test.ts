/**
 * `toolnexus-ts/dbos` on a real PostgreSQL (the one of jest's global setup) with real processes
 * (issue 37): a three-turn run with an approval, its process SIGKILLed after a tool step and
 * again while it waits for the answer, DBOS recovering the workflow in a fresh process each
 * time, the answer given from a third process; each tool takes effect exactly once (a ledger
 * file the tools append to) and the run finishes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startChild, outputOf, type Started } from '../fixtures/children';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { json, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

const CHILD = join('dbos', 'dbos-child.ts');

let dir: string;
let url: string;
const schema = uniqueSchema('dbos');
const dbosSchema = uniqueSchema('dbos_sys');
let server: MockServer;
let releaseSecondTurn: () => void = () => undefined;
const secondTurnReleased = new Promise<void>((resolve) => (releaseSecondTurn = resolve));

/** The model: lookup, then pay (held until the test lets it go), then the answer. */
const model: Reply = async (res, req) => {
  const messages = req.body.messages as Array<{ role: string }>;
  const results = messages.filter((m) => m.role === 'tool').length;
  const call = (id: string, name: string) =>
    json(200, {
      id: `chatcmpl-${id}`,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: '{}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5 },
    })(res, req, 0);
  if (results === 0) return call('c_lookup', 'lookup');
  if (results === 1) {
    await secondTurnReleased;
    return call('c_pay', 'pay');
  }
  return json(200, {
    id: 'chatcmpl-final',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Paid INV-7.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5 },
  })(res, req, 0);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-dbos-'));
  url = await postgresUrl();
  server = await startMockServer(model);
});
afterAll(async () => {
  await server.close();
  await dropSchema(url, schema);
  await dropSchema(url, dbosSchema);
  rmSync(dir, { recursive: true, force: true });
});

const ledgerOf = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);

it('survives a SIGKILL after a tool step and another while waiting, with the answer from a third process: each tool once', async () => {
  const ledger = join(dir, 'ledger');
  const runId = 'dbos-run-1';
  const child = (mode: string): Started => startChild(CHILD, [mode, url, schema, dbosSchema, server.url, ledger, runId]);
  const store = new PostgresStore({ connectionString: url, schema });
  const sql = new Client({ connectionString: url });
  await sql.connect();
  const steps = async (): Promise<string[]> => {
    const table = await sql.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
      `"${dbosSchema}".operation_outputs`,
    ]);
    if (!table.rows[0]?.present) return [];
    const rows = await sql.query<{ name: string }>(
      `SELECT function_name AS name FROM "${dbosSchema}".operation_outputs WHERE workflow_uuid = $1 ORDER BY function_id`,
      [runId],
    );
    return rows.rows.map((row) => row.name);
  };
  const recorded = async (predicate: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!(await predicate())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  try {
    // 1. The run starts; lookup runs and its result is in the checkpoint; the second model call hangs. Kill.
    const first = child('start');
    await recorded(async () => {
      const state = (await store.loadRun(runId))?.state as { toolCalls?: unknown[] } | undefined;
      return (state?.toolCalls?.length ?? 0) >= 1;
    }, 'the lookup result in the checkpoint');
    expect(ledgerOf(ledger)).toEqual(['lookup']);
    first.kill('SIGKILL');
    await first.exited;

    // 2. A fresh process: DBOS recovers the workflow; the run goes on to pay, halts on its approval and waits. Kill.
    releaseSecondTurn();
    const second = child('recover');
    await recorded(async () => (await store.list({ status: 'pending' })).some((call) => call.tool === 'pay'), 'the pay approval');
    await recorded(async () => (await steps()).includes('toolnexus.answered'), 'the workflow waiting for the answer');
    second.kill('SIGKILL');
    await second.exited;
    expect(ledgerOf(ledger)).toEqual(['lookup']);

    // 3. The answer, from a third process that runs no DBOS: pay replays there, once.
    const answered = await outputOf<{ output: string; isError: boolean }>(child('answer'), 'answer');
    expect(answered).toEqual({ output: 'paid INV-7', isError: false });

    // 4. A fresh process: DBOS recovers the waiting workflow, which finds the answer and finishes the run.
    const summary = await outputOf<{ status: string; text?: string }>(child('recover'), 'recover');
    expect(summary).toEqual({ runId, status: 'done', text: 'Paid INV-7.' });
    expect(ledgerOf(ledger)).toEqual(['lookup', 'pay']);
    expect((await store.loadRun(runId))?.state).toMatchObject({ phase: 'done' });
    expect(await steps()).toEqual(expect.arrayContaining(['toolnexus.drive', 'toolnexus.wait', 'toolnexus.answered']));
  } finally {
    await sql.end();
    await store.close();
  }
}, 180_000);

it('puts a run on a DBOS queue when asked, and the queue carries it to its halt', async () => {
  const runId = 'dbos-run-queued';
  const queued = startChild(CHILD, ['queue', url, schema, dbosSchema, server.url, join(dir, 'queued-ledger'), runId]);
  const sql = new Client({ connectionString: url });
  await sql.connect();
  const store = new PostgresStore({ connectionString: url, schema });
  try {
    const deadline = Date.now() + 60_000;
    while (!(await store.list({ status: 'pending' })).some((call) => call.runId === runId)) {
      if (Date.now() > deadline) throw new Error(`the queued run did not halt: ${queued.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const status = await sql.query<{ queue_name: string | null }>(
      `SELECT queue_name FROM "${dbosSchema}".workflow_status WHERE workflow_uuid = $1`,
      [runId],
    );
    expect(status.rows).toEqual([{ queue_name: 'toolnexus-runs' }]);
  } finally {
    queued.kill('SIGKILL');
    await queued.exited;
    await store.close();
    await sql.end();
  }
}, 120_000);
