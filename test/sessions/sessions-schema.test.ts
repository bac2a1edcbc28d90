/** The SQLite file's step 4 (sessions): a version 3 file upgraded in place, its rows kept; the session rows' rules. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentError } from 'toolnexus-ts';
import type { SessionStore } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from 'toolnexus-ts/sqlite';
import { sqliteDrivers } from '../fixtures/sqlite-drivers';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sessions-schema-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A version 3 file as released (steps 1 to 3). */
const V3_DDL = `
  CREATE TABLE schema_version (version INTEGER NOT NULL);
  CREATE TABLE suspensions (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
    request TEXT NOT NULL, call_id TEXT, run_id TEXT, status TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT,
    answer TEXT, outcome TEXT, lease_until INTEGER, fence INTEGER, chain TEXT, next_id TEXT, binding TEXT,
    answered_by TEXT, answered_at TEXT, comment TEXT
  );
  CREATE INDEX suspensions_status ON suspensions (status, created_at);
  CREATE INDEX suspensions_run ON suspensions (run_id, created_at) WHERE run_id IS NOT NULL;
  CREATE INDEX suspensions_kind ON suspensions (kind, created_at);
  CREATE INDEX suspensions_settled ON suspensions (updated_at, seq) WHERE status IN ('resolved', 'declined', 'expired', 'cancelled');
  CREATE TABLE runs (run_id TEXT PRIMARY KEY, version INTEGER NOT NULL, state TEXT NOT NULL, updated_at TEXT NOT NULL);
  INSERT INTO schema_version (version) VALUES (1), (2), (3);
  INSERT INTO suspensions (id, kind, tool, args, request, status, created_at)
    VALUES ('pnd-3', 'approval', 'refund', '{}', '{"id":"pnd-3","kind":"approval","prompt":"ok?"}', 'pending', '2030-01-01T00:00:00.000Z');
  INSERT INTO runs VALUES ('run-3', 1, '{"x":1}', '2030-01-01T00:00:00.000Z');
`;

it.each(sqliteDrivers().map((driver) => [driver.name, driver] as const))(
  'on %s, upgrades a version 3 file in place to version 4: rows kept, sessions added',
  async (name, { driver, open }) => {
    const file = join(dir, `v3-${name.replace(':', '-')}.db`);
    const db = open(file);
    db.exec(V3_DDL);
    db.close();
    const store = new SqliteStore({ filename: file, driver });
    expect((await store.get('pnd-3'))?.status).toBe('pending');
    expect((await store.loadRun('run-3'))?.state).toEqual({ x: 1 });
    await sessionRules(store);
    await store.close();
    const check = open(file, { readonly: true });
    expect(check.prepare('SELECT MAX(version) AS version FROM schema_version').get()).toEqual({ version: 4 });
    expect(SQLITE_SCHEMA_VERSION).toBe(4);
    check.close();
  },
);

it('the memory store follows the same session rules', async () => {
  await sessionRules(new MemoryStore());
});

async function sessionRules(store: SessionStore): Promise<void> {
  const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
  const base = { messages: [{ role: 'user' as const, content: 'hi' }], createdAt: at(0) };
  expect(await store.saveSession({ id: 'a', version: 2, ...base, updatedAt: at(0) })).toBe(false);
  expect(await store.saveSession({ id: 'a', version: 1, ...base, updatedAt: at(1) })).toBe(true);
  expect(await store.saveSession({ id: 'a', version: 1, ...base, updatedAt: at(1) })).toBe(false);
  expect(await store.saveSession({ id: 'b', version: 1, ...base, updatedAt: at(2), active: { runId: 'run-b', phase: 'halted' } })).toBe(
    true,
  );
  expect(await store.saveSession({ id: 'a', version: 2, ...base, messages: [], updatedAt: at(3) })).toBe(true);
  expect(await store.sessionOfRun('run-b')).toBe('b');
  expect(await store.sessionOfRun('run-x')).toBeUndefined();
  expect((await store.listSessions()).map((s) => [s.id, s.version, s.messageCount, s.activeRun])).toEqual([
    ['a', 2, 0, undefined],
    ['b', 1, 1, 'run-b'],
  ]);
  expect((await store.listSessions({ limit: 1 })).map((s) => s.id)).toEqual(['a']);
  const loaded = await store.loadSession('b');
  loaded!.messages.push({ role: 'user', content: 'changed' });
  expect((await store.loadSession('b'))!.messages).toHaveLength(1);
  await expect(store.loadSession('')).rejects.toThrow(InvalidArgumentError);
  await expect(store.listSessions({ limit: -1 })).rejects.toThrow(InvalidArgumentError);
  expect(await store.deleteSession('a')).toBe(true);
  expect(await store.deleteSession('a')).toBe(false);
}
