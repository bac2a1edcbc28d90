/**
 * Cross-process resume on one SQLite file, with real child processes (test/fixtures/resume-child.ts),
 * through each SQLite driver the runtime should have.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolResult } from 'toolnexus-ts';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { outputOf, startChild, until, type Started } from '../fixtures/children';
import { sqliteDriverNames, type SqliteDriverName } from '../fixtures/sqlite-drivers';

/** The SQLite driver of the describe block running: its children are told to use it too. */
let driver: SqliteDriverName;

/** A resume-child.ts process. */
function start(args: string[], env: Record<string, string> = {}): Started {
  return startChild('resume-child.ts', args, { SQLITE_DRIVER: driver, ...env });
}

function run<T>(args: [command: string, ...rest: string[]], env: Record<string, string> = {}): Promise<T & { pid: number }> {
  return outputOf<T & { pid: number }>(start(args, env), args[0]);
}

function logLines(log: string): Array<{ id: string; event: string; pid: number }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, event, pid] = line.split('\t');
      if (id === undefined || event === undefined || pid === undefined)
        throw new Error(`malformed line in ${log}: ${JSON.stringify(line)}`);
      return { id, event, pid: Number(pid) };
    });
}

let dir: string;

describe.each(sqliteDriverNames())('ResumeCoordinator across processes on one SQLite file (%s)', (name) => {
  beforeAll(() => {
    driver = name;
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-cross-process-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('process 1 suspends and dies at once; process 2, freshly started, resolves and the tool replays with the answer', async () => {
    const db = join(dir, 'handoff.db');
    const log = join(dir, 'handoff.log');
    const first = start(['suspend', db, log, '1', '--die']);
    const exit = await first.exited;
    expect(exit.signal).toBe('SIGKILL');
    const { ids } = JSON.parse(exit.stdout) as { ids: string[] };
    expect(ids).toHaveLength(1);
    const id = ids[0]!;

    const store = new SqliteStore({ filename: db, driver });
    expect(await store.get(id)).toMatchObject({
      tool: 'ship',
      args: { order: 'order-0' },
      status: 'pending',
      runId: 'run-cross-process',
      callId: 'call_0',
    });
    await store.close();

    const second = await run<{ outcomes: Record<string, ToolResult> }>([
      'resolve',
      db,
      log,
      '60000',
      JSON.stringify(ids),
      JSON.stringify({ approver: 'ops-lead' }),
    ]);
    expect(second.pid).not.toBe(first.pid);
    expect(second.outcomes[id]).toEqual({ output: `shipped order-0, approved by ops-lead, in process ${second.pid}`, isError: false });
    expect(logLines(log)).toEqual([{ id, event: 'shipped', pid: second.pid }]);

    const reread = new SqliteStore({ filename: db, driver });
    expect(await reread.get(id)).toMatchObject({
      status: 'resolved',
      outcome: second.outcomes[id],
      answer: { ok: true, data: { approver: 'ops-lead' } },
    });
    await reread.close();
  });

  it('8 processes race to resolve the same 200 suspensions: each replays exactly once, every racer gets the same outcome', async () => {
    const db = join(dir, 'race.db');
    const log = join(dir, 'race.log');
    const { ids } = await run<{ ids: string[] }>(['suspend', db, log, '200']);
    expect(new Set(ids).size).toBe(200);

    const goFile = join(dir, 'race.go');
    const started = Array.from({ length: 8 }, () =>
      start(['resolve', db, log, '60000', JSON.stringify(ids), JSON.stringify({ approver: 'race' })], { GO_FILE: goFile }),
    );
    await until(() => started.every((child) => child.stderr().includes('ready')), 30_000);
    writeFileSync(goFile, 'go');
    const racers = await Promise.all(
      started.map((child) => outputOf<{ pid: number; outcomes: Record<string, ToolResult> }>(child, 'resolve')),
    );

    const lines = logLines(log);
    expect(lines).toHaveLength(200);
    expect(new Set(lines.map((l) => l.id))).toEqual(new Set(ids));
    const replayedBy = new Map(lines.map((l) => [l.id, l.pid]));
    const racerPids = new Set(racers.map((r) => r.pid));
    // They really raced: the replays are spread over several processes.
    expect(new Set(lines.map((l) => l.pid)).size).toBeGreaterThan(1);
    for (const id of ids) {
      const outcomes = racers.map((r) => r.outcomes[id]);
      expect(new Set(outcomes.map((o) => JSON.stringify(o))).size).toBe(1);
      expect(outcomes[0]).toEqual({
        output: `shipped order-${ids.indexOf(id)}, approved by race, in process ${replayedBy.get(id)}`,
        isError: false,
      });
      expect(racerPids.has(replayedBy.get(id) as number)).toBe(true);
    }
    const store = new SqliteStore({ filename: db, driver });
    expect(await store.list({ status: 'resolved' })).toHaveLength(200);
    await store.close();
  });

  it('a claim whose holder was SIGKILLed mid-replay is taken over after the lease runs out, and by nobody before', async () => {
    const db = join(dir, 'crash.db');
    const log = join(dir, 'crash.log');
    const { ids } = await run<{ ids: string[] }>(['suspend', db, log, '2']);
    expect(ids).toHaveLength(2);
    const [shortLease, longLease] = ids as [string, string];

    // A long lease: the killed holder keeps it, and no fresh process can claim the call.
    const stuck = start(['resolve', db, log, '600000', JSON.stringify([longLease]), '{"approver":"first"}'], { HANG_ON_REPLAY: '1' });
    await until(() => logLines(log).some((l) => l.id === longLease && l.event === 'begin'), 20_000);
    stuck.kill('SIGKILL');
    expect((await stuck.exited).signal).toBe('SIGKILL');
    const attempt = await run<{ won: boolean; status: string }>(['try-claim', db, longLease]);
    expect(attempt).toMatchObject({ won: false, status: 'resolving' });

    // A short lease: once it runs out, a fresh process claims the call and completes it.
    const leaseMs = 1_500;
    const crashed = start(['resolve', db, log, String(leaseMs), JSON.stringify([shortLease]), '{"approver":"first"}'], {
      HANG_ON_REPLAY: '1',
    });
    await until(() => logLines(log).some((l) => l.id === shortLease && l.event === 'begin'), 20_000);
    crashed.kill('SIGKILL');
    await crashed.exited;
    const killedAt = Date.now();

    const store = new SqliteStore({ filename: db, driver });
    const held = (await store.get(shortLease))!;
    expect(held.status).toBe('resolving');
    expect(await store.claim(shortLease, { id: shortLease, ok: true }, 60_000)).toBeUndefined();

    const rescuer = await run<{ outcomes: Record<string, ToolResult> }>([
      'resolve',
      db,
      log,
      String(leaseMs),
      JSON.stringify([shortLease]),
      '{"approver":"first"}',
    ]);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(held.leaseUntil as string));
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    expect(rescuer.outcomes[shortLease]).toEqual({
      output: `shipped order-0, approved by first, in process ${rescuer.pid}`,
      isError: false,
    });
    expect(logLines(log).filter((l) => l.id === shortLease)).toEqual([
      { id: shortLease, event: 'begin', pid: crashed.pid },
      { id: shortLease, event: 'shipped', pid: rescuer.pid },
    ]);
    expect(await store.get(shortLease)).toMatchObject({ status: 'resolved', outcome: rescuer.outcomes[shortLease] });
    expect((await store.get(longLease))?.status).toBe('resolving');
    await store.close();
  });
});
