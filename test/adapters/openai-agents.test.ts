/**
 * toolnexus-ts/openai-agents in the OpenAI Agents SDK's own Runner (`@openai/agents`), its
 * model an OpenAIProvider on chat completions pointed at a scripted server on 127.0.0.1 the
 * test owns. Each step runs in a real child process (test/fixtures/interop/agents-child.ts):
 * the RunState is serialised by one and restored by others, racing where the claim is what
 * is tested. Runs of the side-effecting tools are counted in a file the test owns.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild, until } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { scriptedOpenAI } from '../fixtures/interop/openai-script';
import { runsIn } from '../fixtures/interop/tools';

const CHILD = 'interop/agents-child.ts';
let server: MockServer;
let dir: string;
let countFile: string;

beforeAll(async () => {
  server = await startMockServer(scriptedOpenAI);
});
afterAll(() => server.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tn-agents-'));
  countFile = join(dir, 'runs.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const runs = (tool: string): string[] => runsIn(countFile, tool);
function child<T>(fixture: string, args: string[], env: Record<string, string> = {}): Promise<T> {
  return outputOf<T>(startChild(fixture, args, { COUNT_FILE: countFile, ...env }), args[0] ?? '');
}

interface Asked {
  text: string | null;
  interruptions: string[];
  stored: Array<{ id: string; kind: string; runId: string; status: string }>;
}
interface Answered {
  text: string;
  rejected: number;
  stored: Array<{ kind: string; status: string }>;
}

test('the Runner calls two tools: the DTO schema as parameters, the run context as the host context', async () => {
  const out = await child<{ text: string }>(CHILD, ['two-tools', server.url]);
  expect(out.text).toBe('saw: 5 | Oslo: 21 K');
  expect(runs('add')).toHaveLength(1);
  const first = server.requests.find((r) => JSON.stringify(r.body).includes('two-tools#'));
  const tools = first?.body.tools as Array<{ function: { name: string; parameters: unknown; strict?: boolean } }>;
  expect(tools.map((t) => t.function.name)).toEqual(['add', 'weather', 'refund', 'crm']);
  expect(tools[1]?.function.parameters).toMatchObject({ properties: { city: { type: 'string', minLength: 2 } }, required: ['city'] });
});

test('invalid arguments: the model is told our validation message and run is never called', async () => {
  const out = await child<{ text: string }>(CHILD, ['invalid', server.url]);
  expect(out.text).toBe('saw: invalid arguments for add: a: a must be an integer number');
  expect(runs('add')).toHaveLength(0);
});

test('a declared approval interrupts; the RunState restored in two processes and approved in both: the tool ran once', async () => {
  const db = join(dir, 'calls.db');
  const state = join(dir, 'state.json');
  const asked = await child<Asked>(CHILD, ['approval-ask', server.url, db, state, 'race']);
  expect(asked.interruptions).toEqual(['refund']);
  expect(asked.stored).toEqual([expect.objectContaining({ kind: 'approval', runId: 'openai-agents:call_refund_race', status: 'pending' })]);
  expect(runs('refund')).toHaveLength(0);
  const go = join(dir, 'go');
  const racers = [0, 1].map(() =>
    startChild(CHILD, ['approval-answer', server.url, db, state, 'yes'], { COUNT_FILE: countFile, GO_FILE: go }),
  );
  await until(() => racers.every((r) => r.stderr().includes('ready')), 30_000, 'the racers to start');
  writeFileSync(go, '');
  const outs = await Promise.all(racers.map((r) => outputOf<Answered>(r, 'approval-answer')));
  expect(runs('refund')).toHaveLength(1);
  expect(outs.map((o) => o.text)).toEqual([outs[0]?.text, outs[0]?.text]);
  expect(outs[0]?.text).toMatch(/^saw: refunded 500 cents on A-1 \(approved by agents:\d+\)$/);
  // Restored once more, later: the stored outcome again, no run.
  const again = await child<Answered>(CHILD, ['approval-answer', server.url, db, state, 'yes']);
  expect(again.text).toBe(outs[0]?.text);
  expect(runs('refund')).toHaveLength(1);
});

test('a rejected interruption never runs the tool, and the record is settled as declined', async () => {
  const db = join(dir, 'calls.db');
  const state = join(dir, 'state.json');
  await child<Asked>(CHILD, ['approval-ask', server.url, db, state, 'no']);
  const out = await child<Answered>(CHILD, ['approval-answer', server.url, db, state, 'no']);
  expect(out).toMatchObject({ text: 'saw: not this one', rejected: 1, stored: [{ kind: 'approval', status: 'declined' }] });
  expect(runs('refund')).toHaveLength(0);
});

test('a login suspension is a pending output and a durable call an Answer from another process settles', async () => {
  const db = join(dir, 'calls.db');
  const asked = await child<Asked>(CHILD, ['login-ask', server.url, db, join(dir, 'state.json'), 'login']);
  const stored = asked.stored[0];
  expect(stored).toMatchObject({ kind: 'authorization', runId: 'openai-agents:call_crm_login', status: 'pending' });
  expect(JSON.parse((asked.text ?? '').replace(/^saw: /, ''))).toEqual({
    status: 'pending',
    id: stored?.id,
    kind: 'authorization',
    prompt: 'Log in to the CRM',
    url: 'https://crm.example/login',
  });
  const answered = await child<{ outcome: { output: string } }>('interop/answer-child.ts', [db, stored?.id ?? '']);
  expect(answered.outcome.output).toBe('customer c-9: gold tier (as dana)');
  expect(runs('crm')).toHaveLength(1);
});
