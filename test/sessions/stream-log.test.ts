/**
 * The stream log's contract (docs/chat.md, "Reconnecting"), the same on the three stores: a
 * run's parts kept at their cursors, segments opened and closed, a part never moved or
 * written twice, a gap past the cap seen as one, bad arguments refused before anything, and
 * closed logs pruned with the run's retention (`finishedBefore`) while an open one stays.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'toolnexus-ts';
import type { SessionStore, StreamLogStore } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import type { PrunableStore } from 'toolnexus-ts/agents';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { sqliteDrivers } from '../fixtures/sqlite-drivers';

type Store = StreamLogStore & SessionStore & PrunableStore & { close(): Promise<void> };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-stream-log-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STORES: Array<[string, () => Promise<{ store: Store; drop: () => Promise<void> }>]> = [
  ['memory', async () => ({ store: new MemoryStore(), drop: async () => undefined })],
  ['SQLite', async () => ({ store: new SqliteStore(join(dir, `log-${Math.random()}.db`)), drop: async () => undefined })],
  [
    'PostgreSQL',
    async () => {
      const url = await postgresUrl();
      const schema = uniqueSchema('streams');
      return { store: new PostgresStore({ connectionString: url, schema }), drop: () => dropSchema(url, schema) };
    },
  ],
];

const json = (n: number) => JSON.stringify({ type: 'text-delta', id: 't', delta: `w${n} ` });

describe.each(STORES)('the stream log on %s', (_name, make) => {
  let store: Store;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ store, drop } = await make());
  });
  afterAll(async () => {
    await store.close();
    await drop();
  });

  it('keeps parts at their cursors across segments; a reader sees the log open until its segment is closed', async () => {
    expect(await store.readStream('run-a', 0, 10)).toBeUndefined();
    expect(await store.openStream('run-a', 'alice:c-1')).toBe(0);
    expect(await store.readStream('run-a', 0, 10)).toEqual({ sessionId: 'alice:c-1', parts: [], next: 0, open: true });
    await store.appendStream('run-a', 0, [json(0), json(1)], 2, false);
    await store.appendStream('run-a', 2, [json(2)], 3, true);
    expect(await store.readStream('run-a', 1, 10)).toEqual({ sessionId: 'alice:c-1', parts: [json(1), json(2)], next: 3, open: false });
    expect((await store.readStream('run-a', 0, 2))?.parts).toEqual([json(0), json(1)]);
    expect((await store.readStream('run-a', 3, 10))?.parts).toEqual([]);
    // A second segment (a continued run) starts where the first ended.
    expect(await store.openStream('run-a', 'alice:c-1')).toBe(3);
    expect((await store.readStream('run-a', 3, 10))?.open).toBe(true);
    // A batch written again at its cursor (a retried write) is kept once.
    await store.appendStream('run-a', 3, [json(3), json(4)], 5, false);
    await store.appendStream('run-a', 3, [json(3), json(4)], 5, true);
    expect((await store.readStream('run-a', 0, 10))?.parts).toEqual([json(0), json(1), json(2), json(3), json(4)]);
    // Read from inside a write's batch, and bounded by the limit.
    expect((await store.readStream('run-a', 4, 10))?.parts).toEqual([json(4)]);
    expect((await store.readStream('run-a', 1, 3))?.parts).toEqual([json(1), json(2), json(3)]);
  });

  it('gives each part back exactly as written, from any cursor, however alike the parts of one write are', async () => {
    // A write's parts are kept packed on the SQL stores (a part that starts as the last whole
    // one did up to its last member's name, as `+` and the rest): parts alike, equal, shorter,
    // quoting `":` or starting their words with `+`, and characters outside the BMP.
    const parts = [
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'a 😀' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'a 😁' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'a 😁' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'a' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'é,\\n 12,3' }),
      '{}',
      JSON.stringify({ type: 'data-progress', data: { note: '~, and 7,' } }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: '+1' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'say ":" and +' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: 'say ":" and +' }),
      JSON.stringify({ type: 'text-delta', id: 't-1', delta: '' }),
      ...Array.from({ length: 300 }, (_, n) => json(n)),
    ];
    expect(await store.openStream('run-alike', 'alice:c-4')).toBe(0);
    await store.appendStream('run-alike', 0, parts.slice(0, 200), 200, false);
    await store.appendStream('run-alike', 200, parts.slice(200), parts.length, true);
    for (const from of [0, 1, 2, 5, 6, 7, 8, 9, 150, 199, 200, 201, parts.length - 1, parts.length]) {
      const slice = await store.readStream('run-alike', from, 1000);
      expect(slice?.parts).toEqual(parts.slice(from));
    }
    expect((await store.readStream('run-alike', 3, 4))?.parts).toEqual(parts.slice(3, 7));
  });

  it('past the cap, the log counts on without keeping: a cursor below next with no part there is a gap', async () => {
    await store.openStream('run-full', 'alice:c-2');
    await store.appendStream('run-full', 0, [json(0)], 5, true);
    expect(await store.readStream('run-full', 1, 10)).toEqual({ sessionId: 'alice:c-2', parts: [], next: 5, open: false });
  });

  it('refuses bad arguments before anything changes', async () => {
    await expect(store.openStream('has space', 's')).rejects.toThrow(InvalidArgumentError);
    await expect(store.openStream('run-b', '')).rejects.toThrow(InvalidArgumentError);
    await expect(store.appendStream('run-a', -1, [], 0, false)).rejects.toThrow(InvalidArgumentError);
    await expect(store.appendStream('run-a', 9, [json(9)], 9, false)).rejects.toThrow(InvalidArgumentError);
    await expect(store.appendStream('run-a', 9, [{ not: 'text' } as unknown as string], 10, false)).rejects.toThrow(InvalidArgumentError);
    await expect(store.appendStream('run-a', 9, ['{"two":\n"lines"}'], 10, false)).rejects.toThrow(InvalidArgumentError);
    await expect(store.readStream('run-a', 0, 0)).rejects.toThrow(InvalidArgumentError);
    expect((await store.readStream('run-a', 0, 10))?.parts).toHaveLength(5);
  });

  it('refuses a part that starts with "+", which a stored line uses to continue the last whole part', async () => {
    await expect(store.appendStream('run-a', 5, ['+x'], 6, false)).rejects.toThrow(/must not start with "\+"/);
    await expect(store.appendStream('run-a', 5, [json(5), '+{"a":1}'], 7, false)).rejects.toThrow(InvalidArgumentError);
    expect((await store.readStream('run-a', 0, 10))?.parts).toHaveLength(5);
  });

  it("is pruned with the run's retention: closed logs before the cut-off go with their parts, an open one stays", async () => {
    await store.openStream('run-open', 'alice:c-3');
    await store.appendStream('run-open', 0, [json(0)], 1, false);
    const report = await store.prune({ finishedBefore: new Date(Date.now() + 60_000) });
    expect(report.streams).toBe(3);
    expect(await store.readStream('run-a', 0, 10)).toBeUndefined();
    expect(await store.readStream('run-alike', 0, 10)).toBeUndefined();
    expect(await store.readStream('run-full', 0, 10)).toBeUndefined();
    expect((await store.readStream('run-open', 0, 10))?.parts).toEqual([json(0)]);
    // A log made again under a pruned run's id starts empty: no part of the old one is left.
    expect(await store.openStream('run-a', 'alice:c-1')).toBe(0);
    expect((await store.readStream('run-a', 0, 10))?.parts).toEqual([]);
  });
});

describe('the stream log kept packed on SQLite', () => {
  it("keeps a chat's text deltas as little more than their words, after parts as short as a step's start", async () => {
    // What a chat response writes: its start, a step's start (whose prefix, `{"type":`, every
    // part after it starts with), the text's start, then deltas alike up to their words.
    const id = 'msg-run-e821078f-e28c-41fa-84e4-bb9a53c33a46-text-1';
    const parts = [
      JSON.stringify({ type: 'start', messageId: 'msg-run-e821078f-e28c-41fa-84e4-bb9a53c33a46' }),
      JSON.stringify({ type: 'start-step' }),
      JSON.stringify({ type: 'text-start', id }),
      ...Array.from({ length: 300 }, (_, n) => JSON.stringify({ type: 'text-delta', id, delta: `word${n} ` })),
      JSON.stringify({ type: 'text-end', id }),
    ];
    const filename = join(dir, `packed-${Math.random()}.db`);
    const store = new SqliteStore(filename);
    try {
      await store.openStream('run-packed', 'alice:c-5');
      await store.appendStream('run-packed', 0, parts, parts.length, true);
      for (const from of [0, 1, 2, 3, 4, 200, parts.length - 1])
        expect((await store.readStream('run-packed', from, 1000))?.parts).toEqual(parts.slice(from));
    } finally {
      await store.close();
    }
    const raw = sqliteDrivers()[0]?.open(filename, { readonly: true });
    try {
      const row = raw?.prepare("SELECT length(parts) AS bytes FROM stream_parts WHERE run_id = 'run-packed'").get() as { bytes: number };
      const whole = parts.join('\n').length;
      // Each delta as `+` and its words (`"word12 "}`): about an eighth of the parts' bytes; kept whole, all of them.
      expect(row.bytes).toBeLessThan(whole / 5);
    } finally {
      raw?.close();
    }
  });
});
