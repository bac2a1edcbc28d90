import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqlitePendingStore } from 'toolnexus-ts';
import { runStoreConformance } from './conformance';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-sqlite-conformance-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
runStoreConformance('SqlitePendingStore', async () => new SqlitePendingStore({ filename: join(dir, `store-${++n}.db`) }));
