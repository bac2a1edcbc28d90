/**
 * docs/a2a.md, "Push instead of polling": `a2aAgentTool({ push })` sends its task without
 * waiting, with a push config naming the process's `a2aPushReceiver`, and is woken by the agent's
 * notification instead of polling (the tool polls only every 10 minutes and gives up after 2: a
 * result here came by push). The agent is this package's own A2A server (a real process, sending
 * to 127.0.0.1 as its option allows); the tool runs in real processes (the SDK requires `jose`, an
 * ES module): one asks and suspends on the agent's `input-required`, told by push; another (the
 * manager) answers, and its send waits for the agent to complete.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PendingRequest, ToolResult } from 'toolnexus-ts';
import { chatModel, readLedger } from '../fixtures/chat/agent';
import { startAgent, stopAgents } from '../fixtures/a2a/harness';
import { outputOf, startChild } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

jest.setTimeout(240_000);

interface Printed {
  result: ToolResult;
  request?: PendingRequest;
  notified: number;
}

let dir: string;
let model: MockServer;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-a2a-tool-push-'));
  model = await startMockServer(chatModel);
});
afterAll(async () => {
  await stopAgents();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
});

const child = (args: string[], as: string) =>
  outputOf<Printed>(startChild('a2a/agent-tool-push-child.ts', args, { A2A_AS: as }), args[0] as string);

it('is told of input-required by push, not by polling; answered from another process, the task completes', async () => {
  const { base } = await startAgent(dir, model.url, 'node', join(dir, 'agent.db'), { A2A_PUSH_PRIVATE: '1' });
  const db = join(dir, 'tool.db');
  const asked = await child(['ask', db, base, 'refund o-7 700'], 'customer:bo');
  expect(asked.request).toMatchObject({ kind: 'input', prompt: 'Refund 700 cents on order o-7?' });
  // The send did not wait: the call was woken by the agent's notification.
  expect(asked.notified).toBeGreaterThanOrEqual(1);
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(0);

  const answered = await child(
    ['answer', db, base, JSON.stringify({ id: asked.request!.id, ok: true, data: { ok: true } })],
    'manager:ann',
  );
  // The answer's send waits for the agent (its config would be set on another's task): completed without a poll.
  expect(answered.result).toMatchObject({ isError: false, metadata: { state: 'completed', polls: 0 } });
  expect(JSON.stringify(answered.result.output)).toContain('Done: {\\"refunded\\":\\"o-7\\",\\"cents\\":700}');
  expect(readLedger(join(dir, 'ledger'))).toHaveLength(1);
});
