/**
 * A new task's message carrying an idempotency key (message metadata `io.toolnexus/idempotency-key`,
 * docs/a2a.md, "Idempotency keys"; issue 50) starts one task per key and principal: sent again
 * to another agent process on the same store, over another connection, it is answered with the
 * task the first one started, and no run starts (the model is not asked again). Another
 * principal's same key is its own task. Real parts: two agent processes (server-child.ts) on one
 * SQLite file, the SDK's own client, a model server on 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@a2a-js/sdk/client';
import type { Task } from '@a2a-js/sdk';
import { chatModel } from '../fixtures/chat/agent';
import { clientOf, message, requestsOf, sdk, startAgent, stopAgents, text } from '../fixtures/a2a/harness';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const { TaskState } = sdk;
const META_KEY = 'io.toolnexus/idempotency-key';

let dir: string;
let model: MockServer;

beforeAll(async () => {
  model = await startMockServer(chatModel);
});
afterAll(async () => model.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-keyed-'));
});
afterEach(async () => {
  await stopAgents();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends a new task's message with `key` in its metadata (named after it, as a2aAgentTool names it). */
async function sendKeyed(client: Client, words: string, key: string): Promise<Task> {
  const keyed = { ...message([text(words)]), messageId: key, metadata: { [META_KEY]: key } };
  const result = await client.sendMessage({ tenant: '', message: keyed, configuration: undefined, metadata: undefined });
  if (!('status' in result)) throw new Error('the agent answered a message, not a task');
  return result;
}

it('a repeated key starts nothing: the second process answers with the first task; another principal’s key is its own', async () => {
  const store = join(dir, 'a2a.db');
  const [a, b] = [await startAgent(dir, model.url, 'node', store), await startAgent(dir, model.url, 'node', store)];
  const first = await sendKeyed(await clientOf(a.base, 'alice'), 'refund o-9 300', 'order-9');
  expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  const asked = model.requests.length;
  const again = await sendKeyed(await clientOf(b.base, 'alice'), 'refund o-9 300', 'order-9');
  expect(again.id).toBe(first.id);
  expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  expect(requestsOf(again)).toEqual(requestsOf(first));
  expect(model.requests.length).toBe(asked);
  const bobs = await sendKeyed(await clientOf(b.base, 'bob'), 'refund o-9 300', 'order-9');
  expect(bobs.id).not.toBe(first.id);
  expect(model.requests.length).toBeGreaterThan(asked);
});
