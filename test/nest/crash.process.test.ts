/**
 * Restart recovers (issue 45; docs/suspension.md, "After a crash: the takeover rule"; docs/agents.md,
 * "Restart recovers"): a Nest 12 app (test/fixtures/nest/takeover-app.ts) on PostgreSQL is
 * SIGKILLed right after an approval was claimed and the approved tool ran (a barrier in the tool:
 * the kill lands there every time), and another app instance is started on the same schema. Its
 * recovery loop (the module's, on by default) takes the call over within its lease plus one
 * interval, with no request to start it:
 *
 * - `order` (not idempotent) ran once (counted in the database); its call became a `recovery`
 *   request that the inbox's JSON API lists with actions for the approver; answering it there
 *   settles the run;
 * - `reserve` (idempotent) is replayed with the same `ctx.idempotencyKey` and the run finishes
 *   with nobody asked.
 *
 * The runs are started by the test's own runner over the same store (any process may start one).
 */
import { pendingOf, Toolkit } from 'toolnexus-ts';
import { AgentRunner } from 'toolnexus-ts/agents';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import type { SuspensionView } from 'toolnexus-ts/inbox';
import { startChild, until, type Started } from '../fixtures/children';
import { createTables, OrderTool, procurementModel, ReserveTool } from '../fixtures/nest/takeover-tools';
import { dropSchema, postgresUrl, sql, sqlRow, uniqueSchema } from '../fixtures/pg/server';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const LEASE_MS = 1_000;
const INTERVAL_MS = 500;
/** Generous: the loaded test machine may take this long to do what takes a few ms. */
const MARGIN_MS = 15_000;
const TOKEN = 'approver-token-0123456789abcdef';

let pgUrl: string;
let model: MockServer;
let schema: string;
let store: PostgresStore;
let runner: AgentRunner;
const children: Started[] = [];

beforeAll(async () => {
  pgUrl = await postgresUrl();
  model = await startMockServer(procurementModel);
});
afterAll(async () => model.close());
beforeEach(async () => {
  schema = uniqueSchema('nestcrash');
  await createTables(pgUrl, schema);
  store = new PostgresStore({ connectionString: pgUrl, schema });
  const toolkit = new Toolkit().register(new OrderTool(), new ReserveTool());
  runner = new AgentRunner({
    model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
    toolkit,
    coordinator: new ResumeCoordinator({ toolkit, store, leaseMs: LEASE_MS }),
  });
});
afterEach(async () => {
  for (const child of children.splice(0)) {
    child.kill('SIGTERM');
    await child.exited;
  }
  await store.close();
  await dropSchema(pgUrl, schema);
});

/** Starts the Nest app on the schema; its base URL once it listens. */
async function app(crash: boolean): Promise<{ child: Started; base: string }> {
  const child = startChild('nest/takeover-app.ts', [pgUrl, schema, model.url, String(LEASE_MS), String(INTERVAL_MS)], {
    ...(crash ? { TAKEOVER_CRASH: '1' } : {}),
  });
  children.push(child);
  await until(() => child.stdout().includes('\n') || child.stderr().includes('Error'), 60_000, 'the Nest app to listen');
  expect(child.stderr()).toBe('');
  const { port } = JSON.parse(child.stdout().split('\n')[0] as string) as { port: number };
  return { child, base: `http://127.0.0.1:${port}/inbox` };
}

async function api<T>(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T };
}

const executions = async (tool: string) =>
  sql<{ key: string | null }>(pgUrl, `SELECT key FROM "${schema}".executions WHERE tool = $1`, [tool]);

/** Starts the run, approves it through the inbox of an app that dies right after the tool ran; the approval's id. */
async function approveAndCrash(message: string): Promise<{ runId: string; id: string; leaseUntil: number }> {
  const halted = await runner.run(message, { principal: { id: 'bob' } });
  expect(halted.status).toBe('halted');
  const id = halted.pending?.id as string;
  const doomed = await app(true);
  await expect(api(doomed.base, 'POST', `/api/suspensions/${encodeURIComponent(id)}/answer`, { ok: true })).rejects.toThrow();
  expect((await doomed.child.exited).signal).toBe('SIGKILL');
  const stuck = await store.get(id);
  expect(stuck).toMatchObject({ status: 'resolving', fence: 1, answeredBy: { id: 'dana' } });
  return { runId: halted.runId, id, leaseUntil: Date.parse(stuck?.leaseUntil as string) };
}

/** Polls `read` until it gives a value, within the lease plus one interval after `from` (and the margin). */
async function within<T>(from: number, read: () => Promise<T | undefined>): Promise<T> {
  const deadline = from + INTERVAL_MS + MARGIN_MS;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('nothing was recovered within the lease plus one interval');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('a tool that is not idempotent: it ran once, its call is a recovery request in the inbox, answering it there settles the run', async () => {
  const { runId, id, leaseUntil } = await approveAndCrash('order widget 5');
  expect(await executions('order')).toHaveLength(1);

  const restarted = await app(false);
  const readyAt = Date.now();
  // Nobody asks: the restarted app's recovery loop takes the call over once its lease lapsed.
  const listed = await within(Math.max(leaseUntil, readyAt), async () => {
    const { body } = await api<{ suspensions: Array<SuspensionView & { actions?: string[] }> }>(restarted.base, 'GET', '/api/suspensions');
    return body.suspensions.find((view) => view.kind === 'recovery');
  });
  expect(listed.tool).toBe('order');
  expect(listed.prompt).toContain('may have taken effect');
  expect(listed.actions).toEqual(expect.arrayContaining(['answer']));
  expect(await store.get(id)).toMatchObject({ status: 'resolved', fence: 2, next: listed.id });
  expect(await store.list({ status: 'resolving' })).toEqual([]);
  expect(await executions('order')).toHaveLength(1);

  // Dana checked the supplier: the order went out. Declining "run it again" settles the run.
  const answered = await api<{ run?: { status: string } }>(
    restarted.base,
    'POST',
    `/api/suspensions/${encodeURIComponent(listed.id)}/answer`,
    {
      ok: false,
      comment: 'the supplier has the order',
    },
  );
  expect(answered.status).toBe(200);
  expect(answered.body.run?.status).toBe('done');
  expect(await executions('order')).toHaveLength(1);
  expect((await store.loadRun(runId))?.state).toMatchObject({ phase: 'done' });
});

it('an idempotent tool: replayed with the same idempotency key, the run finishes, nobody is asked', async () => {
  const { runId, id, leaseUntil } = await approveAndCrash('reserve widget 5');
  await app(false);
  const readyAt = Date.now();
  await within(Math.max(leaseUntil, readyAt), async () => {
    const state = (await store.loadRun(runId))?.state as { phase?: string } | undefined;
    return state?.phase === 'done' ? state : undefined;
  });
  expect(await store.get(id)).toMatchObject({ status: 'resolved', fence: 2, outcome: { isError: false } });
  expect(pendingOf((await store.get(id))!.outcome)).toBeUndefined();
  const keys = (await executions('reserve')).map((row) => row.key);
  expect(keys).toHaveLength(2);
  expect(keys[1]).toBe(keys[0]);
  expect(await sqlRow<{ n: string }>(pgUrl, `SELECT count(*) AS n FROM "${schema}".reservations`)).toEqual({ n: '1' });
  expect(await store.list({ status: 'pending' })).toEqual([]);
  expect(await store.list({ status: 'resolving' })).toEqual([]);
});
