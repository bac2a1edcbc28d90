/**
 * Several processes opening one brand-new SQLite file at the same instant all get a store:
 * SQLite can refuse the WAL switch of a new file at once ("database is locked", its busy
 * handler not asked), and SqliteStore retries that refusal within its busy timeout. Before
 * the retry, four processes opening 30 new files each failed about one open in sixty.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild } from '../fixtures/children';
import { sqliteDriverNames } from '../fixtures/sqlite-drivers';

const PROCESSES = 4;
const ROUNDS = 30;
const GAP_MS = 60;

describe.each(sqliteDriverNames())('first open of a new SQLite file by %s processes at once', (driver) => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-first-open-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`${PROCESSES} processes open each of ${ROUNDS} new files together; every open succeeds`, async () => {
    // Far enough ahead for every child to have started, even on a loaded machine.
    const firstAt = Date.now() + 8000;
    const children = Array.from({ length: PROCESSES }, () =>
      outputOf<{ failures: Array<{ round: number; error: string }> }>(
        startChild('open-store-child.ts', [dir, driver, String(firstAt), String(ROUNDS), String(GAP_MS)]),
        'open-store-child',
      ),
    );
    const results = await Promise.all(children);
    expect(results.flatMap((result) => result.failures)).toEqual([]);
  }, 60_000);
});
