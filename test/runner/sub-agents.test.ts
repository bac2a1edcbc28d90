/**
 * Sub-agents as tools: a root with two sub-agents, each pausing on a tool that needs
 * approval, halts with both requests; two other processes answer them in reverse order;
 * every tool runs exactly once, the root's transcript is balanced, the sub-agents'
 * transcripts are kept and their usage summed into the root's. Then three levels deep.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerAs, type RunEvent, type RunResult } from 'toolnexus-ts/agents';
import { outputOf, startChild } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { buildTeam, ledgerOf, teamModel } from '../fixtures/runner/team-agent';

jest.setTimeout(120_000);

let dir: string;
let server: MockServer;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sub-agents-'));
  server = await startMockServer(teamModel);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function answerInChild(db: string, ledger: string, id: string, principal: string) {
  return outputOf<{ won: boolean; result: RunResult }>(
    startChild(join('runner', 'team-child.ts'), [db, ledger, server.url, JSON.stringify({ id, ok: true }), principal]),
    `answering ${id}`,
  );
}

it('halts the root with both sub-agents’ requests; answered in reverse order from two processes, every tool runs once', async () => {
  const db = join(dir, 'team.db');
  const ledger = join(dir, 'ledger.log');
  const { root, store } = buildTeam(db, ledger, server.url);
  try {
    const halted = await root.run('Do both', { runId: 'root-1' });
    expect(halted.status).toBe('halted');
    const [alphaAsks, betaAsks] = halted.pendings ?? [];
    expect(alphaAsks).toMatchObject({ kind: 'approval', data: { subAgent: { path: ['alpha'], runId: 'root-1/call_alpha' } } });
    expect(betaAsks).toMatchObject({ kind: 'approval', data: { subAgent: { path: ['beta'], runId: 'root-1/call_beta' } } });
    expect(alphaAsks?.id).toBe(`sub-${(alphaAsks?.data?.subAgent as { requestId: string }).requestId}`);
    // Before any answer: each sub-agent's tool without approval ran, once.
    expect(ledgerOf(ledger)).toEqual(['fetch alpha alpha_fetch', 'fetch beta beta_fetch']);

    const first = await answerInChild(db, ledger, betaAsks?.id as string, 'bea');
    expect(first.won).toBe(true);
    expect(first.result.status).toBe('halted');
    expect(first.result.pendings?.map((p) => p.id)).toEqual([alphaAsks?.id]);
    const second = await answerInChild(db, ledger, alphaAsks?.id as string, 'al');
    const final = second.result;
    expect(final.status).toBe('done');
    expect(final.text).toBe(
      'root done: alpha done: {"fetched":"alpha-1"} | {"acted":"alpha-2","by":"al"} | beta done: {"fetched":"beta-1"} | {"acted":"beta-2","by":"bea"}',
    );
    expect(final.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(ledgerOf(ledger)).toEqual(['act alpha alpha_act', 'act beta beta_act', 'fetch alpha alpha_fetch', 'fetch beta beta_fetch']);

    // The sub-agents' transcripts are kept with the calls, and in their own checkpoints.
    for (const call of final.toolCalls) {
      const record = call.result.metadata?.subAgent as { runId: string; messages: Array<{ role: string }>; usage: { inputTokens: number } };
      expect(record.runId).toBe(`root-1/${call.id}`);
      expect(record.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
      expect((await store.loadRun(record.runId))?.state).toMatchObject({ phase: 'done' });
    }
    // Usage: the root's own two model calls plus each sub-agent's two.
    const own = final.turnUsage.reduce((sum, u) => sum + u.inputTokens, 0);
    expect(final.usage.inputTokens).toBe(own + 2 * (20 + 10));
    expect(server.requests).toHaveLength(6);
  } finally {
    await store.close();
  }
});

it('nests three levels: the leaf’s request halts the top run, and the answer resumes the leaf where it stopped', async () => {
  const ledger = join(dir, 'ledger.log');
  const { top, store } = buildTeam(join(dir, 'nest.db'), ledger, server.url);
  try {
    const halted = await top.run('Go deep', { runId: 'top-1' });
    expect(halted.status).toBe('halted');
    expect(halted.pendings).toHaveLength(1);
    expect(halted.pending).toMatchObject({ kind: 'approval', data: { subAgent: { path: ['mid', 'leaf'], runId: 'top-1/call_mid' } } });
    expect(ledgerOf(ledger)).toEqual(['fetch leaf leaf_fetch']);
    const answered = await answerAs(top, { id: halted.pending?.id as string, ok: true }, { by: { id: 'ops' } });
    const final = answered.run?.result as RunResult;
    expect(final.status).toBe('done');
    expect(final.text).toBe('top done: mid done: leaf done: {"fetched":"leaf-1"} | {"acted":"leaf-2","by":"ops"}');
    expect(ledgerOf(ledger)).toEqual(['act leaf leaf_act', 'fetch leaf leaf_fetch']);
    // Answering again changes nothing and runs nothing.
    const again = await answerAs(top, { id: halted.pending?.id as string, ok: true }, { by: { id: 'ops' } });
    expect(again.won).toBe(true);
    expect(ledgerOf(ledger)).toEqual(['act leaf leaf_act', 'fetch leaf leaf_fetch']);
  } finally {
    await store.close();
  }
});

it('streams a sub-agent’s events nested, with the path of sub-agent tools on each', async () => {
  const ledger = join(dir, 'ledger.log');
  const { top, store } = buildTeam(join(dir, 'stream.db'), ledger, server.url);
  try {
    const events: RunEvent[] = [];
    for await (const event of top.stream('Go deep', { runId: 'top-stream' })) events.push(event);
    const shown = events.map((e) => `${(e.path ?? []).join('>') || 'top'} ${e.type}${e.type === 'tool_call' ? ` ${e.call.name}` : ''}`);
    expect(shown).toEqual(
      expect.arrayContaining([
        'top tool_call mid',
        'mid tool_call leaf',
        'mid>leaf tool_call fetch',
        'mid>leaf tool_call act',
        'mid>leaf tool_result',
        'mid>leaf pending',
        'mid pending',
        'top pending',
        'top done',
      ]),
    );
    expect(events.filter((e) => e.type === 'done')).toHaveLength(1);
    const halted = events.at(-1) as Extract<RunEvent, { type: 'done' }>;
    const resumed: RunEvent[] = [];
    for await (const event of top.resumeStream({ id: halted.result.pending?.id as string, ok: true })) resumed.push(event);
    expect(resumed.some((e) => e.type === 'tool_result' && e.name === 'act' && e.path?.join('>') === 'mid>leaf')).toBe(true);
    expect(resumed.some((e) => e.type === 'text' && e.path?.join('>') === 'mid')).toBe(true);
    expect(resumed.at(-1)).toMatchObject({ type: 'done', result: { status: 'done' } });
    expect(ledgerOf(ledger)).toEqual(['act leaf leaf_act', 'fetch leaf leaf_fetch']);
  } finally {
    await store.close();
  }
});

it('a refusal of a surfaced request refuses the sub-agent call and cancels the requests below it', async () => {
  const ledger = join(dir, 'ledger.log');
  const { top, store } = buildTeam(join(dir, 'refuse.db'), ledger, server.url);
  try {
    const halted = await top.run('Go deep', { runId: 'top-refuse' });
    const surfaced = halted.pending;
    const origin = surfaced?.data?.subAgent as { requestId: string };
    const midAsks = await store.get(origin.requestId);
    const leafId = (midAsks?.request.data?.subAgent as { requestId: string }).requestId;
    const answered = await answerAs(top, { id: surfaced?.id as string, ok: false, reason: 'declined' }, { by: { id: 'ops' } });
    const final = answered.run?.result as RunResult;
    expect(final.status).toBe('done');
    expect(final.messages[2]).toMatchObject({ role: 'tool', name: 'mid', isError: true });
    expect((await store.get(origin.requestId))?.status).toBe('cancelled');
    expect((await store.get(leafId))?.status).toBe('cancelled');
    expect(ledgerOf(ledger)).toEqual(['fetch leaf leaf_fetch']);
  } finally {
    await store.close();
  }
});
