/**
 * A durable halt and resume across processes with the Responses and Gemini models, reasoning
 * intact: the model's recorded first turn (o3's reasoning item before its call; Gemini 3's
 * call with a 5 KB thought signature, streamed) halts on an approval, the checkpoint goes to
 * SQLite, and a FRESH child process resumes it. The request the child sends, as the server on
 * 127.0.0.1 receives it, carries the provider's reasoning exactly as the provider sent it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AssistantMessage } from 'toolnexus-ts/models';
import type { RunResult } from 'toolnexus-ts/agents';
import { outputOf, startChild } from '../fixtures/children';
import { startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { geminiJson, responsesJson, responsesMessage } from '../fixtures/runner/provider-replies';
import { buildProviderAgent, TOOL_OF, type ProviderKind } from '../fixtures/runner/provider-agent';
import { recordedBody, recordedChunks, recordedJson, recordedStream } from '../fixtures/runner/playback';

let dir: string;
const servers: MockServer[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-durable-providers-'));
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

type ChildOutput = { ok: true; pid: number; result: RunResult } | { ok: false; pid: number; error: { name: string; message: string } };

/** The provider's reasoning as it sent it in the recorded first turn: what the resumed request must carry back. */
function sentReasoning(kind: ProviderKind): unknown[] {
  if (kind === 'responses')
    return recordedJson<{ output: unknown[] }>('openai-responses/issue-7082-o3-optional-tool-parameters.json').output;
  const first = JSON.parse(recordedChunks('gemini/google-tool-call-gemini3.chunks.txt')[0] as string) as {
    candidates: Array<{ content: { parts: unknown[] } }>;
  };
  return first.candidates[0]?.content.parts ?? [];
}

const FIRST_TURN: Record<ProviderKind, Reply> = {
  responses: recordedBody('openai-responses/issue-7082-o3-optional-tool-parameters.json'),
  gemini: recordedStream('gemini/google-tool-call-gemini3.chunks.txt', false),
};
const ANSWER: Record<ProviderKind, Reply> = {
  responses: responsesJson([responsesMessage('Searched, with approval.')]),
  gemini: geminiJson([{ text: 'Searched, with approval.' }]),
};

async function haltedRun(kind: ProviderKind, db: string, url: string): Promise<RunResult> {
  const { runner, store } = buildProviderAgent(kind, db, url);
  try {
    if (kind === 'responses') return await runner.run('Find papers on machine learning.', { runId: `run-${kind}` });
    // Gemini's first turn is streamed: the signature arrives in a stream chunk.
    let result: RunResult | undefined;
    for await (const event of runner.stream('Weather in San Francisco?', { runId: `run-${kind}` }))
      if (event.type === 'done') result = event.result;
    if (!result) throw new Error('the stream ended without a result');
    return result;
  } finally {
    await store.close();
  }
}

describe.each(['responses', 'gemini'] as const)('%s: durable halt and resume across processes', (kind) => {
  it('the resumed request from a fresh process carries the reasoning the provider sent, verbatim and in place', async () => {
    const server = await startMockServer([FIRST_TURN[kind], ANSWER[kind]]);
    servers.push(server);
    const db = join(dir, 'runs.db');

    const halted = await haltedRun(kind, db, server.url);
    expect(halted.status).toBe('halted');
    const call = halted.toolCalls[0];
    expect(call?.name).toBe(TOOL_OF[kind]);

    // What the checkpoint holds: the assistant turn with the provider's items, as JSON in SQLite.
    const { store } = buildProviderAgent(kind, db, server.url);
    const checkpoint = await store.loadRun(`run-${kind}`);
    await store.close();
    const saved = (checkpoint?.state.messages as AssistantMessage[] | undefined)?.find((m) => m.role === 'assistant');
    expect(saved?.items?.map((i) => i.data)).toEqual(sentReasoning(kind));

    const child = startChild('runner/provider-resume-child.ts', [
      kind,
      db,
      server.url,
      JSON.stringify({ id: halted.pending?.id, ok: true, data: { by: 'dana' } }),
    ]);
    const output = await outputOf<ChildOutput>(child, 'provider-resume-child');
    if (!output.ok) throw new Error(`resume failed: ${output.error.name}: ${output.error.message}`);
    expect(output.pid).not.toBe(process.pid);
    expect(output.result).toMatchObject({ status: 'done', text: 'Searched, with approval.', turns: 2 });

    expect(server.requests).toHaveLength(2);
    const resumed = server.requests[1]?.body;
    const result = `approved by dana in process ${output.pid}: ${call?.arguments ?? ''}`;
    if (kind === 'responses') {
      expect(resumed?.input).toEqual([
        { type: 'message', role: 'user', content: 'Find papers on machine learning.' },
        ...sentReasoning(kind), // the reasoning item, then the function_call it led to
        { type: 'function_call_output', call_id: 'call_2mhz5FtwkZnzXQkTOMtYZpZH', output: result },
      ]);
    } else {
      expect(resumed?.contents).toEqual([
        { role: 'user', parts: [{ text: 'Weather in San Francisco?' }] },
        { role: 'model', parts: sentReasoning(kind) }, // the call with its thought signature, byte for byte
        { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { output: result } } }] },
      ]);
    }
  }, 30_000);
});
