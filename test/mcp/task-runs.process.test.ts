/**
 * Tasks of calls that did not suspend, across processes (docs/mcp.md, "Tasks"; issue 46): a call
 * still running after `taskAfterMs` is a `working` task recorded in the store before it is
 * answered, so another server process on the store answers `tasks/get` for it, sees it
 * `completed` with its result, reads it `failed` once the process running it died (its lease
 * lapsed), and takes a `tasks/cancel` that aborts the call where it runs; another principal
 * gets "not found" from any process. Real parts: serveMcp in child processes
 * (test/fixtures/mcp-mrtr-server.ts, the `gated` tool: it runs until the test creates its
 * gate file, or until its signal aborts, writing each step to a ledger with its pid) on one
 * SQLite file and on the jest global setup's PostgreSQL; the SDK's v2 `Client` declaring the
 * tasks extension (its `tools/call` answer read with our TaskCatcher: the SDK 2.4.0 refuses a
 * task there; `tasks/*` with `client.request`).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { ANY_RESULT, TaskCatcher } from '../../src/mcp/client/tasks';
import { startChild, until, type Started } from '../fixtures/children';
import { TOKENS } from '../fixtures/mcp-mrtr-server';
import { SHARED_STORES, type SharedStore } from '../fixtures/store-spec';

const TASKS = 'io.modelcontextprotocol/tasks';
/** The lease of a running task: renewed every second, so a loaded machine keeps it; lapsed three seconds after a SIGKILL. */
const LEASE_MS = '3000';

interface Task {
  taskId: string;
  status: string;
  statusMessage?: string;
  lastUpdatedAt?: string;
  result?: { content?: Array<{ type: string; text?: string }> };
  error?: { code: number; message: string };
}

