/**
 * A runner served as an A2A agent (toolnexus-ts/a2a, docs/a2a.md), driven by `@a2a-js/sdk`'s own
 * client against real server processes (test/fixtures/a2a/server-child.ts) on one SQLite file
 * (and, for the restart and the race, one PostgreSQL schema),
 * the model a scripted chat-completions server on 127.0.0.1:
 *
 * - a task that waits for an approval is `input-required`, its request in its status message;
 *   the server is SIGKILLed and another started on the same file; the answer given on the task
 *   completes the run once (the tool's ledger counts 1);
 * - an unauthenticated request is refused (401), and so is the answer of a principal the answer
 *   policy refuses; the task still waits;
 * - two replies on the same task at once, to two servers: exactly one wins, the tool runs once;
 * - message/stream streams the task to `input-required` and, answered, to its artifact and `completed`;
 * - mounted in Express; and the A2A 0.3 methods (`message/send`) for clients that speak them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Part, Task } from '@a2a-js/sdk';
import { chatModel, readLedger } from '../fixtures/chat/agent';
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
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
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
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-'));
});
afterEach(async () => {
  await stopAgents();
  rmSync(dir, { recursive: true, force: true });
});

const server = (mode: 'node' | 'express' | 'fastify' = 'node') => startAgent(dir, model.url, mode);

let pgUrl: string;
const schemas: string[] = [];
beforeAll(async () => {
  pgUrl = await postgresUrl();
});
afterAll(async () => {
  for (const schema of schemas) await dropSchema(pgUrl, schema);
});

/** Where the agents of a test keep their runs, sessions and suspensions. */
const STORES: Array<[string, () => string]> = [
  ['SQLite', () => join(dir, 'a2a.db')],
  [
    'PostgreSQL',
    () => {
      const schema = uniqueSchema('a2a');
      schemas.push(schema);
      return `pg:${pgUrl}#${schema}`;
    },
  ],
];

it('serves its agent card: name, skills, streaming, one JSON-RPC interface per protocol version', async () => {
  const { base } = await server();
  const card = await (await clientOf(base)).getAgentCard();
  expect(card).toMatchObject({ name: 'support', description: 'Refunds orders', version: '0.1.0', capabilities: { streaming: true } });
  expect(card.skills).toEqual([expect.objectContaining({ id: 'refunds', name: 'refunds', examples: ['refund o-1 500'] })]);
  expect(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion])).toEqual([
    [base, 'JSONRPC', '1.0'],
    [base, 'JSONRPC', '0.3'],
  ]);
  // The same card read by a 0.3 client: the fields it reads are there too.
  const raw = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
  expect(raw).toMatchObject({ url: base, protocolVersion: '0.3.0', preferredTransport: 'JSONRPC', capabilities: { streaming: true } });
});

describe.each(STORES)('on %s', (_name, storeOf) => {
  it('a task waits input-required, survives a SIGKILL of its server, and is completed once by the answer given on it', async () => {
    const store = storeOf();
    const first = await startAgent(dir, model.url, 'node', store);
    const alice = await clientOf(first.base, 'alice');
    const waiting = await send(alice, [text('refund o-1 500')]);
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(waiting.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'Refund 500 cents on order o-1?' });
    const [request] = requestsOf(waiting);
    expect(request).toMatchObject({ kind: 'approval', prompt: 'Refund 500 cents on order o-1?', tool: 'refund' });
    expect(request).not.toHaveProperty('args');

    first.child.kill('SIGKILL');
    expect((await first.child.exited).signal).toBe('SIGKILL');
    const second = await startAgent(dir, model.url, 'node', store);
    const ann = await clientOf(second.base, 'manager:ann');
    // Another process reads the task from the store: still waiting, the same request.
    const read = await getTask(ann, waiting.id);
    expect(read).toMatchObject({ id: waiting.id, contextId: waiting.contextId, status: { state: TaskState.TASK_STATE_INPUT_REQUIRED } });
    expect(requestsOf(read)).toEqual([request]);
    expect(readLedger(join(dir, 'ledger'))).toHaveLength(0);

    const done = await send(ann, [data({ ok: true, comment: 'PO 2291' })], waiting);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(done)).toBe('Done: {"refunded":"o-1","cents":500}');
    expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
    const after = await getTask(ann, waiting.id);
    expect(after.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Answered again: refused, and the tool does not run again.
    await expect(send(ann, [data({ ok: true })], waiting)).rejects.toThrow(/completed|terminal/);
    expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
  });

  it('two replies on one task at once, to two servers: exactly one wins and the tool runs once', async () => {
    const store = storeOf();
    const [a, b] = await Promise.all([startAgent(dir, model.url, 'node', store), startAgent(dir, model.url, 'node', store)]);
    const waiting = await send(await clientOf(a.base, 'alice'), [text('refund o-3 300')]);
    const [ann, ben] = await Promise.all([clientOf(a.base, 'manager:ann'), clientOf(b.base, 'manager:ben')]);
    const outcomes = await Promise.allSettled([send(ann, [data({ ok: true })], waiting), send(ben, [text('yes')], waiting)]);
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    expect(won).toHaveLength(1);
    expect((won[0] as PromiseFulfilledResult<Task>).value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(lost).toHaveLength(1);
    expect(String(lost[0]?.reason)).toMatch(/answered|completed|running/);
    expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
  });
});

