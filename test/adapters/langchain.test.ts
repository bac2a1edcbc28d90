/**
 * toolnexus-ts/langchain in LangGraph's own loop: a StateGraph with LangGraph's ToolNode and
 * MemorySaver checkpointer, its model `ChatOpenAI` (`@langchain/openai`) pointed with
 * `configuration.baseURL` at the scripted OpenAI chat-completions server this test starts on
 * 127.0.0.1 (test/fixtures/interop/langgraph.ts, openai-script.ts): every model turn is real
 * HTTP, streamed where the test says so. Calls are recorded in a real SQLite file; restoring
 * the graph elsewhere and an Answer from another process are real child processes. Runs of
 * the side-effecting tools are counted in a file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver, type StateSnapshot } from '@langchain/langgraph';
import { langchainTools, type LangChainInterruptValue } from '../../src/adapters/langchain';
import { outputOf, startChild, until } from '../fixtures/children';
import { agentGraph, chatModel } from '../fixtures/interop/langgraph';
import { scriptedOpenAI } from '../fixtures/interop/openai-script';
import { interopCoordinator, interopToolkit, runsIn } from '../fixtures/interop/tools';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';

const CHILD = 'interop/langgraph-child.ts';
let server: MockServer;
let dir: string;
let countFile: string;
const previousCountFile = process.env.COUNT_FILE;

beforeAll(async () => {
  server = await startMockServer(scriptedOpenAI);
});
afterAll(() => server.close());

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tn-langchain-'));
  countFile = join(dir, 'runs.log');
  process.env.COUNT_FILE = countFile;
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  if (previousCountFile === undefined) delete process.env.COUNT_FILE;
  else process.env.COUNT_FILE = previousCountFile;
});

const runs = (tool: string): string[] => runsIn(countFile, tool);

type Graph = ReturnType<typeof agentGraph>;
const thread = (id: string) => ({ configurable: { thread_id: id } });
function lastText(state: { messages: Array<{ content: unknown }> }): string {
  return String(state.messages[state.messages.length - 1]?.content);
}
function interruptsOf(snapshot: StateSnapshot): LangChainInterruptValue[] {
  return snapshot.tasks.flatMap((t) => t.interrupts.map((i) => i.value as LangChainInterruptValue));
}

test('the graph calls two tools over HTTP: the DTO schema as each tool schema, the graph context as the host context', async () => {
  const tools = langchainTools(interopToolkit());
  expect(tools.map((t) => t.name)).toEqual(['add', 'weather', 'refund', 'crm']);
  const graph = agentGraph(tools, chatModel(server.url));
  const out = await graph.invoke({ messages: [new HumanMessage('two-tools#1')] }, { ...thread('t1'), context: { unit: 'K' } });
  expect(lastText(out)).toBe('saw: 5 | Oslo: 21 K');
  expect(runs('add')).toHaveLength(1);
  // What ChatOpenAI sent the server: our DTO schemas as the functions' parameters, then the two tool results.
  const asked = server.requests.filter((r) => JSON.stringify(r.body).includes('two-tools#1'));
  expect(asked.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions']);
  const functions = asked[0]?.body.tools as Array<{ function: { name: string; parameters: Record<string, unknown> } }>;
  expect(functions.map((t) => t.function.name)).toEqual(['add', 'weather', 'refund', 'crm']);
  expect(functions[1]?.function.parameters).toMatchObject({ properties: { city: { type: 'string', minLength: 2 } }, required: ['city'] });
  expect(asked[0]?.headers.authorization).toBe('Bearer sk-test-not-a-secret');
  const told = (asked[1]?.body.messages as Array<{ role: string; content: unknown; tool_call_id?: string }>).filter(
    (m) => m.role === 'tool',
  );
  expect(told).toEqual([
    expect.objectContaining({ content: '5', tool_call_id: 'call_add_1' }),
    expect.objectContaining({ content: 'Oslo: 21 K', tool_call_id: 'call_weather_1' }),
  ]);
});

test('streamed: ChatOpenAI with streaming: true, the answer arriving in chunks through the graph', async () => {
  const graph = agentGraph(langchainTools(interopToolkit()), chatModel(server.url, true));
  const chunks: string[] = [];
  const stream = await graph.stream({ messages: [new HumanMessage('two-tools#s1')] }, { ...thread('s1'), streamMode: 'messages' });
  for await (const [message] of stream) if (message instanceof AIMessageChunk && message.text) chunks.push(message.text);
  expect(chunks.join('')).toBe('saw: 5 | Oslo: 21 C');
  expect(chunks.length).toBeGreaterThan(1);
  expect(server.requests.filter((r) => JSON.stringify(r.body).includes('two-tools#s1')).map((r) => r.body.stream)).toEqual([true, true]);
  expect(runs('add')).toHaveLength(1);
});

test('streamed: the approval interrupt and the Command resume go through graph.stream; the tool runs once', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), chatModel(server.url, true));
  const interrupts: unknown[] = [];
  for await (const update of await graph.stream(
    { messages: [new HumanMessage('refund#s2')] },
    { ...thread('s2'), streamMode: 'updates' },
  )) {
    const raised = (update as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__;
    if (raised) interrupts.push(...raised.map((i) => i.value));
  }
  expect(interrupts).toEqual([expect.objectContaining({ kind: 'approval', prompt: 'Refund 500 cents on A-1?' })]);
  expect(runs('refund')).toHaveLength(0);
  const chunks: string[] = [];
  const resumed = await graph.stream(new Command({ resume: { ok: true } }), { ...thread('s2'), streamMode: 'messages' });
  for await (const [message] of resumed) if (message instanceof AIMessageChunk && message.text) chunks.push(message.text);
  expect(chunks.join('')).toBe('saw: refunded 500 cents on A-1 (approved by someone)');
  expect(chunks.length).toBeGreaterThan(1);
  expect(runs('refund')).toHaveLength(1);
  expect(await interopCoordinator(db).list({})).toEqual([expect.objectContaining({ status: 'resolved' })]);
});

test('invalid arguments: the model is told our validation message as an error tool message, run never called', async () => {
  const out = await agentGraph(langchainTools(interopToolkit()), chatModel(server.url)).invoke(
    { messages: [new HumanMessage('invalid#1')] },
    thread('t2'),
  );
  expect(lastText(out)).toBe('saw: invalid arguments for add: a: a must be an integer number');
  const message = out.messages.find((m) => m instanceof ToolMessage) as ToolMessage;
  expect(message.status).toBe('error');
  expect(runs('add')).toHaveLength(0);
  // Invoked directly, without a tool call, the same message is LangChain's parsing exception.
  const [add] = langchainTools(interopToolkit(), { names: ['add'] });
  await expect(add?.invoke({ a: 'two', b: 3 })).rejects.toThrow('invalid arguments for add: a: a must be an integer number');
});

async function askRefund(graph: Graph, id: string, db: string) {
  const first = await graph.invoke({ messages: [new HumanMessage(`refund#${id}`)] }, thread(id));
  const snapshot = await graph.getState(thread(id));
  const [value] = interruptsOf(snapshot);
  const stored = await interopCoordinator(db).list({});
  return { first, snapshot, value, stored };
}

test('a declared approval interrupts; Command({ resume }) with an Answer runs it once, even resumed twice and raced', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db), { answeredBy: { id: 'user:ann' } }), chatModel(server.url));
  const { first, snapshot, value, stored } = await askRefund(graph, 'r1', db);
  expect('__interrupt__' in first).toBe(true);
  expect(value).toEqual({ status: 'pending', id: stored[0]?.request.id, kind: 'approval', prompt: 'Refund 500 cents on A-1?' });
  expect(stored).toEqual([expect.objectContaining({ runId: 'langchain:call_refund_r1', status: 'pending' })]);
  expect(runs('refund')).toHaveLength(0);

  const answer = { id: value?.id ?? '', ok: true };
  const resumed = await graph.invoke(new Command({ resume: answer }), thread('r1'));
  expect(lastText(resumed)).toBe('saw: refunded 500 cents on A-1 (approved by user:ann)');
  expect(runs('refund')).toHaveLength(1);

  // The interrupted checkpoint resumed again, twice at once (forks of the same checkpoint): the stored outcome, no run.
  const at = { configurable: { ...snapshot.config.configurable } };
  const again = await Promise.all([0, 1].map(() => graph.invoke(new Command({ resume: answer }), at)));
  expect(again.map(lastText)).toEqual([lastText(resumed), lastText(resumed)]);
  expect(runs('refund')).toHaveLength(1);
  expect(await interopCoordinator(db).list({})).toEqual([expect.objectContaining({ status: 'resolved', answeredBy: { id: 'user:ann' } })]);
});

test('three graphs resuming the same interrupted checkpoint at once: the claim runs the tool once', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), chatModel(server.url));
  const { snapshot, value } = await askRefund(graph, 'r2', db);
  const at = { configurable: { ...snapshot.config.configurable } };
  const outs = await Promise.all([0, 1, 2].map(() => graph.invoke(new Command({ resume: { id: value?.id, ok: true } }), at)));
  expect(new Set(outs.map(lastText)).size).toBe(1);
  expect(lastText(outs[0] ?? { messages: [] })).toMatch(/^saw: refunded 500 cents on A-1/);
  expect(runs('refund')).toHaveLength(1);
});

test('a declined approval never runs the tool; the model is told, the record is declined', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), chatModel(server.url));
  const { value } = await askRefund(graph, 'r3', db);
  const out = await graph.invoke(new Command({ resume: { id: value?.id, ok: false, reason: 'declined' } }), thread('r3'));
  expect(lastText(out)).toMatch(/^saw: .*declined/);
  expect(runs('refund')).toHaveLength(0);
  expect(await interopCoordinator(db).list({})).toEqual([expect.objectContaining({ status: 'declined' })]);
});

test('a resume value that is not an Answer for the request is an error tool message; the call stays pending', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), chatModel(server.url));
  await askRefund(graph, 'r4', db);
  const out = await graph.invoke(new Command({ resume: { id: 'someone-else', ok: true } }), thread('r4'));
  expect(lastText(out)).toMatch(/^saw: refund: .*someone-else/);
  expect(runs('refund')).toHaveLength(0);
  expect(await interopCoordinator(db).list({})).toEqual([expect.objectContaining({ status: 'pending' })]);
});

test('a login suspension interrupts; an Answer from another process settles it, and the resume gets its outcome', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), chatModel(server.url));
  await graph.invoke({ messages: [new HumanMessage('login#l1')] }, thread('l1'));
  const [value] = interruptsOf(await graph.getState(thread('l1')));
  expect(value).toMatchObject({ status: 'pending', kind: 'authorization', prompt: 'Log in to the CRM', url: 'https://crm.example/login' });
  const answered = await outputOf<{ outcome: { output: string } }>(
    startChild('interop/answer-child.ts', [db, value?.id ?? ''], { COUNT_FILE: countFile }),
    'answer',
  );
  expect(answered.outcome.output).toBe('customer c-9: gold tier (as dana)');
  const out = await graph.invoke(new Command({ resume: { id: value?.id, ok: true, data: { user: 'dana' } } }), thread('l1'));
  expect(lastText(out)).toBe('saw: customer c-9: gold tier (as dana)');
  expect(runs('crm')).toHaveLength(1);
});

test('a login suspension settled by the Answer the graph is resumed with (its id left out)', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), chatModel(server.url));
  await graph.invoke({ messages: [new HumanMessage('login#l2')] }, thread('l2'));
  const [value] = interruptsOf(await graph.getState(thread('l2')));
  expect(value?.kind).toBe('authorization');
  const out = await graph.invoke(new Command({ resume: { ok: true, data: { user: 'eve' } } }), thread('l2'));
  expect(lastText(out)).toBe('saw: customer c-9: gold tier (as eve)');
  expect(runs('crm')).toHaveLength(1);
});

test('the interrupted graph saved, restored in two processes and resumed in both at once: the tool ran once', async () => {
  const db = join(dir, 'calls.db');
  const state = join(dir, 'checkpoints.json');
  const env = { COUNT_FILE: countFile };
  const asked = await outputOf<{ interrupts: LangChainInterruptValue[]; stored: Array<{ id: string; runId: string; status: string }> }>(
    startChild(CHILD, ['ask', server.url, db, state, 'x1'], env),
    'ask',
  );
  expect(asked.interrupts).toEqual([expect.objectContaining({ kind: 'approval', id: asked.stored[0]?.id })]);
  expect(asked.stored).toEqual([expect.objectContaining({ runId: 'langchain:call_refund_x1', status: 'pending' })]);
  const go = join(dir, 'go');
  const racers = [0, 1].map(() => startChild(CHILD, ['resume', server.url, db, state, 'x1', 'yes'], { ...env, GO_FILE: go }));
  await until(() => racers.every((r) => r.stderr().includes('ready')), 60_000, 'the racers to start');
  writeFileSync(go, '');
  const outs = await Promise.all(racers.map((r) => outputOf<{ text: string; stored: string[] }>(r, 'resume')));
  expect(runs('refund')).toHaveLength(1);
  expect(outs.map((o) => o.text)).toEqual([outs[0]?.text, outs[0]?.text]);
  expect(outs[0]?.text).toMatch(/^saw: refunded 500 cents on A-1 \(approved by langgraph:\d+\)$/);
  expect(outs[0]?.stored).toEqual(['resolved']);
}, 120_000);

test('restored in another process and declined there: the tool never runs', async () => {
  const db = join(dir, 'calls.db');
  const state = join(dir, 'checkpoints.json');
  const env = { COUNT_FILE: countFile };
  await outputOf(startChild(CHILD, ['ask', server.url, db, state, 'x2'], env), 'ask');
  const out = await outputOf<{ text: string; stored: string[] }>(
    startChild(CHILD, ['resume', server.url, db, state, 'x2', 'no'], env),
    'resume',
  );
  expect(out.text).toMatch(/^saw: .*declined/);
  expect(out.stored).toEqual(['declined']);
  expect(runs('refund')).toHaveLength(0);
}, 120_000);

test('with an answer policy, the principal the graph runs for may not approve their own call through Command({ resume }); a manager resuming the same checkpoint runs it once (docs/who-may-answer.md)', async () => {
  const db = join(dir, 'calls.db');
  const ann = { id: 'user:ann' };
  const coordinator = () =>
    new ResumeCoordinator({
      toolkit: interopToolkit(),
      store: new SqliteStore({ filename: db, busyTimeoutMs: 30_000 }),
      policy: rulesPolicy([{ principals: '*' }]),
    });
  const saver = new MemorySaver();
  const own = agentGraph(langchainTools(coordinator(), { answeredBy: ann, principal: ann }), chatModel(server.url), saver);
  const { value, snapshot } = await askRefund(own, 'sod', db);
  const refused = await own.invoke(new Command({ resume: { id: value?.id ?? '', ok: true } }), thread('sod'));
  expect(lastText(refused)).toContain(`answer to ${value?.id} refused: user:ann requested this call and may not approve it`);
  expect(runs('refund')).toHaveLength(0);
  const [waiting, ...others] = await interopCoordinator(db).list({});
  expect(others).toEqual([]);
  expect(waiting).toMatchObject({ status: 'pending', requestedBy: ann });
  expect(waiting?.answeredBy).toBeUndefined();

  // A manager's graph over the same checkpoints resumes the interrupted checkpoint: it runs once.
  const manager = agentGraph(
    langchainTools(coordinator(), { answeredBy: { id: 'manager:max' }, principal: ann }),
    chatModel(server.url),
    saver,
  );
  const approved = await manager.invoke(new Command({ resume: { id: value?.id ?? '', ok: true } }), snapshot.config);
  expect(lastText(approved)).toBe('saw: refunded 500 cents on A-1 (approved by manager:max)');
  expect(runs('refund')).toHaveLength(1);
});
