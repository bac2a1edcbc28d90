/**
 * `toolnexus-ts prune` (docs/deploying.md, "Retention") as a real child process on a real
 * SQLite file and on the PostgreSQL server of jest's global setup: ages, the archive file,
 * counts (served work's tables too), and usage errors.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SuspendedCall } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startChild, type Exit } from '../fixtures/children';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const DAY = 86_400_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-prune-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[]): Promise<Exit> => startChild(CLI, args).exited;

function settled(id: string, daysAgo: number): SuspendedCall {
  return {
    request: { id, kind: 'approval', prompt: `Approve ${id}?` },
    tool: 'refund',
    args: { cents: 500 },
    status: 'resolved',
    createdAt: new Date(Date.now() - (daysAgo + 1) * DAY).toISOString(),
    updatedAt: new Date(Date.now() - daysAgo * DAY).toISOString(),
  };
}

function describePrune(
  label: string,
  target: () => Promise<{ store: SqliteStore | PostgresStore; args: string[]; done?: () => Promise<void> }>,
): void {
  it(`prunes by age on ${label}, archiving every row first`, async () => {
    const { store, args, done } = await target();
    try {
      for (const [id, days] of [
        ['old-1', 100],
        ['old-2', 95],
        ['recent', 10],
      ] as const)
        await store.insert(settled(id, days));
      await store.saveRun({
        runId: 'finished',
        version: 1,
        state: { phase: 'done' },
        updatedAt: new Date(Date.now() - 40 * DAY).toISOString(),
      });
      await store.saveRun({
        runId: 'halted',
        version: 1,
        state: { phase: 'halted' },
        updatedAt: new Date(Date.now() - 40 * DAY).toISOString(),
      });
      // Served work with the run's retention: the finished run's A2A task and a card done long ago go; a halted run's task and a recent card stay.
      for (const taskId of ['finished', 'halted'])
        await store.saveA2ATask({
          taskId,
          owner: 'ana',
          contextId: 'ctx',
          createdAt: new Date(Date.now() - 41 * DAY).toISOString(),
          version: 1,
          state: { configs: [], outbox: [] },
        });
      for (const [callId, days] of [
        ['old-1', 95],
        ['recent', 5],
      ] as const)
        await store.deliveries.insertDelivery({
          id: `${callId} slack:C1`,
          callId,
          platform: 'slack',
          target: 'slack:C1',
          version: 1,
          done: true,
          attempts: 0,
          dueAt: Date.now() - days * DAY,
        });
      const archive = join(dir, `${label}.jsonl`);
      const exit = await cli([
        'prune',
        ...args,
        '--settled-older-than',
        '90d',
        '--finished-older-than',
        '30d',
        '--batch-size',
        '1',
        '--archive',
        archive,
      ]);
      expect(exit).toMatchObject({
        code: 0,
        stdout: 'pruned 2 suspensions, 1 runs, 0 sessions, 0 stream logs, 0 keyed calls, 1 A2A tasks, 1 deliveries in 5 batches\n',
      });
      const lines = readFileSync(archive, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { table: string; row: Record<string, unknown> });
      expect(lines.map((line) => [line.table, line.row.id ?? line.row.run_id ?? line.row.task_id])).toEqual([
        ['suspensions', 'old-1'],
        ['suspensions', 'old-2'],
        ['a2aTasks', 'finished'],
        ['runs', 'finished'],
        ['deliveries', 'old-1 slack:C1'],
      ]);
      expect(await store.get('old-1')).toBeUndefined();
      expect((await store.get('recent'))?.status).toBe('resolved');
      expect(await store.loadRun('finished')).toBeUndefined();
      expect((await store.loadRun('halted'))?.runId).toBe('halted');
      expect(await store.loadA2ATask('finished')).toBeUndefined();
      expect((await store.loadA2ATask('halted'))?.taskId).toBe('halted');
      expect((await store.deliveries.getDelivery('recent slack:C1'))?.done).toBe(true);
      expect(JSON.parse((await cli(['prune', ...args, '--settled-older-than', '2020-01-01T00:00:00Z', '--json'])).stdout)).toEqual({
        suspensions: 0,
        runs: 0,
        sessions: 0,
        streams: 0,
        keyedCalls: 0,
        a2aTasks: 0,
        deliveries: 0,
        batches: 0,
      });
    } finally {
      await store.close();
      await done?.();
    }
  }, 60_000);
}

describePrune('SQLite', async () => {
  const file = join(dir, 'prune.db');
  return { store: new SqliteStore({ filename: file }), args: ['--store', `sqlite:${file}`] };
});

describePrune('PostgreSQL', async () => {
  const url = await postgresUrl();
  const schema = uniqueSchema('prune');
  const store = new PostgresStore({ connectionString: url, schema });
  await store.ensureSchema();
  return { store, args: ['--store', url, '--schema', schema], done: () => dropSchema(url, schema) };
});

it('says what a prune needs, and refuses a bad age or batch size with a usage error', async () => {
  const file = join(dir, 'usage.db');
  await new SqliteStore({ filename: file }).close();
  const store = ['--store', `sqlite:${file}`];
  expect(await cli(['prune', ...store])).toMatchObject({
    code: 2,
    stderr: 'prune needs at least one of --settled-older-than, --finished-older-than and --idle-older-than (e.g. 90d)\n',
  });
  expect(await cli(['prune', ...store, '--idle-older-than', 'ninety days'])).toMatchObject({
    code: 2,
    stderr: '--idle-older-than takes an age (90d, 12h, 30m, 45s) or an RFC 3339 instant, got "ninety days"\n',
  });
  const zero = await cli(['prune', ...store, '--idle-older-than', '1d', '--batch-size', '0']);
  expect(zero.code).toBe(2);
  expect(zero.stderr).toContain('batchSize must be a whole number from 1 to 10000');
}, 60_000);