it('refuses an unauthenticated request (401) and an answer the policy refuses; the task still waits', async () => {
  const { base } = await server();
  const response = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
  });
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe('Bearer');
  await expect(send(await clientOf(base), [text('refund o-2 100')])).rejects.toThrow();

  const alice = await clientOf(base, 'alice');
  const waiting = await send(alice, [text('refund o-2 100')]);
  const mallory = await clientOf(base, 'mallory');
  // The policy's refusal is the spec's authorization error: HTTP 403, ErrorInfo PERMISSION_DENIED
  // (not "unsupported operation", which would tell the client the agent cannot do it at all).
  const refused = (await send(mallory, [data({ ok: true })], waiting).catch((error: unknown) => error)) as {
    name: string;
    message: string;
    envelopeCode: number;
    data: unknown;
  };
  expect(refused).toMatchObject({
    name: 'JsonRpcTransportError',
    envelopeCode: -32000,
    message: expect.stringMatching(/refunds need a manager/) as unknown,
  });
  expect(refused.data).toEqual([
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'PERMISSION_DENIED',
      domain: 'toolnexus-ts',
      metadata: { toolnexus_reason: 'answer_refused' },
    },
  ]);
  // Its requester cannot approve it either (separation of duties), streamed or not, 1.0 or 0.3.
  await expect(send(alice, [text('yes')], waiting)).rejects.toThrow(/separation of duties/);
  const stream = alice.sendMessageStream({
    tenant: '',
    message: message([text('yes')], waiting),
    configuration: undefined,
    metadata: undefined,
  });
  await expect(stream.next()).rejects.toMatchObject({
    envelopeCode: -32000,
    message: expect.stringMatching(/separation of duties/) as unknown,
  });
  for (const [version, method, params] of [
    [
      '1.0',
      'SendMessage',
      { message: { messageId: 'm-r1', taskId: waiting.id, contextId: waiting.contextId, role: 'ROLE_USER', parts: [{ text: 'yes' }] } },
    ],
    [
      undefined,
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: 'm-r2',
          taskId: waiting.id,
          contextId: waiting.contextId,
          role: 'user',
          parts: [{ kind: 'text', text: 'yes' }],
        },
      },
    ],
  ] as const) {
    const raw = await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer alice', ...(version ? { 'a2a-version': version } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method, params }),
    });
    expect(raw.status).toBe(403);
    expect(await raw.json()).toMatchObject({ id: 3, error: { code: -32000, data: [{ reason: 'PERMISSION_DENIED' }] } });
  }
  expect((await getTask(alice, waiting.id)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(0);
  // A reply that answers nothing is refused as malformed.
  await expect(send(await clientOf(base, 'manager:ann'), [text('maybe')], waiting)).rejects.toThrow(/yes.*no/);
});

it('message/stream: the task to input-required, then, answered, its artifact and completed', async () => {
  const { base } = await server();
  const alice = await clientOf(base, 'alice');
  const asked = [];
  for await (const event of alice.sendMessageStream({
    tenant: '',
    message: message([text('refund o-4 400')]),
    configuration: undefined,
    metadata: undefined,
  }))
    asked.push(event.payload);
  expect(asked[0]?.$case).toBe('task');
  const last = asked[asked.length - 1];
  expect(last?.$case).toBe('statusUpdate');
  const update = last?.value as { taskId: string; contextId: string; status: { state: number } };
  expect(update.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

  const ann = await clientOf(base, 'manager:ann');
  const answered = [];
  const task = { id: update.taskId, contextId: update.contextId };
  for await (const event of ann.sendMessageStream({
    tenant: '',
    message: message([data({ ok: true })], task),
    configuration: undefined,
    metadata: undefined,
  }))
    answered.push(event.payload);
  const cases = answered.map((payload) => payload?.$case);
  expect(cases).toContain('artifactUpdate');
  const artifact = answered.find((payload) => payload?.$case === 'artifactUpdate')?.value as { artifact: { parts: Part[] } };
  expect(artifact.artifact.parts[0]?.content).toEqual({ $case: 'text', value: 'Done: {"refunded":"o-4","cents":400}' });
  const end = answered[answered.length - 1]?.value as { status: { state: number } };
  expect(end.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});

it('mounted in Express, and the 0.3 methods (message/send, tasks/get, message/stream) for a client without A2A-Version', async () => {
  const { base } = await server('express');
  // `createFromUrl('<host>/a2a')`, as a newcomer writes it: the SDK's resolver reads the card at the host's root.
  const done = await send(await clientFromUrl(base, 'alice'), [text('hello')]);
  expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  expect(artifactText(done)).toBe('You said: hello');

  const legacy = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer alice' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'message/send',
      params: { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi there' }] } },
    }),
  });
  const body = (await legacy.json()) as {
    id: number;
    result: { kind: string; id: string; status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> };
  };
  expect(body.id).toBe(7);
  expect(body.result).toMatchObject({ kind: 'task', status: { state: 'completed' } });
  expect(body.result.artifacts[0]?.parts[0]?.text).toBe('You said: hi there');
  const got = (await (
    await fetch(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer alice' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { id: body.result.id } }),
    })
  ).json()) as { result: { status: { state: string } } };
  expect(got.result.status.state).toBe('completed');

  // message/stream: server-sent events, each a JSON-RPC response of the 0.3 shapes, ending completed.
  const streamed = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer alice' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'message/stream',
      params: { message: { kind: 'message', messageId: 'm-2', role: 'user', parts: [{ kind: 'text', text: 'stream me' }] } },
    }),
  });
  expect(streamed.headers.get('content-type')).toBe('text/event-stream');
  const events = (await streamed.text())
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map(
      (event) => (JSON.parse(event.slice('data: '.length)) as { id: number; result: { kind: string; status?: { state: string } } }).result,
    );
  expect(events[0]?.kind).toBe('task');
  expect(events[events.length - 1]).toMatchObject({ kind: 'status-update', status: { state: 'completed' } });
});
