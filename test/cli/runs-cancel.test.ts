/**
 * `toolnexus-ts runs cancel RUN_ID` (issue 36, docs/agents.md "Cancel") as a real child process
 * on a real SQLite file: a halted run's open request settles `cancelled` as the CLI's principal,
 * its checkpoint says `cancelled` and a later answer continues nothing; cancelling again says it
 * had already ended (exit 4); an unknown run is exit 3.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, success } from 'toolnexus-ts';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner } from 'toolnexus-ts/agents';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { startChild, type Exit } from '../fixtures/children';

const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const cli = (args: string[]): Promise<Exit> => startChild(CLI, args).exited;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-runs-cancel-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('cancels a halted run from the command line; nothing continues it', async () => {
  const file = join(dir, 'runs.db');
  const store = new SqliteStore({ filename: file });
  let transfers = 0;
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'transfer',
      description: 'Moves money',
      approval: { prompt: 'Transfer?' },
      run: () => {
        transfers++;
        return success('moved');
      },
    }),
  );
  const model = new FunctionModel(({ messages }) =>
    messages.some((m) => m.role === 'tool') ? 'done' : { toolCalls: [{ id: 'c1', name: 'transfer', arguments: {} }] },
  );
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
    expect(transfers).toBe(0);

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
