/**
 * Issue 10, forged ids: an id no store could hold (NUL, a lone surrogate, over 512
 * characters) is an UnknownSuspensionError on every store, said by the coordinator before
 * any store is asked; PostgreSQL used to answer a NUL with a 500-like StoreError.
 * Runs on memory, SQLite and PostgreSQL (TOOLNEXUS_PG_URL, a schema of its own, dropped after).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Toolkit, defineTool, pending, pendingOf, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator, UnknownSuspensionError, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';

const PG_URL = process.env.TOOLNEXUS_PG_URL;
const schema = `tnx_hostile_ids_${process.pid}_${randomBytes(3).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'tnx-hostile-ids-'));
const opened: (SuspensionStore & RunStore)[] = [];

async function sql(text: string): Promise<void> {
  const client = new Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const store of opened) await (store as { close?: () => Promise<void> }).close?.();
  rmSync(dir, { recursive: true, force: true });
  if (PG_URL) await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

let n = 0;
const stores: Array<[string, () => SuspensionStore & RunStore]> = [
  ['memory', () => new MemoryStore()],
  ['SQLite', () => new SqliteStore({ filename: join(dir, `ids-${++n}.db`) })],
  [
    'PostgreSQL',
    () => {
      if (!PG_URL)
        throw new Error(
          'set TOOLNEXUS_PG_URL to a PostgreSQL server for these tests (the global setup, test/fixtures/pg/global-setup.ts, sets it)',
        );
      return new PostgresStore({ connectionString: PG_URL, schema, tablePrefix: `i${++n}_` });
    },
  ],
];

function tools(askId?: string): Toolkit {
  return new Toolkit().register(
    defineTool({
      name: 'ask',
      description: 'Asks once',
      inputSchema: { type: 'object', properties: {} },
      run: (_args: unknown, ctx?: ToolContext) =>
        ctx?.answer ? 'answered' : pending({ kind: 'approval', prompt: 'ok?', ...(askId === undefined ? {} : { id: askId }) }),
    }),
  );
}

const forged: Array<[string, string]> = [
  ['a NUL', 'pnd-\u0000forged'],
  ['a lone surrogate', 'pnd-\ud800'],
  ['600 characters', `pnd-${'a'.repeat(596)}`],
  ['1 MB', 'x'.repeat(1024 * 1024)],
];

describe.each(stores)('forged ids on the %s store', (_name, open) => {
  let coordinator: ResumeCoordinator;
  let realId: string;

  beforeAll(async () => {
    const store = open();
    opened.push(store);
    coordinator = new ResumeCoordinator({ toolkit: tools(), store });
    realId = pendingOf(await coordinator.execute('ask', {}))!.id;
  });

  it.each(forged)('%s: resolve and cancel say UnknownSuspensionError, get says undefined', async (_label, id) => {
    await expect(coordinator.resolve({ id, ok: true })).rejects.toBeInstanceOf(UnknownSuspensionError);
    await expect(coordinator.cancel(id, 'no')).rejects.toBeInstanceOf(UnknownSuspensionError);
    await expect(coordinator.get(id)).resolves.toBeUndefined();
  });

  it('the error names the id shortened and escaped', async () => {
    await expect(coordinator.resolve({ id: 'pnd-\u0000forged', ok: true })).rejects.toThrow('unknown suspension: pnd-\\u0000forged');
    await expect(coordinator.resolve({ id: 'y'.repeat(1000), ok: true })).rejects.toThrow(
      `unknown suspension: ${'y'.repeat(80)}… (1000 characters)`,
    );
  });

  it('a tool asking under an id no store could hold gets an error result, and nothing is recorded', async () => {
    const asking = new ResumeCoordinator({
      toolkit: tools('pnd-\u0000mine'),
      store: (coordinator as unknown as { store: SuspensionStore & RunStore }).store,
    });
    const before = (await asking.list()).length;
    const result = await asking.execute('ask', {});
    expect(result).toEqual({ output: 'the suspension id pnd-\\u0000mine cannot be stored: it contains NUL', isError: true });
    expect(await asking.list()).toHaveLength(before);
  });

  it('a real id still resolves', async () => {
    await expect(coordinator.resolve({ id: realId, ok: true })).resolves.toEqual({ output: 'answered', isError: false });
  });
});
