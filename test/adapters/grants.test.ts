/**
 * "Who may answer" at the adapters (docs/who-may-answer.md, docs/interop.md): the AI SDK's
 * "always approve" and the OpenAI Agents SDK's `alwaysApprove` kept as standing grants, judged
 * by the answer policy, revocable; and the principal a call was made for refused approving it.
 * Each flow runs in a real child process (the AI SDK is ESM-only) with the framework's own
 * loop, its model the scripted OpenAI server on 127.0.0.1, calls in a real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild } from '../fixtures/children';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { scriptedOpenAI } from '../fixtures/interop/openai-script';
import { runsIn } from '../fixtures/interop/tools';

let server: MockServer;
let dir: string;
let countFile: string;

beforeAll(async () => {
  server = await startMockServer(scriptedOpenAI);
});
afterAll(() => server.close());
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tn-grants-'));
  countFile = join(dir, 'runs.log');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const runs = (tool: string): string[] => runsIn(countFile, tool);
function child<T>(fixture: string, command: string): Promise<T> {
  return outputOf<T>(startChild(fixture, [command, server.url, join(dir, 'calls.db')], { COUNT_FILE: countFile }), command);
}

interface Stored {
  runId: string;
  status: string;
  by: string | null;
  comment: string | null;
}
interface GrantFlow {
  carl: string;
  afterCarl: { grants: number; stored: Stored[] };
  grant: { id: string; by: { id: string }; tool: string; scope: string; subject: string };
  listed: Array<{ id: string; revokedAt?: string }>;
  approved: string;
  second: { approvals: string[]; text: string };
  afterSecond: Stored[];
  revoked: boolean;
  third: { approvals: string[]; text: string | null };
  stored: Stored[];
}
interface OwnApproval {
  always: string;
  own: { text: string; errors?: string[] };
  afterOwn: { grants: number; stored: Stored[] };
  manager: string;
  stored: Stored[];
}

const ADAPTERS = [
  { name: 'AI SDK', fixture: 'interop/ai-sdk-child.ts', prefix: 'ai-sdk' },
  { name: 'OpenAI Agents', fixture: 'interop/agents-child.ts', prefix: 'openai-agents' },
] as const;

describe.each(ADAPTERS)('$name', ({ fixture, prefix }) => {
  test('"always approve" is a grant: refused for whom the policy refuses, then approves the next call unasked until revoked', async () => {
    const out = await child<GrantFlow>(fixture, 'grant-flow');
    const conversation = prefix === 'ai-sdk' ? 'conv-g' : 'conv-a';
    const [first, second, third] = prefix === 'ai-sdk' ? ['g1', 'g2', 'g3'] : ['a1', 'a2', 'a3'];
    // Carl may not approve refunds: his "always" is the typed refusal, and nothing is stored.
    expect(out.carl).toBe('TOOLNEXUS_ANSWER_REFUSED');
    expect(out.afterCarl).toEqual({ grants: 0, stored: [expect.objectContaining({ status: 'pending' })] });
    // Ann's is a grant of the tool that asked, over this conversation, listed like any other.
    expect(out.grant).toMatchObject({ by: { id: 'manager:ann' }, tool: 'refund', scope: 'session', subject: `${prefix}:${conversation}` });
    expect(out.listed.map((g) => g.id)).toEqual([out.grant.id]);
    expect(out.approved).toBe('saw: refunded 500 cents on A-1 (approved by manager:ann)');
    // The next refund of the conversation: nobody asked, run once, audited as the grant's.
    expect(out.second.approvals).toEqual([]);
    expect(out.second.text).toBe('saw: refunded 500 cents on A-1 (approved by manager:ann)');
    expect(out.afterSecond).toEqual([
      expect.objectContaining({ runId: `${prefix}:${conversation}:call_refund_${first}`, status: 'resolved', by: 'manager:ann' }),
      {
        runId: `${prefix}:${conversation}:call_refund_${second}`,
        status: 'resolved',
        by: 'manager:ann',
        comment: `standing grant ${out.grant.id}`,
      },
    ]);
    expect(runs('refund')).toHaveLength(2);
    // Revoked: the refund after that asks again, and waits.
    expect(out.revoked).toBe(true);
    expect(out.listed[0]?.revokedAt).toEqual(expect.any(String));
    expect(out.third.approvals).toHaveLength(1);
    expect(out.stored[2]).toEqual(expect.objectContaining({ runId: `${prefix}:${conversation}:call_refund_${third}`, status: 'pending' }));
    expect(runs('refund')).toHaveLength(2);
  }, 60_000);

  test('the principal a call was made for is refused approving it (separation of duties); the manager approves it', async () => {
    const out = await child<OwnApproval>(fixture, 'own-approval');
    expect(out.always).toBe('TOOLNEXUS_ANSWER_REFUSED');
    expect(out.own.text).toContain('separation of duties');
    // Nothing stored by the refusals: no grant, the call still waits (and the only run is the manager's).
    expect(out.afterOwn).toEqual({ grants: 0, stored: [expect.objectContaining({ status: 'pending', by: null })] });
    expect(out.manager).toBe('saw: refunded 500 cents on A-1 (approved by manager:ann)');
    expect(out.stored).toEqual([expect.objectContaining({ status: 'resolved', by: 'manager:ann' })]);
    expect(runs('refund')).toHaveLength(1);
  }, 60_000);
});
