/**
 * Leases across real processes (test/fixtures/claim-child.ts): renewed while a replay runs,
 * judged by the database clock on PostgreSQL, fenced so a holder that was paused past its
 * lease cannot store its outcome, and taken over after the lease of a holder that died.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild, until, type Started } from '../fixtures/children';
import { sqliteDriverNames, sqliteSpec } from '../fixtures/sqlite-drivers';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

interface Replay {
  id: string;
  event: 'begin' | 'end';
  pid: number;
  fence: number;
  aborted: boolean;
}

type Resolved = { outcome: { output: string; isError: boolean } } | { error: { name: string; message: string } };

let dir: string;
let pgUrl: string;
const schemas: string[] = [];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-leases-'));
  pgUrl = await postgresUrl();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  for (const schema of schemas) await dropSchema(pgUrl, schema);
});

/** SQLite through each driver this runtime should have, then PostgreSQL. */
function sqliteStores(prefix: string): Array<[string, () => string]> {
  return sqliteDriverNames().map((driver) => [
    `SQLite (${driver})`,
    () => sqliteSpec(join(dir, `${prefix}${Math.random().toString(36).slice(2)}.db`), driver),
  ]);
}

function stores(): Array<[string, () => string]> {
  return [
    ...sqliteStores(''),
    [
      'PostgreSQL',
      () => {
        const schema = uniqueSchema('leases');
        schemas.push(schema);
        return `pg:${pgUrl}#${schema}`;
      },
    ],
  ];
}

function replays(log: string): Replay[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, event, pid, fence, aborted] = line.split('\t');
      return { id: id as string, event: event as Replay['event'], pid: Number(pid), fence: Number(fence), aborted: aborted === 'true' };
    });
}

async function suspend(store: string): Promise<string> {
  return (await outputOf<{ id: string }>(startChild('claim-child.ts', ['suspend', store]), 'suspend')).id;
}

function resolver(store: string, id: string, leaseMs: number, env: Record<string, string>): Started {
  return startChild('claim-child.ts', ['resolve', store, id, String(leaseMs)], env);
}

describe.each(stores())('leases across processes on %s', (_name, newStore) => {
  it('a replay three times its lease, two resolvers in two processes: one run, both get the outcome', async () => {
    const store = newStore();
    const log = join(dir, `slow-${Math.random()}.log`);
    const go = join(dir, `go-${Math.random()}`);
    const id = await suspend(store);
    const env = { LOG: log, WORK_MS: '1500', GO_FILE: go };
    const a = resolver(store, id, 500, env);
    const b = resolver(store, id, 500, env);
    writeFileSync(go, '');
    const [fromA, fromB] = await Promise.all([outputOf<Resolved>(a, 'a'), outputOf<Resolved>(b, 'b')]);
    expect(fromA).toEqual(fromB);
    expect('outcome' in fromA && fromA.outcome.output).toMatch(/^done by \d+ under fence 1$/);
    expect(replays(log).map((r) => [r.event, r.fence])).toEqual([
      ['begin', 1],
      ['end', 1],
    ]);
  });

  it('a holder whose event loop blocks past its lease: taken over, its signal aborted, its outcome refused, the new one stands', async () => {
    const store = newStore();
    const log = join(dir, `blocked-${Math.random()}.log`);
    const id = await suspend(store);
    const ready = join(dir, `ready-${Math.random()}`);
    // A stays blocked until B is about to resolve and 3 s (three leases) past that: B's start-up time, whatever the machine's load, cannot let A's lease recover first.
    const a = resolver(store, id, 1_000, { LOG: log, BLOCK_AFTER_FILE: ready, BLOCK_MS: '3000', WORK_MS: '200' });
    await until(() => replays(log).length > 0, 20_000, 'the first holder to begin');
    const b = resolver(store, id, 1_000, { LOG: log, WORK_MS: '200', READY_FILE: ready });
    const [fromA, fromB] = await Promise.all([outputOf<Resolved>(a, 'a'), outputOf<Resolved>(b, 'b')]);
    expect(fromB).toEqual({ outcome: { output: `done by ${b.pid} under fence 2`, isError: false } });
    expect(fromA).toEqual(fromB);
    await until(() => replays(log).length === 4, 5_000, 'the blocked holder to finish its own work');
    const byPid = replays(log);
    expect(byPid.filter((r) => r.pid === a.pid).map((r) => [r.event, r.fence, r.aborted])).toEqual([
      ['begin', 1, false],
      ['end', 1, true],
    ]);
    expect(byPid.filter((r) => r.pid === b.pid).map((r) => [r.event, r.fence, r.aborted])).toEqual([
      ['begin', 2, false],
      ['end', 2, false],
    ]);
  });

  it('a holder killed mid-replay is taken over once its lease has run out', async () => {
    const store = newStore();
    const log = join(dir, `killed-${Math.random()}.log`);
    const id = await suspend(store);
    const a = resolver(store, id, 1_000, { LOG: log, WORK_MS: '600000' });
    await until(() => replays(log).length > 0, 20_000, 'the first holder to begin');
    a.kill('SIGKILL');
    const started = Date.now();
    const fromB = await outputOf<Resolved>(resolver(store, id, 1_000, { LOG: log, WORK_MS: '10' }), 'b');
    expect('outcome' in fromB && fromB.outcome.output).toMatch(/under fence 2$/);
    expect(Date.now() - started).toBeGreaterThan(300); // it waited for the dead holder's lease
    expect(replays(log).map((r) => [r.event, r.fence])).toEqual([
      ['begin', 1],
      ['begin', 2],
      ['end', 2],
    ]);
  });
});

describe.each([
  ...sqliteStores('skew-'),
  [
    'PostgreSQL',
    () => {
      const schema = uniqueSchema('skew');
      schemas.push(schema);
      return `pg:${pgUrl}#${schema}`;
    },
  ],
])('leases on %s are judged by the database clock, in the statement that claims or renews', (_store, newStore) => {
  it.each([
    ['the holder', { CLOCK_SKEW_MS: '-90000' }, {}],
    ['the second resolver', {}, { CLOCK_SKEW_MS: '-90000' }],
    ['the second resolver (ahead)', {}, { CLOCK_SKEW_MS: '90000' }],
    ['the second resolver (10 s ahead, a 5 s lease)', {}, { CLOCK_SKEW_MS: '10000' }],
  ])('%s off, a 3 s tool: one run', async (who, holderEnv, otherEnv) => {
    const store = newStore();
    const log = join(dir, `skew-${Math.random()}.log`);
    const id = await suspend(store);
    const leaseMs = who.includes('5 s lease') ? 5_000 : 60_000;
    const a = resolver(store, id, leaseMs, { LOG: log, WORK_MS: '3000', ...holderEnv });
    await until(() => replays(log).length > 0, 20_000, 'the holder to begin');
    const b = resolver(store, id, leaseMs, { LOG: log, WORK_MS: '3000', ...otherEnv });
    const [fromA, fromB] = await Promise.all([outputOf<Resolved>(a, 'a'), outputOf<Resolved>(b, 'b')]);
    expect(fromA).toEqual({ outcome: { output: `done by ${a.pid} under fence 1`, isError: false } });
    expect(fromB).toEqual(fromA);
    expect(replays(log).map((r) => [r.event, r.pid])).toEqual([
      ['begin', a.pid],
      ['end', a.pid],
    ]);
  });
});
