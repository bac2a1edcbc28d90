/**
 * docs/mcp.md, "Tasks, as a client": an McpToolSource that takes tasks (SEP-2663) against our
 * own serveMcp (`tasks: 'always'` for `refund`) on a SQLite file in a child process. The
 * remote call becomes a task waiting for input; under an AgentRunner (a mock model on
 * 127.0.0.1, its own SQLite file) the local run halts durably; a new client process answers
 * as the user (answerAs), the answer goes by `tasks/update` once, the task is followed to
 * `completed` and the run finishes; the refund ran once (the server's ledger).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, type PendingRequest } from 'toolnexus-ts';
import { McpToolSource } from 'toolnexus-ts/mcp';
import { outputOf, startChild, until, type Started } from '../fixtures/children';
import { TOKENS } from '../fixtures/mcp-mrtr-server';
import { rpc } from '../fixtures/mcp-rpc';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

const TASKS = { elicitation: { form: {}, url: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };

describe('McpToolSource following a remote task (SEP-2663)', () => {
  jest.setTimeout(240_000);
  let dir: string;
  let server: Started;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-source-tasks-'));
    server = startChild('mcp-mrtr-server.ts', ['serve', `sqlite:${join(dir, 'calls.db')}`, join(dir, 'ledger.txt'), '0', 'none'], {
      MRTR_KEY: 'source-tasks-key-0123456789abcdef0123456789',
      MCP_TASKS: 'always',
    });
    await until(() => server.stdout().includes('\n') || server.hasExited(), 60_000, 'the server to print its URL');
    url = server.stdout().split('\n')[0]?.trim() ?? '';
    if (!url.startsWith('http')) throw new Error(`the server did not start: ${server.stderr()}`);
  });
  afterAll(async () => {
    server.kill('SIGTERM');
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  const refunds = (): string[] =>
    existsSync(join(dir, 'ledger.txt'))
      ? readFileSync(join(dir, 'ledger.txt'), 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('ada '))
      : [];

  async function connected(options: { tasks?: boolean; waitFor?: ConstructorParameters<typeof McpToolSource>[0]['waitFor'] }) {
    const source = new McpToolSource({
      config: { mcpServers: { shop: { type: 'http', url, headers: { Authorization: `Bearer ${TOKENS.alice}` } } } },
      ...options,
    });
    const report = await source.connect();
    expect(report.failed).toEqual([]);
    const toolkit = new Toolkit();
    source.register(toolkit);
    return { source, toolkit };
  }

  it('without opting in, the extension is not declared and the task-only tool is refused (-32021), nothing runs', async () => {
    const before = refunds().length;
    const { source, toolkit } = await connected({});
    try {
      const result = await toolkit.execute('shop_refund', { customer: 'ada', cents: 5 });
      expect(result.isError).toBe(true);
      expect(result.output).toContain('io.modelcontextprotocol/tasks');
      expect(refunds().length).toBe(before);
    } finally {
      await source.close();
    }
  });

  it('with waitFor, what the task asks is answered in process, sent by tasks/update, and the task followed to its result', async () => {
    const before = refunds().length;
    const asked: PendingRequest[] = [];
    const { source, toolkit } = await connected({
      tasks: true,
      waitFor: (request) => {
        asked.push(request);
        return { id: request.id, ok: true };
      },
    });
    try {
      const result = await toolkit.execute('shop_refund', { customer: 'ada', cents: 7 });
      expect(result).toMatchObject({ isError: false, output: 'refunded 7 cents to ada' });
      expect(asked).toEqual([expect.objectContaining({ kind: 'input', prompt: 'Refund 7 cents to ada?' })]);
      expect(refunds().length).toBe(before + 1);
    } finally {
      await source.close();
    }
  });

  it('halts an AgentRunner run durably on the task; a restarted client process answers, tasks/update goes once, the run finishes', async () => {
    const model: MockServer = await startMockServer([
      openaiCalls([{ id: 'call-1', name: 'shop_refund', args: { customer: 'ada', cents: 1200 } }]),
      openaiText('Refunded ada.'),
    ]);
    try {
      const db = join(dir, 'runs.db');
      const env = { MCP_TASKS: '1', MCP_TOKEN: TOKENS.alice };
      const child = (args: string[]) =>
        outputOf<Record<string, unknown>>(startChild('mcp-mrtr/runner-child.ts', args, env), args[0] as string);
      const before = refunds().length;
      const halted = await child(['run', db, url, model.url]);
      expect(halted).toMatchObject({ status: 'halted', pending: { kind: 'input', prompt: 'Refund 1200 cents to ada?' } });
      const request = halted.pending as PendingRequest;
      const taskId = (request.data as { mcpInput: { taskId: string } }).mcpInput.taskId;
      expect(taskId).toMatch(/^pnd-/);
      // The remote task waits for the answer; nothing ran.
      const waiting = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
      expect(waiting.result).toMatchObject({ taskId, status: 'input_required' });
      expect(refunds().length).toBe(before);

      // The first client process is gone; a second answers as the user and continues the run from its store.
      const answer = JSON.stringify({ id: request.id, ok: true });
      const done = await child(['answer', db, url, model.url, answer]);
      expect(done.pid).not.toBe(halted.pid);
      expect(done).toMatchObject({
        won: true,
        status: 'done',
        text: 'Refunded ada.',
        outcome: { isError: false, output: 'refunded 1200 cents to ada' },
      });
      expect(refunds().length).toBe(before + 1);
      const completed = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
      expect(completed.result).toMatchObject({ taskId, status: 'completed' });

      // The same answer from a third process: the stored outcome; the server runs nothing more.
      const again = await child(['answer', db, url, model.url, answer]);
      expect(again.outcome).toEqual(done.outcome);
      expect(refunds().length).toBe(before + 1);
    } finally {
      await model.close();
    }
  });
});
