/**
 * toolnexus-ts/langchain in LangGraph's own loop: a StateGraph with LangGraph's ToolNode and
 * MemorySaver checkpointer, its model a LangChain chat model scripted like the other
 * adapters' mock servers (test/fixtures/interop/langgraph.ts; no LangChain chat package that
 * speaks HTTP is installed). Calls are recorded in a real SQLite file; an Answer from another
 * process is a real child process. Runs of the side-effecting tools are counted in a file.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, type StateSnapshot } from '@langchain/langgraph';
import { langchainTools, type LangChainInterruptValue } from '../../src/langchain';
import { outputOf, startChild, until } from '../fixtures/children';
import { agentGraph, ScriptedChatModel } from '../fixtures/interop/langgraph';
import { interopCoordinator, interopToolkit } from '../fixtures/interop/tools';

const CHILD = 'interop/langgraph-child.ts';
let dir: string;
let countFile: string;
const previousCountFile = process.env.COUNT_FILE;

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

function runs(tool: string): string[] {
  if (!existsSync(countFile)) return [];
  return readFileSync(countFile, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith(`${tool}\t`));
}

type Graph = ReturnType<typeof agentGraph>;
const thread = (id: string) => ({ configurable: { thread_id: id } });
function lastText(state: { messages: Array<{ content: unknown }> }): string {
  return String(state.messages[state.messages.length - 1]?.content);
}
function interruptsOf(snapshot: StateSnapshot): LangChainInterruptValue[] {
  return snapshot.tasks.flatMap((t) => t.interrupts.map((i) => i.value as LangChainInterruptValue));
}

test('the graph calls two tools: the DTO schema as each tool schema, the graph context as the host context', async () => {
  const tools = langchainTools(interopToolkit());
  expect(tools.map((t) => t.name)).toEqual(['add', 'weather', 'refund', 'crm']);
  expect(tools[1]?.schema).toMatchObject({ properties: { city: { type: 'string', minLength: 2 } }, required: ['city'] });
  const model = new ScriptedChatModel({});
  const graph = agentGraph(tools, model);
  const out = await graph.invoke({ messages: [new HumanMessage('two-tools#1')] }, { ...thread('t1'), context: { unit: 'K' } });
  expect(lastText(out)).toBe('saw: 5 | Oslo: 21 K');
  expect(runs('add')).toHaveLength(1);
});

test('invalid arguments: the model is told our validation message as an error tool message, run never called', async () => {
  const model = new ScriptedChatModel({});
  const out = await agentGraph(langchainTools(interopToolkit()), model).invoke({ messages: [new HumanMessage('invalid#1')] }, thread('t2'));
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
  const graph = agentGraph(langchainTools(interopCoordinator(db), { answeredBy: { id: 'user:ann' } }), new ScriptedChatModel({}));
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

test('two graphs resuming the same interrupted checkpoint at once: the claim runs the tool once', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), new ScriptedChatModel({}));
  const { snapshot, value } = await askRefund(graph, 'r2', db);
  const at = { configurable: { ...snapshot.config.configurable } };
  const outs = await Promise.all([0, 1, 2].map(() => graph.invoke(new Command({ resume: { id: value?.id, ok: true } }), at)));
  expect(new Set(outs.map(lastText)).size).toBe(1);
  expect(lastText(outs[0] ?? { messages: [] })).toMatch(/^saw: refunded 500 cents on A-1/);
  expect(runs('refund')).toHaveLength(1);
});

test('a declined approval never runs the tool; the model is told, the record is declined', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), new ScriptedChatModel({}));
  const { value } = await askRefund(graph, 'r3', db);
  const out = await graph.invoke(new Command({ resume: { id: value?.id, ok: false, reason: 'declined' } }), thread('r3'));
  expect(lastText(out)).toMatch(/^saw: .*declined/);
  expect(runs('refund')).toHaveLength(0);
  expect(await interopCoordinator(db).list({})).toEqual([expect.objectContaining({ status: 'declined' })]);
});

test('a resume value that is not an Answer for the request is an error tool message; the call stays pending', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), new ScriptedChatModel({}));
  await askRefund(graph, 'r4', db);
  const out = await graph.invoke(new Command({ resume: { id: 'someone-else', ok: true } }), thread('r4'));
  expect(lastText(out)).toMatch(/^saw: refund: .*someone-else/);
  expect(runs('refund')).toHaveLength(0);
  expect(await interopCoordinator(db).list({})).toEqual([expect.objectContaining({ status: 'pending' })]);
});

test('a login suspension interrupts; an Answer from another process settles it, and the resume gets its outcome', async () => {
  const db = join(dir, 'calls.db');
  const graph = agentGraph(langchainTools(interopCoordinator(db)), new ScriptedChatModel({}));
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
  const graph = agentGraph(langchainTools(interopCoordinator(db)), new ScriptedChatModel({}));
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
    startChild(CHILD, ['ask', db, state, 'x1'], env),
    'ask',
  );
  expect(asked.interrupts).toEqual([expect.objectContaining({ kind: 'approval', id: asked.stored[0]?.id })]);
  expect(asked.stored).toEqual([expect.objectContaining({ runId: 'langchain:call_refund_x1', status: 'pending' })]);
  const go = join(dir, 'go');
  const racers = [0, 1].map(() => startChild(CHILD, ['resume', db, state, 'x1', 'yes'], { ...env, GO_FILE: go }));
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
  await outputOf(startChild(CHILD, ['ask', db, state, 'x2'], env), 'ask');
  const out = await outputOf<{ text: string; stored: string[] }>(startChild(CHILD, ['resume', db, state, 'x2', 'no'], env), 'resume');
  expect(out.text).toMatch(/^saw: .*declined/);
  expect(out.stored).toEqual(['declined']);
  expect(runs('refund')).toHaveLength(0);
}, 120_000);
