import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreError } from 'toolnexus-ts/suspension';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from 'toolnexus-ts/sqlite';
import { runStoreConformance, sampleCall } from 'toolnexus-ts/testing';
import { betterSqlite3, runtimeHasNodeSqlite, sqliteDrivers } from '../fixtures/sqlite-drivers';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sqlite-conformance-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The schema of SQLITE_SCHEMA_VERSION 1, as released: files in the field look like this. */
const V1_DDL = `
  CREATE TABLE schema_version (version INTEGER NOT NULL);
  CREATE TABLE suspensions (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
    request TEXT NOT NULL, call_id TEXT, run_id TEXT, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT,
    answer TEXT, outcome TEXT, lease_until INTEGER, lease_token TEXT
  );
  CREATE INDEX suspensions_status ON suspensions (status, created_at);
  CREATE INDEX suspensions_run ON suspensions (run_id, created_at) WHERE run_id IS NOT NULL;
  CREATE INDEX suspensions_kind ON suspensions (kind, created_at);
  CREATE TABLE runs (run_id TEXT PRIMARY KEY, version INTEGER NOT NULL, state TEXT NOT NULL, updated_at TEXT NOT NULL);
  INSERT INTO schema_version (version) VALUES (1);
`;

/** Step 2 as released: a version 1 file plus this is what version 2 files in the field look like. */
const V2_STEP = `
  ALTER TABLE suspensions ADD COLUMN fence INTEGER;
  ALTER TABLE suspensions ADD COLUMN chain TEXT;
  ALTER TABLE suspensions ADD COLUMN next_id TEXT;
  ALTER TABLE suspensions ADD COLUMN binding TEXT;
  UPDATE suspensions SET fence = 1 WHERE status = 'resolving';
  ALTER TABLE suspensions DROP COLUMN lease_token;
  INSERT INTO schema_version (version) VALUES (2);
`;

/** Step 3 as released: a version 2 file plus this is what version 3 files in the field look like. */
const V3_STEP = `
  ALTER TABLE suspensions ADD COLUMN answered_by TEXT;
  ALTER TABLE suspensions ADD COLUMN answered_at TEXT;
  ALTER TABLE suspensions ADD COLUMN comment TEXT;
  CREATE INDEX suspensions_settled ON suspensions (updated_at, seq) WHERE status IN ('resolved', 'declined', 'expired', 'cancelled');
  INSERT INTO schema_version (version) VALUES (3);
`;

