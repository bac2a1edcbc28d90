/**
 * The A2A task records (issue 49, docs/a2a.md "Listing and push"), one contract for every
 * store: memory, a real SQLite file, the real PostgreSQL the global setup provides. A record
 * round-trips as JSON; a save is a compare-and-set on its version that exactly one of two
 * concurrent savers wins; a principal's tasks are listed oldest first, paged, and nobody else's;
 * the outbox's due tasks are listed by when they are due.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import type { A2ATaskRecord, A2ATaskStore } from 'toolnexus-ts/a2a';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

jest.setTimeout(60_000);

type Opened = { store: A2ATaskStore; close: () => Promise<void> };
const schema = uniqueSchema('a2a_tasks');
let dir: string;
let url: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-a2a-records-'));
  url = await postgresUrl();
});
afterAll(async () => {
  await dropSchema(url, schema);
  rmSync(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => Opened]> = [
  ['memory', () => ({ store: new MemoryStore(), close: () => Promise.resolve() })],
  [
    'sqlite',
    () => {
      const store = new SqliteStore({ filename: join(dir, `${Math.random().toString(36).slice(2)}.db`) });
      return { store, close: () => store.close() };
    },
  ],
  [
    'postgres',
    () => {
      const store = new PostgresStore({ connectionString: url, schema, tablePrefix: `t${Math.random().toString(36).slice(2, 8)}_` });
      return { store, close: () => store.close() };
    },
  ],
];

const record = (taskId: string, owner: string, createdAt: string, extra: Partial<A2ATaskRecord> = {}): A2ATaskRecord => ({
  taskId,
  owner,
  contextId: `ctx-${taskId}`,
  createdAt,
  version: 1,
  state: { configs: [] },
  ...extra,
});

describe.each(stores)('%s', (_name, open) => {
  let opened: Opened;
  beforeEach(() => {
    opened = open();
  });
  afterEach(() => opened.close());

  it('round-trips a record, saves by compare-and-set, and one of two concurrent savers wins', async () => {
    const { store } = opened;
    expect(await store.loadA2ATask('t-1')).toBeUndefined();
    expect(await store.saveA2ATask(record('t-1', 'ada', '2026-01-01T00:00:00.000Z'))).toBe(true);
    expect(await store.saveA2ATask(record('t-1', 'eve', '2026-01-02T00:00:00.000Z'))).toBe(false);
    const loaded = await store.loadA2ATask('t-1');
    expect(loaded).toEqual(record('t-1', 'ada', '2026-01-01T00:00:00.000Z'));
    const next = {
      ...(loaded as A2ATaskRecord),
      version: 2,
      state: { configs: [{ id: 'c', url: 'https://x.example/hook' }] },
      dueAt: 1000,
    };
    const both = await Promise.all([store.saveA2ATask(next), store.saveA2ATask({ ...next, state: { other: true } })]);
    expect(both.filter(Boolean)).toHaveLength(1);
    expect((await store.loadA2ATask('t-1'))?.version).toBe(2);
    // A stale version changes nothing; owner and creation stay the first save's.
    expect(await store.saveA2ATask({ ...next, version: 2 })).toBe(false);
    const third = { ...(await store.loadA2ATask('t-1'))!, version: 3, owner: 'eve' };
    delete third.dueAt;
    expect(await store.saveA2ATask(third)).toBe(true);
    expect(await store.loadA2ATask('t-1')).toMatchObject({ owner: 'ada', version: 3 });
    expect((await store.loadA2ATask('t-1'))?.dueAt).toBeUndefined();
  });

  it('lists a principal’s own tasks oldest first, paged; the due ones by when they are due', async () => {
    const { store } = opened;
    for (const [id, owner, at, due] of [
      ['a-2', 'ada', '2026-01-02T00:00:00.000Z', 300],
      ['a-1', 'ada', '2026-01-01T00:00:00.000Z', undefined],
      ['e-1', 'eve', '2026-01-01T12:00:00.000Z', 100],
      ['a-3', 'ada', '2026-01-02T00:00:00.000Z', 200],
    ] as const)
      expect(await store.saveA2ATask(record(id, owner, at, due === undefined ? {} : { dueAt: due }))).toBe(true);
    const first = await store.listA2ATasks({ owner: 'ada', limit: 2 });
    expect(first.map((r) => r.taskId)).toEqual(['a-1', 'a-2']);
    const last = first[first.length - 1] as A2ATaskRecord;
    const second = await store.listA2ATasks({ owner: 'ada', limit: 2, after: { createdAt: last.createdAt, taskId: last.taskId } });
    expect(second.map((r) => r.taskId)).toEqual(['a-3']);
    expect((await store.listA2ATasks({ owner: 'nobody', limit: 10 })).length).toBe(0);
    expect((await store.listA2ADue(250, 10)).map((r) => r.taskId)).toEqual(['e-1', 'a-3']);
    await expect(store.listA2ATasks({ owner: 'ada', limit: 0 })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    await expect(store.saveA2ATask(record('', 'ada', '2026-01-01T00:00:00.000Z'))).rejects.toMatchObject({
      code: 'TOOLNEXUS_INVALID_ARGUMENT',
    });
  });

  it('lists the watched tasks whose run checkpoint moved past their watch, and no other', async () => {
    const { store } = opened;
    const runs = store as unknown as {
      saveRun(checkpoint: { runId: string; version: number; state: object; updatedAt: string }): Promise<boolean>;
    };
    const at = '2026-01-01T00:00:00.000Z';
    const run = async (runId: string, versions: number) => {
      for (let version = 1; version <= versions; version++)
        expect(await runs.saveRun({ runId, version, state: { phase: 'halted' }, updatedAt: at })).toBe(true);
    };
    await run('w-moved', 3);
    await run('w-told', 2);
    await run('w-none', 5);
    expect(await store.saveA2ATask(record('w-moved', 'ada', at, { watch: 1 }))).toBe(true);
    expect(await store.saveA2ATask(record('w-told', 'ada', at, { watch: 2 }))).toBe(true);
    expect(await store.saveA2ATask(record('w-none', 'ada', at))).toBe(true);
    // Watched before its run has any checkpoint: nothing moved yet.
    expect(await store.saveA2ATask(record('w-norun', 'ada', at, { watch: 0 }))).toBe(true);
    expect((await store.loadA2ATask('w-moved'))?.watch).toBe(1);
    expect((await store.loadA2ATask('w-none'))?.watch).toBeUndefined();
    expect((await store.listA2AMoved(10)).map((r) => r.taskId)).toEqual(['w-moved']);
    await run('w-norun', 1);
    expect((await store.listA2AMoved(10)).map((r) => r.taskId)).toEqual(['w-moved', 'w-norun']);
    expect((await store.listA2AMoved(1)).map((r) => r.taskId)).toEqual(['w-moved']);
    // A sweep goes on after the last task it read, so one that cannot be read holds none back.
    expect((await store.listA2AMoved(1, 'w-moved')).map((r) => r.taskId)).toEqual(['w-norun']);
    expect(await store.listA2AMoved(10, 'w-norun')).toEqual([]);
    // Brought up to its run's version, or no longer watched: off the list.
    const moved = (await store.loadA2ATask('w-moved')) as A2ATaskRecord;
    expect(await store.saveA2ATask({ ...moved, version: moved.version + 1, watch: 3 })).toBe(true);
    const norun = (await store.loadA2ATask('w-norun')) as A2ATaskRecord;
    const unwatched = { ...norun, version: norun.version + 1 };
    delete unwatched.watch;
    expect(await store.saveA2ATask(unwatched)).toBe(true);
    expect(await store.listA2AMoved(10)).toEqual([]);
    await expect(store.listA2AMoved(0)).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    await expect(store.saveA2ATask({ ...record('w-bad', 'ada', at), watch: -1 })).rejects.toMatchObject({
      code: 'TOOLNEXUS_INVALID_ARGUMENT',
    });
  });
});
