/**
 * docs/mcp.md, "A remote input_required": a 2026-07-28 server (the SDK's own v2 server, in a
 * child process) answers `tools/call` with `input_required`. In process (`waitFor`) the source
 * asks and retries at once; without `waitFor` the local call suspends, and under an AgentRunner
 * on a SQLite file the run halts durably: the client process ends, another answers as the
 * user (answerAs), and the retry with the echoed requestState reaches the server once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf, Toolkit, type PendingRequest, type ToolResult } from 'toolnexus-ts';
import { McpToolSource } from 'toolnexus-ts/mcp';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { outputOf, startChild, until, type Started } from '../fixtures/children';
import { openaiCalls, openaiText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

interface Counts {
  calls: number;
  retries: number;
  refunds: number;
  refused: number;
  states: string[];
}

let dir: string;
let server: Started;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-mrtr-'));
  server = startChild('mcp-mrtr/server.ts', []);
  await until(() => server.stdout().includes('\n'), 30_000, 'the MCP server to listen');
  url = `http://127.0.0.1:${(JSON.parse(server.stdout().split('\n')[0] as string) as { port: number }).port}`;
});
afterAll(async () => {
  server.kill('SIGTERM');
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
});

const counts = async (): Promise<Counts> => (await (await fetch(`${url}/counts`)).json()) as Counts;

async function connected(
  options: Partial<ConstructorParameters<typeof McpToolSource>[0]> = {},
): Promise<{ source: McpToolSource; toolkit: Toolkit }> {
  const source = new McpToolSource({ config: { mcpServers: { shop: { type: 'http', url: `${url}/mcp` } } }, ...options });
  const report = await source.connect();
  expect(report.failed).toEqual([]);
  const toolkit = new Toolkit();
  source.register(toolkit);
  return { source, toolkit };
}

describe('a 2026-07-28 server asking for input (MRTR)', () => {
  it('with waitFor, asks in process and retries at once with the response and the state echoed', async () => {
    const before = await counts();
    const asked: PendingRequest[] = [];
    const { source, toolkit } = await connected({
      waitFor: (request) => {
        asked.push(request);
        return { id: request.id, ok: true, data: { reason: 'late parcel' } };
      },
    });
    try {
      const result = await toolkit.execute('shop_refund', { customer: 'bo', cents: 300 });
      expect(result).toMatchObject({ isError: false, output: 'refunded 300 cents to bo (late parcel)' });
      expect(asked).toEqual([expect.objectContaining({ kind: 'input', prompt: 'Refund 300 cents to bo?' })]);
      const after = await counts();
      expect([after.calls - before.calls, after.retries - before.retries, after.refunds - before.refunds, after.refused]).toEqual([
        1, 1, 1, 0,
      ]);
    } finally {
      await source.close();
    }
  });

  it('without waitFor, the call suspends: a request with the form as data.schema, the state kept for the retry', async () => {
    const { source, toolkit } = await connected();
    try {
      const result: ToolResult = await toolkit.execute('shop_refund', { customer: 'cy', cents: 50 });
      const request = pendingOf(result);
      expect(request).toMatchObject({
        kind: 'input',
        prompt: 'Refund 50 cents to cy?',
        data: {
          server: 'shop',
          schema: { type: 'object', properties: { reason: { type: 'string', default: 'goodwill' } } },
          mcpInput: {
            server: 'shop',
            key: 'confirm',
            asked: {},
            responses: {},
            requestState: expect.stringMatching(/^state-.*:cy$/) as unknown,
          },
        },
      });
    } finally {
      await source.close();
    }
  });

  it('asked again on the retry, the call gets a follow-up link; a declined one ends the call, no retry sent (a server may not count on one)', async () => {
    const { source, toolkit } = await connected();
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    try {
      const first = pendingOf(await coordinator.execute('shop_transfer', { cents: 70 }));
      expect(first).toMatchObject({ kind: 'input', prompt: 'Move 70 cents?' });
      const second = pendingOf(await coordinator.resolve({ id: first!.id, ok: true }));
      expect(second).toMatchObject({
        kind: 'input',
        prompt: 'The code from your phone?',
        data: { followUp: true, mcpInput: { key: 'code', requestState: 'transfer-2' } },
      });
      const done = await coordinator.resolve({ id: second!.id, ok: true, data: { code: '4711' } });
      expect(done).toMatchObject({ isError: false, output: 'moved 70 cents with code 4711' });

      const refund = pendingOf(await coordinator.execute('shop_refund', { customer: 'di', cents: 10 }));
      const before = await counts();
      const declined = await coordinator.resolve({ id: refund!.id, ok: false, reason: 'declined' });
      expect(declined.output).toContain('declined');
      const after = await counts();
      expect([after.retries - before.retries, after.refunds - before.refunds]).toEqual([0, 0]);
    } finally {
      await source.close();
    }
  });

  it('halts an AgentRunner run durably; answered in another process, the retry is sent once and the run finishes', async () => {
    const model: MockServer = await startMockServer([
      openaiCalls([{ id: 'call-1', name: 'shop_refund', args: { customer: 'ada', cents: 1200 } }]),
      openaiText('Refunded ada.'),
    ]);
    try {
      const db = join(dir, 'runs.db');
      const child = (args: string[]) => outputOf<Record<string, unknown>>(startChild('mcp-mrtr/runner-child.ts', args), args[0] as string);
      const before = await counts();
      const halted = await child(['run', db, `${url}/mcp`, model.url]);
      expect(halted).toMatchObject({ status: 'halted', pending: { kind: 'input', prompt: 'Refund 1200 cents to ada?' } });
      const request = halted.pending as PendingRequest;
      let now = await counts();
      expect([now.calls - before.calls, now.retries - before.retries]).toEqual([1, 0]);

      // The first process is gone; a second answers as the user and continues the run from the store.
      const answer = JSON.stringify({ id: request.id, ok: true, data: {} });
      const done = await child(['answer', db, `${url}/mcp`, model.url, answer]);
      expect(done.pid).not.toBe(halted.pid);
      expect(done).toMatchObject({
        won: true,
        status: 'done',
        text: 'Refunded ada.',
        outcome: { isError: false, output: 'refunded 1200 cents to ada (goodwill)' },
      });
      now = await counts();
      expect([now.retries - before.retries, now.refunds - before.refunds, now.refused]).toEqual([1, 1, 0]);
      expect(now.states.at(-1)).toBe((request.data as { mcpInput: { requestState: string } }).mcpInput.requestState);

      // The same answer from a third process: the stored outcome; the server hears nothing more.
      const again = await child(['answer', db, `${url}/mcp`, model.url, answer]);
      expect(again.outcome).toEqual(done.outcome);
      now = await counts();
      expect([now.retries - before.retries, now.refunds - before.refunds]).toEqual([1, 1]);
    } finally {
      await model.close();
    }
  });
});
