/**
 * Issue 25's review finding, mended on the answer path: a one-time credential in an answer (a
 * login's authorization code, the redirect URL holding it, a field the request marks
 * `writeOnly`) is consumed by the replay and kept nowhere: not in the stored row (read back
 * raw from the SQLite file and the PostgreSQL table), not in a chain's link, not in what a
 * repeated answer is compared with. docs/design.md, glossary: "consumed".
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { Toolkit, defineTool, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { AlreadyResolvedError, ResumeCoordinator, type SuspensionStore } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const CODE = 'one-time-code-7f3a9c1e';
const PASSWORD = 'hunter2-canary-pw';

const dir = mkdtempSync(join(tmpdir(), 'tnx-consumed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A tool that logs in (kind `authorization`), then asks for a vault password (a `writeOnly` field), then runs. */
function vaultToolkit() {
  const seen: Array<Record<string, unknown> | undefined> = [];
  const chains: unknown[] = [];
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'open_vault',
      description: 'Opens a vault after a login and a password',
      inputSchema: { type: 'object', properties: { vault: { type: 'string' } }, required: ['vault'] },
      run: (args: { vault: string }, ctx?: ToolContext) => {
        const request = ctx?.replay?.request;
        seen.push(ctx?.answer?.data);
        chains.push(structuredClone(ctx?.replay?.chain));
        if (!request) return pending({ kind: 'authorization', prompt: 'Log in', url: 'https://login.example/authorize' });
        if (request.kind === 'authorization') {
          if (ctx?.answer?.data?.code !== CODE) return success('wrong code');
          return pending({
            kind: 'input',
            prompt: `Password for ${args.vault}`,
            data: {
              schema: {
                type: 'object',
                properties: { password: { type: 'string', writeOnly: true }, note: { type: 'string' } },
                required: ['password'],
              },
            },
          });
        }
        return success(ctx?.answer?.data?.password === PASSWORD ? `opened ${args.vault}` : 'wrong password');
      },
    }),
  );
  return { toolkit, seen, chains };
}

async function walk(store: SuspensionStore) {
  const { toolkit, seen } = vaultToolkit();
  const coordinator = new ResumeCoordinator({ toolkit, store });
  const login = pendingOf(await coordinator.execute('open_vault', { vault: 'v1' }, {}, { callId: 'c1', runId: 'r1' }))!;
  const loginAnswer = { id: login.id, ok: true, data: { code: CODE, account: 'ada' } };
  const asked = pendingOf(await coordinator.resolve(loginAnswer))!;
  expect(asked).toMatchObject({ kind: 'input' });
  const passwordAnswer = { id: asked.id, ok: true, data: { password: PASSWORD, note: 'for the audit' } };
  const done = await coordinator.resolve(passwordAnswer);
  expect(done).toMatchObject({ isError: false, output: 'opened v1' });
  // The replays saw the answers whole.
  expect(seen).toEqual([undefined, { code: CODE, account: 'ada' }, { password: PASSWORD, note: 'for the audit' }]);

  // Kept: the claim's answer and the chain's link, each consumed field replaced, the rest as given.
  const loginRow = await coordinator.get(login.id);
  expect(loginRow?.answer).toEqual({ id: login.id, ok: true, data: { code: '[consumed]', account: 'ada' } });
  const passwordRow = await coordinator.get(asked.id);
  expect(passwordRow?.answer).toEqual({ id: asked.id, ok: true, data: { password: '[consumed]', note: 'for the audit' } });
  expect(passwordRow?.chain).toEqual([
    { request: login, answer: { id: login.id, ok: true, data: { code: '[consumed]', account: 'ada' } } },
  ]);

  // The same answer again gets the stored outcome; so does one differing only where nothing is kept.
  await expect(coordinator.resolve(passwordAnswer)).resolves.toEqual(done);
  await expect(coordinator.resolve({ ...passwordAnswer, data: { password: 'another', note: 'for the audit' } })).resolves.toEqual(done);
  // A difference in what is kept is still another answer.
  await expect(coordinator.resolve({ ...passwordAnswer, data: { password: PASSWORD, note: 'changed' } })).rejects.toBeInstanceOf(
    AlreadyResolvedError,
  );
  return { login, asked };
}

describe('an answer consumed by its replay is kept nowhere', () => {
  it('memory store', async () => {
    const store = new MemoryStore();
    const { login, asked } = await walk(store);
    const rows = JSON.stringify([await store.get(login.id), await store.get(asked.id)]);
    expect(rows).not.toContain(CODE);
    expect(rows).not.toContain(PASSWORD);
  });

  it('SQLite: not a byte of either secret in the database file or its WAL', async () => {
    const filename = join(dir, 'vault.db');
    const store = new SqliteStore({ filename });
    await walk(store);
    await store.close();
    const db = new Database(filename, { readonly: true });
    const rows = JSON.stringify(db.prepare('SELECT * FROM suspensions').all());
    db.close();
    expect(rows).toContain('[consumed]');
    expect(rows).not.toContain(CODE);
    expect(rows).not.toContain(PASSWORD);
    for (const file of [filename, `${filename}-wal`]) {
      let bytes = '';
      try {
        bytes = readFileSync(file).toString('latin1');
      } catch {
        continue; // the WAL is folded into the file on close
      }
      expect(bytes).not.toContain(CODE);
      expect(bytes).not.toContain(PASSWORD);
    }
  });

  it('PostgreSQL: not in any row of the table', async () => {
    const url = await postgresUrl();
    const schema = uniqueSchema('consumed');
    const store = new PostgresStore({ connectionString: url, schema });
    try {
      await walk(store);
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT * FROM "${schema}".toolnexus_suspensions`);
        const text = JSON.stringify(rows);
        expect(rows.length).toBe(2);
        expect(text).not.toContain(CODE);
        expect(text).not.toContain(PASSWORD);
      } finally {
        await client.end();
      }
    } finally {
      await store.close();
      await dropSchema(url, schema);
    }
  });

  it('in process (waitFor), the chain a later link sees holds no consumed field either', async () => {
    const { toolkit, chains } = vaultToolkit();
    const coordinator = new ResumeCoordinator({
      toolkit,
      store: new MemoryStore(),
      waitFor: (request) =>
        request.kind === 'authorization'
          ? { id: request.id, ok: true, data: { code: CODE } }
          : { id: request.id, ok: true, data: { password: PASSWORD } },
    });
    const result = await coordinator.execute('open_vault', { vault: 'v2' });
    expect(result).toMatchObject({ isError: false, output: 'opened v2' });
    expect(JSON.stringify(chains)).not.toContain(CODE);
    expect((chains[2] as Array<{ answer: unknown }>).map((link) => link.answer)).toEqual([
      { id: expect.any(String) as string, ok: true, data: { code: '[consumed]' } },
    ]);
  });
});
