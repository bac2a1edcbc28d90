/**
 * A durable halt and resume across processes with Anthropic extended thinking on: the
 * signed thinking block the provider sent (a recorded response, PROVENANCE.md) is kept in
 * the SQLite checkpoint, and the resumed request a fresh process sends carries it back
 * byte for byte, as the API requires after a tool call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AssistantMessage } from 'toolnexus-ts/models';
import type { RunResult } from 'toolnexus-ts/agents';
import { outputOf, startChild } from '../fixtures/children';
import { anthropicText, startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { recordedBody, recordedText } from '../fixtures/runner/recorded';
import { buildThinkingAgent } from '../fixtures/runner/thinking-agent';

let dir: string;
let server: MockServer;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-thinking-'));
  server = await startMockServer([recordedBody('issue-13430-thinking-tool-call.json'), anthropicText('The sandbox has no errors.')]);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('durable halt and resume with Anthropic thinking', () => {
  it('a fresh process resumes and sends the signed thinking block back exactly as the provider sent it', async () => {
    const db = join(dir, 'runs.db');
    const { runner, store } = buildThinkingAgent(db, server.url);
    const halted = await runner.run('Check the sandbox now', { runId: 'run-thinking' });
    const checkpoint = await store.loadRun('run-thinking');
    await store.close();

    expect(halted.status).toBe('halted');
    const recorded = JSON.parse(recordedText('issue-13430-thinking-tool-call.json')) as {
      content: Array<Record<string, unknown>>;
      usage: Record<string, number>;
    };
    // The checkpoint holds the turn's blocks as provider items, untouched.
    const stored = (checkpoint?.state.messages as AssistantMessage[])[1];
    expect(stored?.items?.map((item) => item.data)).toEqual(recorded.content);
    expect(halted.usage).toMatchObject({ inputTokens: 599, outputTokens: 59, reasoningTokens: 18 });

    const child = startChild('runner/thinking-child.ts', [db, server.url, JSON.stringify({ id: halted.pending?.id, ok: true })]);
    const { pid, result } = await outputOf<{ pid: number; result: RunResult }>(child, 'thinking resume');

    expect(pid).not.toBe(process.pid);
    expect(result).toMatchObject({ status: 'done', text: 'The sandbox has no errors.', turns: 2 });
    expect(server.requests).toHaveLength(2);
    const resumed = server.requests[1];
    // Byte for byte: the request text holds the recorded blocks serialized in the provider's own key order.
    expect(resumed?.raw).toContain(`{"role":"assistant","content":${JSON.stringify(recorded.content)}}`);
    const signature = (recorded.content[0] as { signature: string }).signature;
    expect(resumed?.raw.split(signature)).toHaveLength(2);
    expect((resumed?.body.messages as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: recorded.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_017R7ACrx7NF7sLDDtvdQ1u9', content: 'no errors' }] },
    ]);
    expect(resumed?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    // The resumed run's totals include the turn before the halt.
    expect(result.turnUsage).toHaveLength(2);
    expect(result.turnUsage[0]).toEqual(halted.turnUsage[0]);
    expect(result.usage).toEqual({
      inputTokens: 599 + 12,
      outputTokens: 59 + 4,
      cachedInputTokens: 0,
      cacheWriteInputTokens: 0,
      reasoningTokens: 18,
    });
  });
});
