/**
 * The A2A agent's edges (docs/a2a.md), with `@a2a-js/sdk`'s own client against real server
 * processes (test/fixtures/a2a/server-child.ts): bounded messages (parts, body size), the
 * cancellation of a waiting task (its tool never runs), a context busy with a waiting task,
 * `@Sensitive()` values never sent (the request's prompt and the answer quote a card number),
 * the route mounted in Fastify and in Nest (ToolnexusA2AModule), and a task answered through
 * another front end, which only its answerer's reply continues.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit } from 'toolnexus-ts';
import { answerAs } from 'toolnexus-ts/agents';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { chatModel, readLedger, RefundTool } from '../fixtures/chat/agent';
import {
  artifactText,
  clientFromUrl,
  clientOf,
  data,
  getTask,
  message,
  requestsOf,
  sdk,
  send,
  startAgent,
  stopAgents,
  text,
} from '../fixtures/a2a/harness';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

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
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-bounds-'));
});
afterEach(async () => {
  await stopAgents();
  rmSync(dir, { recursive: true, force: true });
});

it('refuses a message of more parts than allowed, a body over the limit (413), an overlong context id, before anything runs', async () => {
  const { base } = await startAgent(dir, model.url);
  const alice = await clientOf(base, 'alice');
  await expect(
    send(
      alice,
      Array.from({ length: 6 }, () => text('refund o-1 100')),
    ),
  ).rejects.toThrow(/at most 5 parts/);
  const response = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer alice', 'a2a-version': '1.0' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { parts: [{ text: 'x'.repeat(70 * 1024) }] } },
    }),
  });
  expect(response.status).toBe(413);
  const longContext = alice.sendMessage({
    tenant: '',
    message: { ...message([text('hello')]), contextId: 'c'.repeat(101) },
    configuration: undefined,
    metadata: undefined,
  });
  await expect(longContext).rejects.toThrow(/at most 100 characters/);
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(0);
});

it('cancels a waiting task: its request is cancelled, the tool never runs, the task reads canceled', async () => {
  const { base } = await startAgent(dir, model.url);
  const alice = await clientOf(base, 'alice');
  const waiting = await send(alice, [text('refund o-5 500')]);
  expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const cancelled = await alice.cancelTask({ tenant: '', id: waiting.id, metadata: undefined });
  expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  expect((await getTask(alice, waiting.id)).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  await expect(send(await clientOf(base, 'manager:ann'), [data({ ok: true })], waiting)).rejects.toThrow();
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(0);
  // The context is free again.
  const next = await send(alice, [text('hello')], undefined);
  expect(artifactText(next)).toBe('You said: hello');
});

it('refuses a new task in a context whose task waits: the reply goes on that task', async () => {
  const { base } = await startAgent(dir, model.url);
  const alice = await clientOf(base, 'alice');
  const waiting = await send(alice, [text('refund o-6 600')]);
  const result = alice.sendMessage({
    tenant: '',
    message: { ...message([text('hello')]), contextId: waiting.contextId },
    configuration: undefined,
    metadata: undefined,
  });
  await expect(result).rejects.toThrow(new RegExp(`task ${waiting.id} in progress`));
});

it('never sends a @Sensitive() value: the request prompt and the answer that quote the card read [redacted]', async () => {
  const { base } = await startAgent(dir, model.url);
  const alice = await clientOf(base, 'alice');
  const waiting = await send(alice, [text('pay 4111111111111111 900')]);
  const serialized = JSON.stringify(waiting);
  expect(serialized).not.toContain('4111111111111111');
  expect(requestsOf(waiting)[0]).toMatchObject({ kind: 'approval', prompt: 'Charge 900 cents to card [redacted]?' });
  const done = await send(await clientOf(base, 'manager:ann'), [data({ ok: true })], waiting);
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(JSON.stringify(done)).not.toContain('4111111111111111');
  expect(artifactText(done)).toContain('[redacted]');
  expect(JSON.stringify(await getTask(alice, waiting.id))).not.toContain('4111111111111111');
});

it('mounted in Fastify: the card, found from the base as the SDK client is given it, a task, its answer', async () => {
  const { base } = await startAgent(dir, model.url, 'fastify');
  // `createFromUrl('<host>/a2a')`: the SDK's resolver reads the card at the host's root.
  const waiting = await send(await clientFromUrl(base, 'alice'), [text('refund o-7 700')]);
  expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const done = await send(await clientOf(base, 'manager:ann'), [text('yes')], waiting);
  expect(artifactText(done)).toBe('Done: {"refunded":"o-7","cents":700}');
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});

it('served by ToolnexusA2AModule in a Nest app: the card under its path and at the root, a task completed', async () => {
  const { base } = await startAgent(dir, model.url, 'nest');
  const alice = await clientOf(base, 'alice');
  expect((await alice.getAgentCard()).supportedInterfaces[0]?.url).toBe(base);
  // Given the base as it is, `<host>/a2a`, the SDK's client finds the card at the host's root.
  expect((await (await clientFromUrl(base, 'alice')).getAgentCard()).supportedInterfaces[0]?.url).toBe(base);
  const done = await send(alice, [text('hello')]);
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(artifactText(done)).toBe('You said: hello');
  expect((await fetch(base, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
});

it('a task answered elsewhere (another front end, or a server that died before continuing): only its answerer continues it', async () => {
  const { base } = await startAgent(dir, model.url);
  const waiting = await send(await clientOf(base, 'alice'), [text('refund o-8 800')]);
  const [request] = requestsOf(waiting);
  // Settled through the coordinator alone, as the CLI without a runner does: the run stays halted, its answer in.
  const store = new SqliteStore({ filename: join(dir, 'a2a.db') });
  try {
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(new RefundTool(join(dir, 'ledger'))), store });
    const answered = await answerAs(coordinator, { id: request?.id as string, ok: true }, { by: { id: 'manager:ann' } });
    expect(answered.run).toEqual({ runId: waiting.id, continued: false });
  } finally {
    await store.close();
  }
  expect((await getTask(await clientOf(base, 'alice'), waiting.id)).status?.state).toBe(TaskState.TASK_STATE_WORKING);
  await expect(send(await clientOf(base, 'manager:ben'), [text('yes')], waiting)).rejects.toThrow(/not waiting for input/);
  const done = await send(await clientOf(base, 'manager:ann'), [text('yes')], waiting);
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(artifactText(done)).toBe('Done: {"refunded":"o-8","cents":800}');
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});

it('a sign-in request: its url in the data part, answered with text', async () => {
  const { base } = await startAgent(dir, model.url);
  const alice = await clientOf(base, 'alice');
  const waiting = await send(alice, [text('login o-9')]);
  expect(requestsOf(waiting)).toEqual([
    expect.objectContaining({ kind: 'authorization', url: 'https://sso.example.com/login', tool: 'sign_in' }),
  ]);
  const done = await send(await clientOf(base, 'manager:ann'), [text('signed in')], waiting);
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(artifactText(done)).toBe('Done: {"signedIn":true}');
});

it('a run that fails: the task is failed naming no error message, and the server logs one line with the code', async () => {
  // Nothing listens on port 1: the model cannot be reached.
  const { base, child } = await startAgent(dir, 'http://127.0.0.1:1');
  const failed = await send(await clientOf(base, 'alice'), [text('hello')]);
  expect(failed.status?.state).toBe(TaskState.TASK_STATE_FAILED);
  expect(failed.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'the run stopped on an error' });
  expect(child.stderr()).toMatch(
    new RegExp(`toolnexus a2a: task ${failed.id} failed: TOOLNEXUS_MODEL_CONNECTION \\(model provider openai\\)`),
  );
  expect(child.stderr()).not.toContain('ECONNREFUSED');
});
