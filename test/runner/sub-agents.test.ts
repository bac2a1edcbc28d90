/**
 * Sub-agents as tools: a root with two sub-agents, each pausing on a tool that needs
 * approval, halts with both requests; two other processes answer them in reverse order;
 * every tool runs exactly once, the root's transcript is balanced, the sub-agents'
 * transcripts are kept and their usage summed into the root's. Then three levels deep.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { answerAs, type RunResult } from 'toolnexus-ts';
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
    expect(halted.status).toBe('pending');
    const [alphaAsks, betaAsks] = halted.pendings ?? [];
    expect(alphaAsks).toMatchObject({ kind: 'approval', data: { subAgent: { path: ['alpha'], runId: 'root-1/call_alpha' } } });
    expect(betaAsks).toMatchObject({ kind: 'approval', data: { subAgent: { path: ['beta'], runId: 'root-1/call_beta' } } });
    expect(alphaAsks?.id).toBe(`sub-${(alphaAsks?.data?.subAgent as { requestId: string }).requestId}`);
    // Before any answer: each sub-agent's tool without approval ran, once.
    expect(ledgerOf(ledger)).toEqual(['fetch alpha alpha_fetch', 'fetch beta beta_fetch']);

    const first = await answerInChild(db, ledger, betaAsks?.id as string, 'bea');
    expect(first.won).toBe(true);
    expect(first.result.status).toBe('pending');
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
    expect(halted.status).toBe('pending');
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
