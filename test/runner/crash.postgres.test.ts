/**
 * Durable steps on PostgreSQL: the crash test of crash.test.ts against the shared test
 * cluster (TOOLNEXUS_PG_URL: the embedded one jest's global setup starts, or the one you name).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from 'toolnexus-ts/agents';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';
import { crashAndRecover, KILL_POINTS, uncrashed } from '../fixtures/runner/crash-harness';
import { crashModel, type StoreSpec } from '../fixtures/runner/crash-agent';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';

jest.setTimeout(180_000);

let dir: string;
let server: MockServer;
let where: StoreSpec & object;
let base: RunResult;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-crash-pg-'));
  where = { postgres: await postgresUrl(), schema: uniqueSchema('crash') };
  server = await startMockServer(crashModel);
  base = (await uncrashed(where, dir, server)).result;
  expect(base.status).toBe('done');
});
afterAll(async () => {
  await server.close();
  await dropSchema(where.postgres, where.schema);
  rmSync(dir, { recursive: true, force: true });
});

it.each(KILL_POINTS.map((point, index) => [point.at, point, index] as const))(
  'killed at %s, recovered by another process',
  async (_, point, index) => {
    await crashAndRecover(where, dir, server, point, index, base);
  },
);
