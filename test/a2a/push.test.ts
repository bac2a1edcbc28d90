/**
 * Listing and push (issue 49, docs/a2a.md "Listing and push"), driven by `@a2a-js/sdk`'s own
 * client against real agent processes (test/fixtures/a2a/server-child.ts) on one SQLite file:
 *
 * - a push config set with the task's first message: the task goes `input-required`, then is
 *   answered through another process and goes `completed`; the test's receiver on 127.0.0.1 gets
 *   both, each with the client's token, once each; its first answer is a 500, so the
 *   `input-required` notification is delivered once more, with the same `Idempotency-Key`;
 * - a push URL to 127.0.0.1 or 169.254.169.254 is refused by an agent that does not allow private
 *   targets, and nothing is stored;
 * - `tasks/list` shows the caller's own tasks only, a page at a time.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@a2a-js/sdk/client';
import type { Task, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { chatModel } from '../fixtures/chat/agent';
import { clientOf, data, message, sdk, send, startAgent, stopAgents, text } from '../fixtures/a2a/harness';
import { until } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { SqliteStore } from 'toolnexus-ts/sqlite';

jest.setTimeout(180_000);
const { TaskState } = sdk;

let dir: string;
let model: MockServer;
beforeAll(async () => {
  model = await startMockServer(chatModel);
});
afterAll(async () => {
  await model.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-push-'));
});
afterEach(async () => {
  await stopAgents();
  rmSync(dir, { recursive: true, force: true });
});

interface Received {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  status: number;
}

/** The client's push receiver: records every POST; answers 500 to the first, 200 after. */
async function receiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      const status = received.length === 0 ? 500 : 200;
      received.push({ headers: req.headers, body: JSON.parse(raw) as Record<string, unknown>, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a-push`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const pushConfig = (url: string): TaskPushNotificationConfig => ({
  tenant: '',
  id: 'alice-hook',
  taskId: '',
  url,
  token: 'alice-push-token',
  authentication: undefined,
});

/** Sends a new task's first message with a push config. */
async function sendWithPush(client: Client, value: string, url: string): Promise<Task> {
  const result = await client.sendMessage({
    tenant: '',
    message: message([text(value)]),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: pushConfig(url),
      historyLength: undefined,
      returnImmediately: false,
    },
    metadata: undefined,
  });
  if (!('status' in result)) throw new Error('the agent answered a message, not a task');
  return result;
}

/** The state a notification tells of (a 1.0 `StreamResponse` body). */
const stateOf = (body: Record<string, unknown>): unknown =>
  (body.statusUpdate as { status?: { state?: unknown } } | undefined)?.status?.state ??
  (body.task as { status?: { state?: unknown } } | undefined)?.status?.state;

it('tells the client’s receiver of input-required and completed, signed with its token, once each (a 500 retried with the same id)', async () => {
  const hook = await receiver();
  try {
    const env = { A2A_PUSH_PRIVATE: '1' };
    const store = join(dir, 'a2a.db');
    const [a, b] = await Promise.all([startAgent(dir, model.url, 'node', store, env), startAgent(dir, model.url, 'node', store, env)]);
    const alice = await clientOf(a.base, 'alice');
    expect((await alice.getAgentCard()).capabilities?.pushNotifications).toBe(true);
    const waiting = await sendWithPush(alice, 'refund o-1 500', hook.url);
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    // The config is the task's: its owner reads it back (without asking the receiver anything).
    const configs = await alice.listTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, pageSize: 10, pageToken: '' });
    expect(configs.configs.map((config) => [config.id, config.url])).toEqual([['alice-hook', hook.url]]);

    // The first POST is answered 500; the retry delivers the same notification.
    await until(() => hook.received.length >= 2, 60_000, 'the input-required notification and its retry');
    const [first, retry] = hook.received as [Received, Received];
    expect([first.status, retry.status]).toEqual([500, 200]);
    expect(stateOf(first.body)).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(retry.body).toEqual(first.body);
    expect(retry.headers['idempotency-key']).toBe(first.headers['idempotency-key']);
    for (const got of [first, retry]) expect(got.headers['x-a2a-notification-token']).toBe('alice-push-token');

    // The manager answers through the other process: the task completes there, and that process tells the receiver.
    const ann = await clientOf(b.base, 'manager:ann');
    const done = await send(ann, [data({ ok: true })], waiting);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await until(() => hook.received.length >= 3, 60_000, 'the completed notification');
    const completed = hook.received[2] as Received;
    expect(stateOf(completed.body)).toBe('TASK_STATE_COMPLETED');
    expect(completed.headers['x-a2a-notification-token']).toBe('alice-push-token');
    expect(completed.headers['idempotency-key']).not.toBe(first.headers['idempotency-key']);
    // Once each: the task's outbox in the store is empty, so no process has anything left to send.
    const records = new SqliteStore({ filename: store });
    try {
      const outbox = async () => ((await records.loadA2ATask(waiting.id))?.state.outbox as unknown[] | undefined)?.length ?? -1;
      for (let i = 0; i < 1200 && (await outbox()) !== 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await outbox()).toBe(0);
      expect((await records.loadA2ATask(waiting.id))?.dueAt).toBeUndefined();
    } finally {
      await records.close();
    }
    expect(hook.received).toHaveLength(3);
    expect(hook.received.filter((got) => got.status === 200).map((got) => stateOf(got.body))).toEqual([
      'TASK_STATE_INPUT_REQUIRED',
      'TASK_STATE_COMPLETED',
    ]);
  } finally {
    await hook.close();
  }
});

it('refuses a push URL to a loopback or link-local address unless the agent allows it, and stores nothing', async () => {
  const { base } = await startAgent(dir, model.url);
  const alice = await clientOf(base, 'alice');
  for (const url of ['http://127.0.0.1:9/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/hook', 'file:///etc/passwd'])
    await expect(sendWithPush(alice, 'refund o-2 200', url)).rejects.toThrow(/push notification|private|http/);
  const waiting = await send(alice, [text('refund o-2 200')]);
  await expect(
    alice.createTaskPushNotificationConfig({ ...pushConfig('http://169.254.169.254/hook'), taskId: waiting.id }),
  ).rejects.toThrow(/private|link-local/);
  await expect(
    alice.listTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, pageSize: 10, pageToken: '' }),
  ).resolves.toMatchObject({ configs: [] });
  // Another principal cannot set one on alice's task, nor read hers.
  const eve = await clientOf(base, 'eve');
  await expect(eve.createTaskPushNotificationConfig({ ...pushConfig('https://example.com/hook'), taskId: waiting.id })).rejects.toThrow(
    /not found/,
  );
});

it('tasks/list shows the caller’s own tasks only, a page at a time', async () => {
  const { base } = await startAgent(dir, model.url);
  const [alice, bob] = await Promise.all([clientOf(base, 'alice'), clientOf(base, 'bob')]);
  const mine = [await send(alice, [text('refund o-4 100')]), await send(alice, [text('hello')]), await send(alice, [text('hello again')])];
  const theirs = await send(bob, [text('refund o-5 100')]);
  const list = (client: Client, pageToken = '', pageSize?: number) =>
    client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize,
      pageToken,
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: undefined,
    });
  const firstPage = await list(alice, '', 2);
  expect(firstPage.tasks.map((task) => task.id)).toEqual(mine.slice(0, 2).map((task) => task.id));
  expect(firstPage.nextPageToken).not.toBe('');
  const secondPage = await list(alice, firstPage.nextPageToken, 2);
  expect(secondPage.tasks.map((task) => task.id)).toEqual([mine[2]?.id]);
  expect(secondPage.nextPageToken).toBe('');
  expect((await list(bob)).tasks.map((task) => task.id)).toEqual([theirs.id]);
  expect((await list(alice)).tasks.find((task) => task.id === theirs.id)).toBeUndefined();
  await expect(list(alice, 'not-a-token')).rejects.toThrow(/pageToken/);
});