describe.each(sqliteDrivers().map((driver) => [driver.name, driver] as const))('on %s', (name, { driver, open }) => {
  const tag = name === 'node:sqlite' ? 'node' : 'bs3';
  let n = 0;
  runStoreConformance(`SqliteStore on ${name}`, async () => {
    const store = new SqliteStore({ filename: join(dir, `${tag}-store-${++n}.db`), driver });
    // The kit must run on the driver it is named for, not on whichever one the store fell back to.
    if (store.driver !== name) throw new Error(`the store opened its file through ${String(store.driver)}, not ${name}`);
    return store;
  });

  describe('SqliteStore specifics', () => {
    const file = (name: string) => join(dir, `${tag}-${name}`);

    it("refuses its deliveries' methods once closed, saying it is closed", async () => {
      const store = new SqliteStore({ filename: file('closed-deliveries.db'), driver });
      await store.close();
      await expect(store.deliveries.getDelivery('dlv-1')).rejects.toThrow(/the SQLite store .* is closed/);
      await expect(store.deliveries.listDeliveries({})).rejects.toThrow(/the SQLite store .* is closed/);
    });

    it('creates its schema on first open: WAL, a schema_version table, indexed status/run_id/kind', async () => {
      const store = new SqliteStore({ filename: file('schema.db'), driver });
      expect(store.driver).toBe(name);
      await store.close();
      const db = open(file('schema.db'), { readonly: true });
      try {
        expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
        // One row per step run: a new file runs them all.
        expect(db.prepare('SELECT MAX(version) AS version FROM schema_version').all()).toEqual([{ version: SQLITE_SCHEMA_VERSION }]);
        const plan = (sql: string) =>
          (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
        expect(plan("SELECT * FROM suspensions WHERE status = 'pending' ORDER BY created_at, seq")).toMatch(
          /USING INDEX suspensions_status/,
        );
        expect(plan("SELECT * FROM suspensions WHERE run_id = 'r' ORDER BY created_at, seq")).toMatch(/USING INDEX suspensions_run/);
        expect(plan("SELECT * FROM suspensions WHERE kind = 'input' ORDER BY created_at, seq")).toMatch(/USING INDEX suspensions_kind/);
        expect(plan("UPDATE suspensions SET status = 'resolving' WHERE id = 'x' AND status = 'pending'")).toMatch(
          /USING INDEX sqlite_autoindex_suspensions_1 \(id=\?\)/,
        );
      } finally {
        db.close();
      }
    });

    it('keeps what it stored across a reopen, and two handles on one file see each other', async () => {
      const a = new SqliteStore({ filename: file('shared.db'), driver });
      const b = new SqliteStore({ filename: file('shared.db'), driver });
      await a.insert({
        request: { id: 'pnd-1', kind: 'approval', prompt: 'ok?' },
        tool: 't',
        args: { x: 1 },
        status: 'pending',
        createdAt: '2030-01-01T00:00:00.000Z',
      });
      expect((await b.get('pnd-1'))?.args).toEqual({ x: 1 });
      const claim = await b.claim('pnd-1', { id: 'pnd-1', ok: true }, 60_000);
      expect(await a.claim('pnd-1', { id: 'pnd-1', ok: true }, 60_000)).toBeUndefined();
      expect(await a.renew(claim!, 60_000)).toBe(true);
      expect(await a.complete(claim!, { status: 'resolved', outcome: { output: 'done', isError: false } })).toBe(true);
      await a.close();
      await b.close();
      const reopened = new SqliteStore({ filename: file('shared.db'), driver });
      expect(await reopened.get('pnd-1')).toMatchObject({ status: 'resolved', outcome: { output: 'done', isError: false } });
      await reopened.close();
    });

    it('upgrades a version 1 file in place: its rows kept, a call caught mid-claim counted as claimed once', async () => {
      const db = open(file('v1.db'));
      db.exec(V1_DDL);
      const insert =
        db.prepare(`INSERT INTO suspensions (id, kind, tool, args, request, call_id, run_id, status, created_at, updated_at, answer, outcome, lease_until, lease_token)
        VALUES (@id, 'approval', 'transfer', '{"amount":5}', @request, NULL, 'run-1', @status, '2030-01-01T00:00:00.000Z', @updated_at, @answer, @outcome, @lease_until, @lease_token)`);
      const request = (id: string) => JSON.stringify({ id, kind: 'approval', prompt: `Approve ${id}?` });
      insert.run({
        id: 'pnd-waiting',
        request: request('pnd-waiting'),
        status: 'pending',
        updated_at: null,
        answer: null,
        outcome: null,
        lease_until: null,
        lease_token: null,
      });
      insert.run({
        id: 'pnd-held',
        request: request('pnd-held'),
        status: 'resolving',
        updated_at: '2030-01-01T00:00:01.000Z',
        answer: '{"id":"pnd-held","ok":true}',
        outcome: null,
        lease_until: Date.parse('2020-01-01T00:00:00.000Z'),
        lease_token: 'b5d6c0de',
      });
      insert.run({
        id: 'pnd-done',
        request: request('pnd-done'),
        status: 'resolved',
        updated_at: '2030-01-01T00:00:02.000Z',
        answer: '{"id":"pnd-done","ok":true}',
        outcome: '{"output":"ok","isError":false}',
        lease_until: null,
        lease_token: null,
      });
      db.prepare("INSERT INTO runs VALUES ('run-1', 3, '{\"turns\":3}', '2030-01-01T00:00:03.000Z')").run();
      db.close();

      const store = new SqliteStore({ filename: file('v1.db'), driver });
      const base = { tool: 'transfer', args: { amount: 5 }, runId: 'run-1', createdAt: '2030-01-01T00:00:00.000Z' };
      expect(await store.list()).toEqual([
        { ...base, request: JSON.parse(request('pnd-waiting')) as unknown, status: 'pending' },
        {
          ...base,
          request: JSON.parse(request('pnd-held')) as unknown,
          status: 'resolving',
          updatedAt: '2030-01-01T00:00:01.000Z',
          answer: { id: 'pnd-held', ok: true },
          leaseUntil: '2020-01-01T00:00:00.000Z',
          fence: 1,
        },
        {
          ...base,
          request: JSON.parse(request('pnd-done')) as unknown,
          status: 'resolved',
          updatedAt: '2030-01-01T00:00:02.000Z',
          answer: { id: 'pnd-done', ok: true },
          outcome: { output: 'ok', isError: false },
        },
      ]);
      expect(await store.loadRun('run-1')).toEqual({
        runId: 'run-1',
        version: 3,
        state: { turns: 3 },
        updatedAt: '2030-01-01T00:00:03.000Z',
      });
      // The v1 holder's lease lapsed: the call is taken over with the next fence.
      expect((await store.claim('pnd-held', { id: 'pnd-held', ok: true }, 60_000))?.fence).toBe(2);
      expect((await store.claim('pnd-waiting', { id: 'pnd-waiting', ok: true }, 60_000))?.fence).toBe(1);
      await store.close();

      const check = open(file('v1.db'), { readonly: true });
      try {
        expect(check.prepare('SELECT version FROM schema_version ORDER BY version').all()).toEqual([
          { version: 1 },
          { version: 2 },
          { version: 3 },
          { version: 4 },
        ]);
        const columns = (check.prepare('PRAGMA table_info(suspensions)').all() as Array<{ name: string }>).map((c) => c.name);
        expect(columns).toEqual(expect.arrayContaining(['fence', 'chain', 'next_id', 'binding']));
        expect(columns).not.toContain('lease_token');
      } finally {
        check.close();
      }
      const reopened = new SqliteStore({ filename: file('v1.db'), driver });
      expect((await reopened.get('pnd-done'))?.outcome).toEqual({ output: 'ok', isError: false });
      await reopened.close();
    });

    it('upgrades a version 2 file in place to the audit trail: rows kept without audit, new answers audited, history indexed', async () => {
      const db = open(file('v2.db'));
      db.exec(V1_DDL);
      db.exec(V2_STEP);
      const insert =
        db.prepare(`INSERT INTO suspensions (id, kind, tool, args, request, run_id, status, created_at, updated_at, answer, outcome, fence)
        VALUES (@id, 'approval', 'transfer', '{"amount":5}', @request, 'run-2', @status, '2030-01-01T00:00:00.000Z', @updated_at, @answer, @outcome, @fence)`);
      const request = (id: string) => JSON.stringify({ id, kind: 'approval', prompt: `Approve ${id}?` });
      insert.run({
        id: 'pnd-open',
        request: request('pnd-open'),
        status: 'pending',
        updated_at: null,
        answer: null,
        outcome: null,
        fence: null,
      });
      insert.run({
        id: 'pnd-old',
        request: request('pnd-old'),
        status: 'declined',
        updated_at: '2020-01-01T00:00:02.000Z',
        answer: '{"id":"pnd-old","ok":false}',
        outcome: '{"output":"declined/expired: no","isError":true}',
        fence: 1,
      });
      db.close();

      const store = new SqliteStore({ filename: file('v2.db'), driver });
      const old = (await store.get('pnd-old'))!;
      expect(old).toMatchObject({ status: 'declined', fence: 1, runId: 'run-2' });
      expect(Object.keys(old)).not.toEqual(expect.arrayContaining(['answeredBy']));
      expect(old.answeredAt).toBeUndefined();
      const claim = (await store.claim('pnd-open', { id: 'pnd-open', ok: true }, 60_000, { by: { id: 'cli:ops' }, comment: 'go' }))!;
      expect(await store.complete(claim, { status: 'resolved', outcome: { output: 'done', isError: false } })).toBe(true);
      expect((await store.history()).map((call) => [call.request.id, call.answeredBy?.id, call.comment])).toEqual([
        ['pnd-open', 'cli:ops', 'go'],
        ['pnd-old', undefined, undefined],
      ]);
      await store.close();

      const check = open(file('v2.db'), { readonly: true });
      try {
        expect(check.prepare('SELECT MAX(version) AS version FROM schema_version').get()).toEqual({ version: SQLITE_SCHEMA_VERSION });
        const plan = (
          check
            .prepare(
              "EXPLAIN QUERY PLAN SELECT * FROM suspensions INDEXED BY suspensions_settled WHERE status IN ('resolved', 'declined', 'expired', 'cancelled') ORDER BY updated_at DESC, seq DESC LIMIT 10",
            )
            .all() as Array<{ detail: string }>
        )
          .map((r) => r.detail)
          .join(' | ');
        expect(plan).toMatch(/USING INDEX suspensions_settled/);
        expect(plan).not.toMatch(/TEMP B-TREE/);
      } finally {
        check.close();
      }
    });

    it('upgrades a version 3 file in place to trace context (step 4): rows kept without it, new calls keep their traceparent', async () => {
      const db = open(file('v3.db'));
      db.exec(V1_DDL);
      db.exec(V2_STEP);
      db.exec(V3_STEP);
      db.prepare(
        `INSERT INTO suspensions (id, kind, tool, args, request, run_id, status, created_at)
         VALUES ('pnd-v3', 'approval', 'transfer', '{"amount":5}', @request, 'run-3', 'pending', '2030-01-01T00:00:00.000Z')`,
      ).run({ request: JSON.stringify({ id: 'pnd-v3', kind: 'approval', prompt: 'Approve?' }) });
      db.close();

      const store = new SqliteStore({ filename: file('v3.db'), driver });
      const old = (await store.get('pnd-v3'))!;
      expect(old).toMatchObject({ status: 'pending', runId: 'run-3' });
      expect('traceparent' in old).toBe(false);
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await store.insert({
        request: { id: 'pnd-v4', kind: 'approval', prompt: 'Approve?' },
        tool: 'transfer',
        args: { amount: 6 },
        status: 'pending',
        createdAt: '2030-01-01T00:00:01.000Z',
        traceparent,
      });
      expect((await store.get('pnd-v4'))?.traceparent).toBe(traceparent);
      const claim = (await store.claim('pnd-v3', { id: 'pnd-v3', ok: true }, 60_000))!;
      expect(await store.complete(claim, { status: 'resolved', outcome: { output: 'done', isError: false } })).toBe(true);
      await store.close();
      const check = open(file('v3.db'), { readonly: true });
      try {
        expect(check.prepare('SELECT MAX(version) AS version FROM schema_version').get()).toEqual({ version: 4 });
        expect(check.prepare('SELECT traceparent FROM suspensions ORDER BY id').all()).toEqual([{ traceparent: null }, { traceparent }]);
      } finally {
        check.close();
      }
    });

    it('refuses a file whose schema is newer than this library reads, and leaves it untouched', async () => {
      const db = open(file('future.db'));
      db.exec('CREATE TABLE schema_version (version INTEGER NOT NULL); INSERT INTO schema_version VALUES (99);');
      db.close();
      expect(() => new SqliteStore({ filename: file('future.db'), driver })).toThrow(
        new StoreError(
          `SQLite file ${file('future.db')} has pending-store schema version 99; this library reads up to ${SQLITE_SCHEMA_VERSION}`,
        ),
      );
      const check = open(file('future.db'), { readonly: true });
      expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()).toEqual([
        { name: 'schema_version' },
      ]);
      check.close();
    });

    it('refuses a file that is not a SQLite database with a clear StoreError, and leaves it untouched', () => {
      writeFileSync(file('notes.txt'), 'these are my notes, not a database\n'.repeat(20));
      expect(() => new SqliteStore({ filename: file('notes.txt'), driver })).toThrow(StoreError);
      expect(() => new SqliteStore({ filename: file('notes.txt'), driver })).toThrow(
        /cannot use SQLite file .*notes\.txt as a store: file is not a database/,
      );
      expect(readFileSync(file('notes.txt'), 'utf8')).toBe('these are my notes, not a database\n'.repeat(20));
    });

    it('refuses an empty filename and a directory that does not exist', () => {
      expect(() => new SqliteStore({ filename: '', driver })).toThrow(new StoreError('SqliteStore needs a filename'));
      expect(() => new SqliteStore({ filename: join(dir, 'no', 'such', 'dir', 'x.db'), driver })).toThrow(/cannot open SQLite file/);
    });

    it('reports stored JSON that was corrupted outside the library as a StoreError', async () => {
      const store = new SqliteStore({ filename: file('corrupt.db'), driver });
      await store.insert({
        request: { id: 'pnd-c', kind: 'approval', prompt: 'ok?' },
        tool: 't',
        args: {},
        status: 'pending',
        createdAt: '2030-01-01T00:00:00.000Z',
      });
      const db = open(file('corrupt.db'));
      db.prepare(`UPDATE suspensions SET args = 'x4111-1111-1111-1111' WHERE id = 'pnd-c'`).run();
      db.close();
      await expect(store.get('pnd-c')).rejects.toThrow(/the stored JSON of the arguments of pnd-c is corrupt/);
      // The parser's words quote the text around the fault ("x4111-1111"... is not valid JSON):
      // they stay in the cause, out of the message.
      const refused: unknown = await store.get('pnd-c').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreError);
      expect((refused as StoreError).message).not.toContain('4111');
      expect(String((refused as StoreError).cause)).toMatch(/JSON/);
      await store.close();
    });
  });
});

