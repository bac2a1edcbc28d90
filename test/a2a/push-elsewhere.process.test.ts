/**
 * A2A push for a task continued outside the agent (issue 49, docs/a2a.md "Listing and push"):
 * `@a2a-js/sdk`'s own client sets a push config with a task's first message to agent processes
 * (test/fixtures/a2a/server-child.ts); the task goes `input-required` (pushed); a manager answers
 * it through `answerAs` in another child process that serves no A2A (test/fixtures/a2a/answer-child.ts,
 * as a user's inbox would), which runs it to its end; the agents' sweep finds the run's checkpoint
 * moved past what was told, and the receiver on 127.0.0.1 gets `completed`, with the client's
 * token, exactly once:
 *
 * - with two agent processes sweeping the same store;
 * - with the agent process down while the answer is given, and started again after.
 *
 * On a SQLite file and on the suite's PostgreSQL.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@a2a-js/sdk/client';
import type { Task } from '@a2a-js/sdk';
import { chatModel } from '../fixtures/chat/agent';
import { clientOf, message, requestsOf, sdk, startAgent, stopAgents, text } from '../fixtures/a2a/harness';
import { outputOf, startChild, until } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import type { A2ATaskStore } from 'toolnexus-ts/a2a';

jest.setTimeout(240_000);
const { TaskState } = sdk;
const ENV = { A2A_PUSH_PRIVATE: '1' };

let dir: string;
let model: MockServer;
let pgUrl: string;
const schemas: string[] = [];
beforeAll(async () => {
  model = await startMockServer(chatModel);
  pgUrl = await postgresUrl();
});
afterAll(async () => {
  await model.close();
  for (const schema of schemas) await dropSchema(pgUrl, schema);
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-push-elsewhere-'));
});
afterEach(async () => {
  await stopAgents();
  rmSync(dir, { recursive: true, force: true });
});

interface Received {
  headers: IncomingHttpHeaders;
  state: unknown;
}

/** The client's push receiver: records the state each POST tells of, answers 200. */
async function receiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, { status?: { state?: unknown } } | undefined>;
      received.push({ headers: req.headers, state: body.statusUpdate?.status?.state ?? body.task?.status?.state });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a-push`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function sendWithPush(client: Client, value: string, url: string): Promise<Task> {
  const result = await client.sendMessage({
    tenant: '',
    message: message([text(value)]),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: { tenant: '', id: 'alice-hook', taskId: '', url, token: 'alice-push-token', authentication: undefined },
      historyLength: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  });
  if (!('status' in result)) throw new Error('the agent answered a message, not a task');
  return result;
}

/** Answers the task's request as a manager in a child process that serves no A2A; the run ends there. */
async function answerElsewhere(store: string, task: Task): Promise<void> {
  const id = requestsOf(task)[0]?.id as string;
  const child = startChild('a2a/answer-child.ts', [store, join(dir, 'ledger'), model.url, id, 'manager:ann']);
  const answered = await outputOf<{ won: boolean; continued: boolean; status: string }>(child, 'answering through answerAs');
  expect(answered).toEqual({ won: true, continued: true, status: 'done' });
}

type Spec = { spec: string; open: () => A2ATaskStore & { close(): Promise<void> } };
const stores: Array<[string, () => Spec]> = [
  [
    'a SQLite file',
    () => {
      const file = join(dir, 'a2a.db');
      return { spec: file, open: () => new SqliteStore({ filename: file }) };
    },
  ],
  [
    'PostgreSQL',
    () => {
      const schema = uniqueSchema('a2a_push_elsewhere');
      schemas.push(schema);
      return { spec: `pg:${pgUrl}#${schema}`, open: () => new PostgresStore({ connectionString: pgUrl, schema }) };
    },
  ],
];

/** Waits until the task's record has nothing to send and is no longer watched, then a few sweeps more, and gives what the receiver got. */
async function settled(where: Spec, taskId: string, hook: { received: Received[] }): Promise<unknown[]> {
  const records = where.open();
  try {
    const done = async () => {
      const record = await records.loadA2ATask(taskId);
      return record !== undefined && record.watch === undefined && record.dueAt === undefined;
    };
    for (let i = 0; i < 1200 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await done()).toBe(true);
  } finally {
    await records.close();
  }
  // Three sweeps of every agent (one a second) more: none tells the task again.
  await new Promise((resolve) => setTimeout(resolve, 3500));
  for (const got of hook.received) expect(got.headers['x-a2a-notification-token']).toBe('alice-push-token');
  return hook.received.map((got) => got.state);
}

describe.each(stores)('on %s', (_name, where) => {
  it('tells of completed once when another process answers, two agent processes sweeping', async () => {
    const hook = await receiver();
    try {
      const spec = where();
      const [a] = await Promise.all([
        startAgent(dir, model.url, 'node', spec.spec, ENV),
        startAgent(dir, model.url, 'node', spec.spec, ENV),
      ]);
      const alice = await clientOf(a.base, 'alice');
      const waiting = await sendWithPush(alice, 'refund o-1 500', hook.url);
      expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      await until(() => hook.received.length >= 1, 60_000, 'the input-required notification');
      await answerElsewhere(spec.spec, waiting);
      await until(() => hook.received.length >= 2, 60_000, 'the completed notification');
      expect(await settled(spec, waiting.id, hook)).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);
    } finally {
      await hook.close();
    }
  });

  it('tells of completed once when the answer came while the agent process was down', async () => {
    const hook = await receiver();
    try {
      const spec = where();
      const first = await startAgent(dir, model.url, 'node', spec.spec, ENV);
      const alice = await clientOf(first.base, 'alice');
      const waiting = await sendWithPush(alice, 'refund o-2 500', hook.url);
      await until(() => hook.received.length >= 1, 60_000, 'the input-required notification');
      first.child.kill('SIGTERM');
      await first.child.exited;
      await answerElsewhere(spec.spec, waiting);
      // Nobody serves A2A: nobody tells of it yet.
      expect(hook.received.map((got) => got.state)).toEqual(['TASK_STATE_INPUT_REQUIRED']);
      await startAgent(dir, model.url, 'node', spec.spec, ENV);
      await until(() => hook.received.length >= 2, 60_000, 'the completed notification after the restart');
      expect(await settled(spec, waiting.id, hook)).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);
    } finally {
      await hook.close();
    }
  });
});
