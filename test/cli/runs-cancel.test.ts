/**
 * `toolnexus-ts runs cancel RUN_ID` (issue 36, docs/agents.md "Cancel") as a real child process
 * on a real SQLite file: a halted run's open request settles `cancelled` as the CLI's principal,
 * its checkpoint says `cancelled` and a later answer continues nothing; cancelling again says it
 * had already ended (exit 4); an unknown run is exit 3. A cancel the `--tools` module's answer
 * policy refuses is exit 6 and changes nothing: the run stays halted, its request pending, and
 * the approver's later approval finishes it (issue 45).
 */
import 'reflect-metadata';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, answerAs } from 'toolnexus-ts/agents';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { startChild, type Exit } from '../fixtures/children';
import { createCoordinator, toolkit as payTools } from '../fixtures/cli-tools';
import { transferAgent } from '../fixtures/runner/transfer-agent';

const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const TOOLS = join(__dirname, '..', 'fixtures', 'cli-tools.ts');
const cli = (args: string[], env: Record<string, string> = {}): Promise<Exit> => startChild(CLI, args, env).exited;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-runs-cancel-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('cancels a halted run from the command line; nothing continues it', async () => {
  const file = join(dir, 'runs.db');
  const store = new SqliteStore({ filename: file });
  const { toolkit, model, transfers: ran } = transferAgent();
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
  try {
    const halted = await runner.run('Move it');
    expect(halted.status).toBe('halted');
    const args = ['runs', 'cancel', halted.runId, '--store', `sqlite:${file}`, '--as', 'ops', '--reason', 'customer withdrew'];
    const first = await cli(args);
    expect(first).toMatchObject({ code: 0 });
    expect(first.stdout.trim()).toBe(`run ${halted.runId} is cancelled`);
    expect(await store.get(halted.pending!.id)).toMatchObject({ status: 'cancelled', answeredBy: { id: 'cli:ops' } });
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'cancelled', stop: { reason: 'customer withdrew' } });
    await expect(runner.resume({ id: halted.pending!.id, ok: true })).rejects.toThrow();
    expect(ran()).toBe(0);

    const again = await cli(args);
    expect(again).toMatchObject({ code: 4 });
    expect(again.stdout.trim()).toBe(`run ${halted.runId} had already ended: cancelled`);
    const unknown = await cli(['runs', 'cancel', 'no-such-run', '--store', `sqlite:${file}`, '--as', 'ops']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('no-such-run');
  } finally {
    await store.close();
  }
});

it('a cancel the answer policy refuses is exit 6 and changes nothing; the approver’s later approval finishes the run', async () => {
  const file = join(dir, 'policy.db');
  const ledger = join(dir, 'ledger.log');
  const env = { CLI_APPROVERS: 'cli:manager', CLI_LEDGER: ledger };
  const store = new SqliteStore({ filename: file });
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    const model = new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool')
        ? 'paid'
        : { toolCalls: [{ id: 'c1', name: 'pay', arguments: { cents: 50, apiKey: 'k-1' } }] },
    );
    const runner = new AgentRunner({ model, toolkit: payTools, coordinator: createCoordinator(store) });
    const halted = await runner.run('Pay it');
    expect(halted.status).toBe('halted');
    const id = halted.pending!.id;
    const refused = await cli(['runs', 'cancel', halted.runId, '--store', `sqlite:${file}`, '--tools', TOOLS, '--as', 'intruder'], env);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('not allowed:');
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'halted' });
    expect((await store.get(id))?.status).toBe('pending');

    const { run } = await answerAs(runner, { id, ok: true }, { by: { id: 'cli:manager' } });
    expect(run?.result?.status).toBe('done');
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toHaveLength(1);
  } finally {
    process.env = saved;
    await store.close();
  }
});
