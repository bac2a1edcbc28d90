/**
 * toolnexus-ts/ai-sdk's tool set in the AI SDK's own loop (`generateText`, `streamText` of
 * ai 7), against a scripted OpenAI-compatible server on 127.0.0.1 that the test owns. The AI
 * SDK is ESM-only, which jest on Node 20 cannot load, so each step runs in a real child
 * process (test/fixtures/interop/ai-sdk-child.ts), several of them racing where the claim is
 * what is tested. Runs of the side-effecting tools are counted in a file the test owns.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild, until } from '../fixtures/children';
import { anthropicCalls, anthropicText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { makePng } from '../fixtures/png';
import { scriptedOpenAI } from '../fixtures/interop/openai-script';
import { runsIn } from '../fixtures/interop/tools';

const CHILD = 'interop/ai-sdk-child.ts';
let server: MockServer;
let dir: string;
let countFile: string;

beforeAll(async () => {
  server = await startMockServer(scriptedOpenAI);
});
afterAll(() => server.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tn-ai-sdk-'));
  countFile = join(dir, 'runs.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const runs = (tool: string): string[] => runsIn(countFile, tool);

function child<T>(args: string[], env: Record<string, string> = {}): Promise<T> {
  return outputOf<T>(startChild(CHILD, args, { COUNT_FILE: countFile, ...env }), args[0] ?? '');
}

interface RunOut {
  text: string;
  toolResults: unknown[];
  toolErrors?: string[];
  deltas?: number;
}

test('generateText runs two tools: the DTO schemas went to the model, the host context reached run', async () => {
  const out = await child<RunOut>(['two-tools', server.url]);
  expect(out.toolResults).toEqual(['5', 'Oslo: 21 F']);
  expect(out.text).toBe('saw: 5 | Oslo: 21 F');
  expect(runs('add')).toHaveLength(1);
  const first = server.requests.find((r) => JSON.stringify(r.body).includes('two-tools#'));
  const tools = first?.body.tools as Array<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }>;
  expect(tools.map((t) => t.function.name)).toEqual(['add', 'weather', 'refund', 'crm']);
  expect(tools[0]?.function.parameters.properties).toEqual({
    a: { type: 'integer', description: 'First addend' },
    b: { type: 'integer', description: 'Second addend' },
  });
});

test('streamText runs the same tools and streams the answer', async () => {
  const out = await child<RunOut>(['two-tools', server.url, 'stream']);
  expect(out.toolResults).toEqual(['5', 'Oslo: 21 F']);
  expect(out.text).toBe('saw: 5 | Oslo: 21 F');
  expect(out.deltas).toBeGreaterThan(1);
});

test('invalid arguments: the model is told our validation message and run is never called', async () => {
  const out = await child<RunOut>(['invalid', server.url]);
  expect(out.toolResults).toEqual([]);
  expect(out.toolErrors?.[0]).toContain('invalid arguments for add: a: a must be an integer number');
  expect(out.text).toContain('invalid arguments for add: a: a must be an integer number');
  expect(runs('add')).toHaveLength(0);
});

interface Asked {
  approvals: string[];
  reasons: Array<string | null>;
  toolResults: Array<{ status: string; request: { id: string; kind: string; url?: string } }>;
  stored: Array<{ id: string; kind: string; runId: string; status: string }>;
}
interface Answered {
  text: string;
  declined: number;
  stored: Array<{ kind: string; status: string }>;
}

test('a declared approval is the AI SDK approval flow; approved in one process, the tool runs once', async () => {
  const db = join(dir, 'calls.db');
  const messages = join(dir, 'messages.json');
  const asked = await child<Asked>(['approval-ask', server.url, db, messages, 'one']);
  expect(asked.approvals).toHaveLength(1);
  // A tool's own needsApproval is a boolean in ai 7: no reason without aiSdkToolApproval (next test).
  expect(asked.reasons).toEqual([null]);
  expect(asked.stored).toEqual([expect.objectContaining({ kind: 'approval', runId: 'ai-sdk:call_refund_one', status: 'pending' })]);
  expect(runs('refund')).toHaveLength(0);
  const answered = await child<Answered>(['approval-answer', server.url, db, messages, 'yes']);
  expect(answered.text).toMatch(/^saw: refunded 500 cents on A-1 \(approved by ai-sdk:\d+\)$/);
  expect(answered.stored).toEqual([{ kind: 'approval', status: 'resolved' }]);
  // The same approval response again (a retried request): the stored outcome, no second run.
  const again = await child<Answered>(['approval-answer', server.url, db, messages, 'yes']);
  expect(again.text).toBe(answered.text);
  expect(runs('refund')).toHaveLength(1);
});

test('with toolApproval: aiSdkToolApproval(tools), the approval request carries our prompt as its reason', async () => {
  const db = join(dir, 'calls.db');
  const messages = join(dir, 'messages.json');
  const asked = await child<Asked>(['approval-ask', server.url, db, messages, 'why', 'reason']);
  expect(asked.reasons).toEqual(['Refund 500 cents on A-1?']);
  expect(asked.stored).toEqual([expect.objectContaining({ kind: 'approval', runId: 'ai-sdk:call_refund_why', status: 'pending' })]);
  // In the response messages the host keeps (and the UI message stream useChat reads) too.
  const saved = JSON.parse(readFileSync(messages, 'utf8')) as Array<{ role: string; content: unknown }>;
  const parts = saved.flatMap((m) => (Array.isArray(m.content) ? (m.content as unknown[]) : []));
  expect(parts).toContainEqual(
    expect.objectContaining({ type: 'tool-approval-request', toolCallId: 'call_refund_why', reason: 'Refund 500 cents on A-1?' }),
  );
  expect(runs('refund')).toHaveLength(0);
  // Approved with the same option: the recorded request answers its re-check, and the tool runs once.
  const answered = await child<Answered>(['approval-answer', server.url, db, messages, 'yes', 'reason']);
  expect(answered.text).toMatch(/^saw: refunded 500 cents on A-1 \(approved by ai-sdk:\d+\)$/);
  expect(answered.stored).toEqual([{ kind: 'approval', status: 'resolved' }]);
  expect(runs('refund')).toHaveLength(1);
});

test('the serialised messages approved from two processes at once: the tool ran once, both saw its result', async () => {
  const db = join(dir, 'calls.db');
  const messages = join(dir, 'messages.json');
  await child<Asked>(['approval-ask', server.url, db, messages, 'race']);
  const go = join(dir, 'go');
  const racers = [0, 1, 2].map(() =>
    startChild(CHILD, ['approval-answer', server.url, db, messages, 'yes'], { COUNT_FILE: countFile, GO_FILE: go }),
  );
  await until(() => racers.every((r) => r.stderr().includes('ready')), 30_000, 'the racers to start');
  writeFileSync(go, '');
  const outs = await Promise.all(racers.map((r) => outputOf<Answered>(r, 'approval-answer')));
  expect(runs('refund')).toHaveLength(1);
  expect(new Set(outs.map((o) => o.text)).size).toBe(1);
  expect(outs[0]?.text).toMatch(/^saw: refunded 500 cents on A-1/);
});

test('a declined approval never runs the tool, and the record is settled as declined', async () => {
  const db = join(dir, 'calls.db');
  const messages = join(dir, 'messages.json');
  await child<Asked>(['approval-ask', server.url, db, messages, 'no']);
  const answered = await child<Answered>(['approval-answer', server.url, db, messages, 'no']);
  expect(answered.declined).toBe(1);
  expect(answered.stored).toEqual([{ kind: 'approval', status: 'declined' }]);
  expect(answered.text).toBe('saw: not this one');
  expect(runs('refund')).toHaveLength(0);
});

test('a login suspension is a documented tool output and a durable call an Answer from another process settles', async () => {
  const db = join(dir, 'calls.db');
  const messages = join(dir, 'messages.json');
  const asked = await child<Asked>(['login-ask', server.url, db, messages, 'login']);
  const output = asked.toolResults[0];
  expect(output?.status).toBe('pending');
  expect(output?.request).toMatchObject({ kind: 'authorization', url: 'https://crm.example/login' });
  expect(asked.stored).toEqual([expect.objectContaining({ id: output?.request.id, kind: 'authorization', status: 'pending' })]);
  expect(runs('crm')).toHaveLength(0);
  const answer = await child<{ outcome: { output: string } }>(['answer', db, output?.request.id ?? '']);
  expect(answer.outcome.output).toBe('customer c-9: gold tier (as dana)');
  const continued = await child<{ text: string }>(['login-continue', server.url, db, messages]);
  expect(continued.text).toBe('saw: customer c-9: gold tier (as dana)');
  expect(runs('crm')).toHaveLength(1);
});

it('a tool’s PNG reaches the model through the AI SDK’s loop: toModelOutput gives it as content, @ai-sdk/anthropic sends an image block', async () => {
  const png = makePng(2, 2).toString('base64');
  const claude = await startMockServer([anthropicCalls([{ id: 'toolu_chart', name: 'chart', args: {} }]), anthropicText('A red square.')]);
  try {
    const out = await outputOf<{ text: string; toolResults: unknown[] }>(startChild(CHILD, ['chart', claude.url, png]), 'chart');
    expect(out.text).toBe('A red square.');
    expect(out.toolResults).toEqual([
      { status: 'done', output: 'The chart', content: [{ type: 'image', data: png, mimeType: 'image/png' }] },
    ]);
    const messages = claude.requests[1]?.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages[2]?.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_chart',
      content: [
        { type: 'text', text: 'The chart' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      ],
    });
  } finally {
    await claude.close();
  }
});
