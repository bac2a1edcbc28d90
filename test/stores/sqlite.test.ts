import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PendingStoreError, SQLITE_SCHEMA_VERSION, SqlitePendingStore } from 'toolnexus-ts';
import { runStoreConformance } from './conformance';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sqlite-conformance-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
runStoreConformance('SqlitePendingStore', async () => new SqlitePendingStore({ filename: join(dir, `store-${++n}.db`) }));

describe('SqlitePendingStore specifics', () => {
  const file = (name: string) => join(dir, name);

  it('creates its schema on first open: WAL, a schema_version table, indexed status/run_id/kind', async () => {
    const store = new SqlitePendingStore({ filename: file('schema.db') });
    await store.close();
    const db = new Database(file('schema.db'), { readonly: true });
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SQLITE_SCHEMA_VERSION }]);
      const plan = (sql: string) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
      expect(plan("SELECT * FROM suspensions WHERE status = 'pending' ORDER BY created_at, seq")).toMatch(/USING INDEX suspensions_status/);
      expect(plan("SELECT * FROM suspensions WHERE run_id = 'r' ORDER BY created_at, seq")).toMatch(/USING INDEX suspensions_run/);
      expect(plan("SELECT * FROM suspensions WHERE kind = 'input' ORDER BY created_at, seq")).toMatch(/USING INDEX suspensions_kind/);
      expect(plan("UPDATE suspensions SET status = 'resolving' WHERE id = 'x' AND status = 'pending'")).toMatch(/USING INDEX sqlite_autoindex_suspensions_1 \(id=\?\)/);
    } finally {
      db.close();
    }
  });

  it('keeps what it stored across a reopen, and two handles on one file see each other', async () => {
    const a = new SqlitePendingStore(file('shared.db'));
    const b = new SqlitePendingStore(file('shared.db'));
    await a.insert({ request: { id: 'pnd-1', kind: 'approval', prompt: 'ok?' }, tool: 't', args: { x: 1 }, status: 'pending', createdAt: '2030-01-01T00:00:00.000Z' });
    expect((await b.get('pnd-1'))?.args).toEqual({ x: 1 });
    const claim = await b.claim('pnd-1', { id: 'pnd-1', ok: true }, 60_000, new Date());
    expect(await a.claim('pnd-1', { id: 'pnd-1', ok: true }, 60_000, new Date())).toBeUndefined();
    await b.complete(claim!, 'resolved', { output: 'done', isError: false }, new Date());
    await a.close();
    await b.close();
    const reopened = new SqlitePendingStore(file('shared.db'));
    expect(await reopened.get('pnd-1')).toMatchObject({ status: 'resolved', outcome: { output: 'done', isError: false } });
    await reopened.close();
  });

  it('refuses a file whose schema is newer than this library reads, and leaves it untouched', async () => {
    const db = new Database(file('future.db'));
    db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (99);');
    db.close();
    expect(() => new SqlitePendingStore(file('future.db'))).toThrow(
      new PendingStoreError(`SQLite file ${file('future.db')} has pending-store schema version 99; this library reads up to ${SQLITE_SCHEMA_VERSION}`),
    );
    const check = new Database(file('future.db'), { readonly: true });
    expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()).toEqual([{ name: 'schema_version' }]);
    check.close();
  });

  it('refuses a file that is not a SQLite database with a clear PendingStoreError, and leaves it untouched', () => {
    writeFileSync(file('notes.txt'), 'these are my notes, not a database\n'.repeat(20));
    expect(() => new SqlitePendingStore(file('notes.txt'))).toThrow(PendingStoreError);
    expect(() => new SqlitePendingStore(file('notes.txt'))).toThrow(/cannot use SQLite file .*notes\.txt as a pending store: file is not a database/);
    expect(readFileSync(file('notes.txt'), 'utf8')).toBe('these are my notes, not a database\n'.repeat(20));
  });

  it('refuses an empty filename and a directory that does not exist', () => {
    expect(() => new SqlitePendingStore('')).toThrow(new PendingStoreError('SqlitePendingStore needs a filename'));
    expect(() => new SqlitePendingStore(join(dir, 'no', 'such', 'dir', 'x.db'))).toThrow(/cannot open SQLite file/);
  });

  it('reports stored JSON that was corrupted outside the library as a PendingStoreError', async () => {
    const store = new SqlitePendingStore(file('corrupt.db'));
    await store.insert({ request: { id: 'pnd-c', kind: 'approval', prompt: 'ok?' }, tool: 't', args: {}, status: 'pending', createdAt: '2030-01-01T00:00:00.000Z' });
    const db = new Database(file('corrupt.db'));
    db.prepare("UPDATE suspensions SET args = '{broken' WHERE id = 'pnd-c'").run();
    db.close();
    await expect(store.get('pnd-c')).rejects.toThrow(/the stored JSON of the arguments of pnd-c is corrupt/);
    await store.close();
  });
});
