/**
 * AiSdkModel (toolnexus-ts/ai-sdk) over three real AI SDK provider packages, each pointed at
 * a server on 127.0.0.1 with `baseURL`: @ai-sdk/openai (chat completions, scripted),
 * @ai-sdk/anthropic and @ai-sdk/amazon-bedrock (responses the vercel/ai repository recorded,
 * played back verbatim: test/fixtures/runner/recorded/PROVENANCE.md and
 * test/fixtures/interop/recorded/README.md). Bedrock requests are SigV4-signed with fake
 * credentials; the mock refuses one without the Authorization header, never checks its
 * signature. The providers are ESM-only, so each call runs in a child process
 * (test/fixtures/interop/ai-model-child.ts); the halt and resume are two of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelResponse, ModelStreamEvent } from 'toolnexus-ts/models';
import type { RunResult } from 'toolnexus-ts/agents';
import { outputOf, startChild } from '../fixtures/children';
import { anthropicText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { makePng } from '../fixtures/png';
import { recordedBody, recordedEvents, recordedStream } from '../fixtures/runner/recorded';
import { scriptedOpenAI } from '../fixtures/interop/openai-script';
import { bedrockBody, bedrockReasoningToolUse, bedrockStream, recorded, requireSigned, signed } from '../fixtures/interop/bedrock-mock';

const CHILD = 'interop/ai-model-child.ts';
const servers: MockServer[] = [];
let dir: string;

async function serve(replies: Reply | Reply[]): Promise<MockServer> {
  const server = await startMockServer(replies);
  servers.push(server);
  return server;
}
function child<T>(args: string[]): Promise<T> {
  return outputOf<T>(startChild(CHILD, args), args.slice(0, 2).join(' '));
}
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tn-ai-model-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

type Item = { provider: string; type: string; data: { parts: Array<Record<string, unknown>> } };

describe('@ai-sdk/openai (chat completions)', () => {
  it.each(['complete', 'stream'])('AgentRunner runs two tools to the answer (%s)', async (mode) => {
    const server = await serve(scriptedOpenAI);
    const { result, kinds } = await child<{ result: RunResult; kinds?: string[] }>(['run', 'openai', server.url, mode, 'two-tools#r1']);
    expect(result).toMatchObject({ status: 'done', text: 'saw: 5 | Oslo: 21 C', turns: 2 });
    expect(result.toolCalls.map((c) => [c.name, c.result.output])).toEqual([
      ['add', '5'],
      ['weather', 'Oslo: 21 C'],
    ]);
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12 });
    if (mode === 'stream') expect(kinds?.filter((k) => k === 'text').length).toBeGreaterThan(1);
    const sent = server.requests[1]?.body.messages as Array<Record<string, unknown>>;
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['5', 'Oslo: 21 C']);
    expect(server.requests[0]?.body.stream ?? false).toBe(mode === 'stream');
  });
});

describe('@ai-sdk/anthropic (recorded responses)', () => {
  it('shows the model a tool result’s PNG: the provider package sends it as a tool_result image block', async () => {
    const png = makePng(2, 2).toString('base64');
    const server = await serve(anthropicText('A rising line.'));
    const { response } = await child<{ response: ModelResponse }>(['media', 'anthropic', server.url, png]);
    expect(response.text).toBe('A rising line.');
    const messages = server.requests[0]?.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages[2]?.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_chart',
        content: [
          { type: 'text', text: 'The chart' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
        ],
      },
    ]);
  });

  it('streams a recorded thinking turn: reasoning and text as they come, the signed block kept as an item', async () => {
    const server = await serve(recordedStream('anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt'));
    const { events } = await child<{ events: ModelStreamEvent[] }>(['model', 'anthropic', server.url, 'stream']);
    const signature = recordedEvents('anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt')
      .map((e) => (e.delta as { signature?: string } | undefined)?.signature)
      .find((s) => s);
    expect(events.some((e) => e.type === 'reasoning')).toBe(true);
    const last = events[events.length - 1];
    if (last?.type !== 'response') throw new Error('no response event');
    expect(last.response.text).toContain('gcd(1071, 462');
    expect(
      events
        .filter((e) => e.type === 'text')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
    ).toBe(last.response.text);
    const item = last.response.items?.[0] as Item;
    expect(item.provider).toBe('ai-sdk:anthropic.messages');
    expect(item.data.parts[0]).toMatchObject({ type: 'reasoning', providerOptions: { anthropic: { signature } } });
    expect(server.requests[0]?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('reads a recorded thinking-and-tool-use body: the call, usage and the signed block', async () => {
    const server = await serve(recordedBody('issue-13430-thinking-tool-call.json'));
    const { response } = await child<{ response: ModelResponse }>(['model', 'anthropic', server.url, 'complete']);
    expect(response.toolCalls).toEqual([{ id: 'toolu_017R7ACrx7NF7sLDDtvdQ1u9', name: 'checkSandboxErrors', arguments: '{}' }]);
    expect(response.usage).toMatchObject({ inputTokens: 599, outputTokens: 59 });
    expect(response.stopReason).toBe('tool_use');
    const part = (response.items?.[0] as Item).data.parts[0];
    expect(part).toMatchObject({ type: 'reasoning', text: 'The user wants me to call checkSandboxErrors immediately.' });
  });
});

describe('@ai-sdk/amazon-bedrock (recorded responses, SigV4-signed requests)', () => {
  it('streams the recorded reasoning turn from event-stream frames', async () => {
    const server = await serve(requireSigned(bedrockStream('amazon-bedrock-reasoning.chunks.txt')));
    const { events } = await child<{ events: ModelStreamEvent[] }>(['model', 'bedrock', server.url, 'stream']);
    expect(server.requests.every(signed)).toBe(true);
    expect(server.requests[0]?.path).toMatch(/\/converse-stream$/);
    const reasoning = events.filter((e) => e.type === 'reasoning').map((e) => (e as { delta: string }).delta);
    expect(reasoning.join('')).toContain('r appears at positions 3, 8, and 9.');
    const last = events[events.length - 1];
    if (last?.type !== 'response') throw new Error('no response event');
    expect(last.response).toMatchObject({
      text: 'There are **3** r\'s in "strawberry":\n\n1. st**r**awbe**r****r**y',
      stopReason: 'end_turn',
    });
    const signature = /"signature":"([^"]+)"/.exec(recorded('amazon-bedrock-reasoning.chunks.txt'))?.[1];
    expect((last.response.items?.[0] as Item).data.parts[0]).toMatchObject({
      type: 'reasoning',
      providerOptions: { bedrock: { signature } },
    });
  });

  it('streams a recorded tool call whose arguments came in pieces', async () => {
    const server = await serve(requireSigned(bedrockStream('amazon-bedrock-tool-call.1.chunks.txt')));
    const { events } = await child<{ events: ModelStreamEvent[] }>(['model', 'bedrock', server.url, 'stream']);
    const last = events[events.length - 1];
    if (last?.type !== 'response') throw new Error('no response event');
    expect(last.response.toolCalls).toEqual([{ id: 'tool-use-id', name: 'test-tool', arguments: '{"value":"Sparkle Day"}' }]);
    expect(last.response.usage).toMatchObject({ inputTokens: 125, outputTokens: 45 });
  });

  it('reads the recorded reasoning body (not streamed)', async () => {
    const server = await serve(requireSigned(bedrockBody('amazon-bedrock-reasoning.json')));
    const { response } = await child<{ response: ModelResponse }>(['model', 'bedrock', server.url, 'complete']);
    expect(server.requests[0]?.path).toMatch(/\/converse$/);
    expect(response.usage).toMatchObject({ inputTokens: 51, outputTokens: 78 });
    expect((response.items?.[0] as Item).data.parts[0]).toMatchObject({
      type: 'reasoning',
      text: expect.stringContaining('strawberry') as unknown,
    });
  });

  it('an unsigned request is refused by the mock, so the signed ones above were signed', async () => {
    const server = await serve(requireSigned(bedrockBody('amazon-bedrock-text.json')));
    const response = await fetch(`${server.url}/model/m/converse`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(403);
  });

  it('halts on an approval in one process and resumes in another, the signed reasoning sent back as recorded', async () => {
    const server = await serve(requireSigned([bedrockReasoningToolUse(), bedrockBody('amazon-bedrock-text.json')]));
    const db = join(dir, 'runs.db');
    const halted = await child<{ pid: number; result: RunResult }>(['halt', 'bedrock', server.url, db]);
    expect(halted.result.status).toBe('halted');
    expect(halted.result.pending).toMatchObject({ kind: 'approval', prompt: 'Refund 1200 cents on A-7?' });
    const answer = JSON.stringify({ id: halted.result.pending?.id, ok: true });
    const resumed = await child<{ pid: number; result: RunResult }>(['resume', 'bedrock', server.url, db, answer]);
    expect(resumed.pid).not.toBe(halted.pid);
    expect(resumed.result).toMatchObject({ status: 'done', turns: 2 });
    expect(resumed.result.text).toContain('There are **3** "r"s');
    expect(resumed.result.toolCalls[0]?.result.output).toBe('refunded 1200 cents on A-7 (approved by someone)');
    expect(server.requests.every(signed)).toBe(true);
    // The resumed request carries the recorded reasoning block back as Bedrock sent it.
    const recordedBlock = (JSON.parse(recorded('amazon-bedrock-reasoning.json')) as { output: { message: { content: unknown[] } } }).output
      .message.content[0];
    const messages = server.requests[1]?.body.messages as Array<{ role: string; content: unknown[] }>;
    expect(messages[1]?.content[0]).toEqual(recordedBlock);
    expect(messages[1]?.content[1]).toEqual({
      toolUse: { toolUseId: 'tooluse_refund_1', name: 'refund', input: { order: 'A-7', cents: 1200 } },
    });
    expect(JSON.stringify(messages[2])).toContain('refunded 1200 cents on A-7');
  });
});