describe('which driver opens the file', () => {
  const drivers = sqliteDrivers();

  it('is node:sqlite by default where the runtime has it, else better-sqlite3; a name or the Database class chooses', async () => {
    const byDefault = new SqliteStore(join(dir, 'default-driver.db'));
    expect(byDefault.driver).toBe(runtimeHasNodeSqlite() ? 'node:sqlite' : 'better-sqlite3');
    await byDefault.close();
    for (const { name, driver } of drivers) {
      const chosen = new SqliteStore({ filename: join(dir, 'chosen-driver.db'), driver });
      expect(chosen.driver).toBe(name);
      await chosen.close();
      const named = new SqliteStore({ filename: join(dir, 'chosen-driver.db'), driver: name });
      expect(named.driver).toBe(name);
      await named.close();
    }
  });

  it('a file one driver wrote, the other reads, claims and settles: no schema step stands between them', async () => {
    expect(drivers.map((driver) => driver.name)).toEqual(runtimeHasNodeSqlite() ? ['node:sqlite', 'better-sqlite3'] : ['better-sqlite3']);
    for (const [writer, reader] of drivers.flatMap((w) => drivers.map((r) => [w, r] as const))) {
      const filename = join(dir, `${writer.name.replace(':', '-')}-then-${reader.name.replace(':', '-')}.db`);
      const written = new SqliteStore({ filename, driver: writer.driver });
      await written.insert({
        request: { id: 'pnd-across', kind: 'approval', prompt: 'Pay?' },
        tool: 'pay',
        args: { amount: 5 },
        runId: 'run-across',
        status: 'pending',
        createdAt: '2030-01-01T00:00:00.000Z',
      });
      await written.saveRun({ runId: 'run-across', version: 1, state: { phase: 'running' }, updatedAt: '2030-01-01T00:00:00.000Z' });
      await written.close();

      const read = new SqliteStore({ filename, driver: reader.driver });
      expect(read.driver).toBe(reader.name);
      expect((await read.get('pnd-across'))?.args).toEqual({ amount: 5 });
      const claim = await read.claim('pnd-across', { id: 'pnd-across', ok: true }, 60_000);
      expect(claim?.fence).toBe(1);
      expect(await read.complete(claim!, { status: 'resolved', outcome: { output: 'paid', isError: false } })).toBe(true);
      expect(await read.loadRun('run-across')).toMatchObject({ version: 1, state: { phase: 'running' } });
      await read.close();

      const check = writer.open(filename, { readonly: true });
      expect(check.prepare('SELECT status, fence FROM suspensions').all()).toEqual([{ status: 'resolved', fence: 1 }]);
      expect(check.prepare('SELECT version FROM schema_version ORDER BY version').all()).toHaveLength(SQLITE_SCHEMA_VERSION);
      check.close();
    }
  });

  it("a refusal for another process's lock while the file is first set up is retried, up to the busy timeout", async () => {
    const Database = betterSqlite3();
    // better-sqlite3 underneath, refusing the WAL switch the way SQLite does when two
    // processes set up a new file at the same instant (SQLITE_BUSY, no busy handler asked).
    const refusing = (times: number) =>
      class extends Database {
        override exec(source: string): this {
          if (source === 'PRAGMA journal_mode = WAL' && times-- > 0) {
            throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
          }
          return super.exec(source);
        }
      };
    const retried = new SqliteStore({ filename: join(dir, 'busy-at-first.db'), driver: refusing(3) });
    await retried.insert(sampleCall('pnd-busy'));
    expect((await retried.get('pnd-busy'))?.status).toBe('pending');
    await retried.close();

    expect(() => new SqliteStore({ filename: join(dir, 'busy-always.db'), driver: refusing(Infinity), busyTimeoutMs: 30 })).toThrow(
      /cannot use SQLite file .*busy-always\.db as a store: database is locked/,
    );
    // Any other failure is not waited on.
    const broken = class extends Database {
      override exec(source: string): this {
        if (source === 'PRAGMA journal_mode = WAL') throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' });
        return super.exec(source);
      }
    };
    const started = performance.now();
    expect(() => new SqliteStore({ filename: join(dir, 'broken.db'), driver: broken, busyTimeoutMs: 60_000 })).toThrow(/disk I\/O error/);
    expect(performance.now() - started).toBeLessThan(30_000);
  });
});
