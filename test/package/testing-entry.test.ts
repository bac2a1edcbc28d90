/**
 * The conformance suite as users get it, from `toolnexus-ts/testing`, run against the
 * memory store and a SQLite file: the shipped copy passes on the stores this package ships.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { runStoreConformance } from 'toolnexus-ts/testing';

runStoreConformance('MemoryStore (toolnexus-ts/testing)', async () => new MemoryStore());

let dir: string | undefined;
runStoreConformance(
  'SqliteStore (toolnexus-ts/testing)',
  async () => {
    dir = mkdtempSync(join(tmpdir(), 'tnx-conformance-'));
    return new SqliteStore({ filename: join(dir, 'store.db'), synchronous: 'normal' });
  },
  async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
);
