/**
 * Durable steps on SQLite, through each SQLite driver the runtime should have: a driver SIGKILLed at 21 instants of a 5-turn run (before, inside
 * and after model calls, tools and checkpoint writes) is recovered by another process to the
 * uncrashed run's transcript; the non-idempotent tool's side effect, counted in a ledger file
 * this test owns, happens exactly once, and when the kill fell inside it an operator was asked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunResult } from 'toolnexus-ts/agents';
import { crashAndRecover, KILL_POINTS, uncrashed } from '../fixtures/runner/crash-harness';
import { crashModel } from '../fixtures/runner/crash-agent';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { sqliteDriverNames, sqliteSpec } from '../fixtures/sqlite-drivers';

jest.setTimeout(180_000);

describe.each(sqliteDriverNames())('on %s', (driver) => {
  let dir: string;
  let server: MockServer;
  let db: string;
  let base: RunResult;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `toolnexus-crash-${driver.replace(':', '-')}-`));
    db = sqliteSpec(join(dir, 'runs.db'), driver);
    server = await startMockServer(crashModel);
    const run = await uncrashed(db, dir, server);
    base = run.result;
    expect(base.status).toBe('done');
    expect(base.turns).toBe(5);
    // Every save-point the kill list names is one this run writes.
    for (const point of KILL_POINTS.filter((p) => p.at.startsWith('save:')))
      expect(run.saves).toContain(point.at.split(':').slice(2).join(':'));
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(KILL_POINTS.map((point, index) => [point.at, point, index] as const))(
    'killed at %s, recovered by another process',
    async (_, point, index) => {
      await crashAndRecover(db, dir, server, point, index, base);
    },
  );
});