/** A v2 Client of one server process, as one principal, declaring the tasks extension. */
async function clientOf(url: string, token: string) {
  const client = new Client(
    { name: 'task-runs', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  const catcher = new TaskCatcher(client.transport!);
  const request = async (method: string, params: Record<string, unknown>) =>
    (await client.request({ method, params } as never, ANY_RESULT)) as unknown as Task;
  return {
    /** `gated` for `customer`: the task it became (the test's gates stay shut for at least `taskAfterMs`). */
    async call(customer: string): Promise<Task> {
      const result = await client.callTool({ name: 'gated', arguments: { customer, cents: 700 } });
      const task = catcher.taken(result) as Task | undefined;
      if (!task) throw new Error(`no task: ${JSON.stringify(result)}`);
      return task;
    },
    get: (taskId: string) => request('tasks/get', { taskId }),
    cancel: (taskId: string) => request('tasks/cancel', { taskId }),
    close: () => client.close(),
  };
}

describe.each(SHARED_STORES)('tasks of calls that did not suspend, across server processes, on $name', ({ make }) => {
  jest.setTimeout(180_000);
  let dir: string;
  let shared: SharedStore;
  const running: Started[] = [];
  const clients: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-task-runs-'));
    shared = await make(dir);
  });
  afterAll(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
    for (const child of running.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
    await shared.drop();
  });

  const ledger = () => join(dir, 'ledger.txt');
  const start = async (): Promise<{ url: string; child: Started }> => {
    const child = startChild('mcp-mrtr-server.ts', ['serve', shared.spec, ledger(), '0', 'none'], {
      MRTR_KEY: 'task-runs-key-0123456789abcdef0123456789',
      KEY_LEASE_MS: LEASE_MS,
    });
    running.push(child);
    await until(() => child.stdout().includes('\n') || child.hasExited(), 60_000, 'the server to print its URL');
    const url = child.stdout().split('\n')[0]?.trim() ?? '';
    if (!url.startsWith('http')) throw new Error(`the server did not start: ${child.stderr()}`);
    return { url, child };
  };
  let pair: Promise<[{ url: string; child: Started }, { url: string; child: Started }]> | undefined;
  /** Processes A and B on the store, started once for the tests that keep them alive. */
  // One after the other: the first lays out the new file's schema, which a second opening it at
  // the same instant may find locked.
  const servers = () => (pair ??= start().then(async (a) => [a, await start()]));
  const connect = async (url: string, token: string) => {
    const client = await clientOf(url, token);
    clients.push(client);
    return client;
  };
  /** The ledger's lines for `customer`, as `<step> <pid>`. */
  const steps = (customer: string): string[] =>
    existsSync(ledger())
      ? readFileSync(ledger(), 'utf8')
          .split('\n')
          .filter((line) => line.startsWith(`gated ${customer} `))
          .map((line) => line.slice(`gated ${customer} `.length))
      : [];
  const open = (customer: string) => writeFileSync(`${ledger()}.${customer}.go`, '');
  const polled = async (read: () => Promise<Task>, done: (task: Task) => boolean, what: string): Promise<Task> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const task = await read();
      if (done(task)) return task;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(task)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it('a task working in process A reads working, then completed with its result, from process B; another principal gets not found', async () => {
    const [a, b] = await servers();
    const task = await (await connect(a.url, TOKENS.alice)).call('ann');
    expect(task).toMatchObject({ status: 'working', pollIntervalMs: 1000 });
    expect(task.taskId).toMatch(/^tsk-/);
    const fromB = await connect(b.url, TOKENS.alice);
    expect(await fromB.get(task.taskId)).toMatchObject({ taskId: task.taskId, status: 'working' });
    const stranger = await connect(b.url, TOKENS.bob);
    await expect(stranger.get(task.taskId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('task not found') as unknown,
    });
    await expect(stranger.cancel(task.taskId)).rejects.toMatchObject({ code: -32602 });

    open('ann');
    const done = await polled(
      () => fromB.get(task.taskId),
      (t) => t.status !== 'working',
      'the task to end',
    );
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: `charged 700 cents to ann in process ${a.child.pid}` }] },
    });
    expect(steps('ann')).toEqual([`start ${a.child.pid}`, `done ${a.child.pid}`]);
    // The stranger's cancel changed nothing, and still sees nothing.
    await expect(stranger.get(task.taskId)).rejects.toMatchObject({ code: -32602 });
  });

  it('process A is SIGKILLed mid-run: after its lease B reads failed, saying the call may or may not have run, written once', async () => {
    const [, b] = await servers();
    const doomed = await start();
    const task = await (await connect(doomed.url, TOKENS.alice)).call('bo');
    await until(() => steps('bo').length === 1, 60_000, 'the tool to start');
    doomed.child.kill('SIGKILL');
    await doomed.child.exited;
    const fromB = await connect(b.url, TOKENS.alice);
    const failed = await polled(
      () => fromB.get(task.taskId),
      (t) => t.status !== 'working',
      'the lease to lapse',
    );
    expect(failed).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(failed.error?.message).toContain('may or may not have run');
    expect(failed.statusMessage).toBe(failed.error?.message);
    // Written once: read again (from another process too) it is the same record.
    const [again, elsewhere] = await Promise.all([
      fromB.get(task.taskId),
      (await connect((await servers())[0].url, TOKENS.alice)).get(task.taskId),
    ]);
    expect(again).toMatchObject({ status: 'failed', lastUpdatedAt: failed.lastUpdatedAt });
    expect(elsewhere).toMatchObject({ status: 'failed', lastUpdatedAt: failed.lastUpdatedAt });
    // What the tool did: it started, and never finished.
    expect(steps('bo')).toEqual([`start ${doomed.child.pid}`]);
  });

  it('tasks/cancel sent to process B aborts the call running in process A, and the task stays cancelled', async () => {
    const [a, b] = await servers();
    const task = await (await connect(a.url, TOKENS.alice)).call('cy');
    await until(() => steps('cy').length === 1, 60_000, 'the tool to start');
    const fromB = await connect(b.url, TOKENS.alice);
    await fromB.cancel(task.taskId);
    expect(await fromB.get(task.taskId)).toMatchObject({ status: 'cancelled' });
    // A sees the cancel at its next lease renewal and aborts the call's signal.
    await until(() => steps('cy').length === 2, 60_000, 'the call to be aborted in process A');
    expect(steps('cy')).toEqual([`start ${a.child.pid}`, `aborted ${a.child.pid}`]);
    open('cy');
    expect(await fromB.get(task.taskId)).toMatchObject({ status: 'cancelled' });
  });
});
