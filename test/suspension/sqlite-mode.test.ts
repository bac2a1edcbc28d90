/**
 * Issue 10, SQLite at rest: the store keeps arguments, answers and results in plain text, so
 * a file it creates is 0600 (owner only), and so are the -wal and -shm files SQLite makes
 * beside it (SQLite gives them the database file's mode). An existing file keeps its mode.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, pending } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';

const dir = mkdtempSync(join(tmpdir(), 'tnx-sqlite-mode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const modeOf = (path: string) => statSync(path).mode & 0o777;

const toolkit = () =>
  new Toolkit().register(
    defineTool({
      name: 'ask',
      description: 'Asks',
      inputSchema: { type: 'object', properties: {} },
      run: () => pending({ kind: 'approval', prompt: 'ok?' }),
    }),
  );

describe('SQLite files are private', () => {
  it('a new database, its -wal and its -shm are 0600 whatever the umask', async () => {
    const previous = process.umask(0o022);
    try {
      const filename = join(dir, 'new.db');
      const store = new SqliteStore({ filename });
      await new ResumeCoordinator({ toolkit: toolkit(), store }).execute('ask', { secret: 'plain text' });
      expect(existsSync(`${filename}-wal`)).toBe(true);
      expect(existsSync(`${filename}-shm`)).toBe(true);
      expect([modeOf(filename), modeOf(`${filename}-wal`), modeOf(`${filename}-shm`)]).toEqual([0o600, 0o600, 0o600]);
      await store.close();
    } finally {
      process.umask(previous);
    }
  });

  it('an existing file keeps the mode its owner gave it', async () => {
    const filename = join(dir, 'existing.db');
    writeFileSync(filename, '');
    chmodSync(filename, 0o640);
    const store = new SqliteStore({ filename });
    await store.close();
    expect(modeOf(filename)).toBe(0o640);
  });

  it(':memory: still works', async () => {
    const store = new SqliteStore({ filename: ':memory:' });
    await new ResumeCoordinator({ toolkit: toolkit(), store }).execute('ask', {});
    expect(await store.list()).toHaveLength(1);
    await store.close();
  });
});
