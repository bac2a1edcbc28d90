/**
 * Exactly-once resume across real worker processes sharing one PostgreSQL database, and
 * recovery from a worker SIGKILLed mid-replay. Each worker is test/fixtures/pg/worker.ts; the
 * tool's replay writes a row to a side-effect table, which is the ground truth of how many
 * times each suspension really ran.
 */
import { Pool } from 'pg';
import { Toolkit, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { dropSchema, postgresUrl, sql, sqlRow, uniqueSchema } from '../fixtures/pg/server';
import { EFFECTS_DDL, shipTool } from '../fixtures/pg/worker';
import { startWorker, warmUpWorkers, type WorkerHandle } from '../fixtures/pg/workers';

const schema = uniqueSchema('proc');
let url: string;
let effects: Pool;
const workers: WorkerHandle[] = [];

beforeAll(async () => {
  url = await postgresUrl();
  await sql(url, `CREATE SCHEMA "${schema}"`);
  await sql(url, EFFECTS_DDL(schema));
  effects = new Pool({ connectionString: url, max: 4 });
  await warmUpWorkers();
});
afterEach(() => {
  for (const w of workers.splice(0)) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
});
afterAll(async () => {
  await effects.end();
  await dropSchema(url, schema);
});

/** Records `count` suspensions of `ship` through a coordinator in this process; returns their ids. */
async function suspend(tablePrefix: string, count: number): Promise<string[]> {
  const store = new PostgresStore({ connectionString: url, schema, tablePrefix });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(shipTool(effects, schema)), store });
  const ids = new Array<string>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < count; i = next++) ids[i] = pendingOf(await coordinator.execute('ship', { order: `o-${i}` }))!.id;
    }),
  );
  await store.close();
  return ids;
}

function spawn(config: Omit<Parameters<typeof startWorker>[0], 'url' | 'schema'>): WorkerHandle {
  const worker = startWorker({ url, schema, ...config });
  workers.push(worker);
  return worker;
}

describe('PostgresStore across worker processes', () => {
  it('8 worker processes resolve the same 1,000 suspensions concurrently: each replays exactly once', async () => {
    const ids = await suspend('race_', 1000);
    const racers = Array.from({ length: 8 }, () => spawn({ tablePrefix: 'race_', concurrency: 4 }));
    await Promise.all(racers.map((w) => w.next('ready')));
    for (const w of racers) w.go(ids);
    const reports = await Promise.all(racers.map((w) => w.next('done', 90_000)));

    // The side effects: one row per suspension, none twice, none missing.
    const rows = await sql<{ suspension_id: string; n: string; worker: number }>(
      url,
      `SELECT suspension_id, count(*) AS n, min(worker) AS worker FROM "${schema}".effects WHERE suspension_id = ANY($1) GROUP BY suspension_id`,
      [ids],
    );
    expect(rows).toHaveLength(1000);
    expect(rows.filter((r) => Number(r.n) !== 1)).toEqual([]);

    // Every worker got an outcome for every id, and all eight agree on it: the one stored
    // by the single process that replayed it.
    const shippedBy = new Map(rows.map((r) => [r.suspension_id, r.worker]));
    ids.forEach((id, i) => {
      const expected = `shipped o-${i} by ${shippedBy.get(id)}`;
      for (const report of reports) expect(report.outcomes[id]).toBe(expected);
    });
    expect(reports.reduce((sum, r) => sum + r.replays, 0)).toBe(1000);
    // A real race: the replays are spread over several processes.
    expect(new Set(rows.map((r) => r.worker)).size).toBeGreaterThan(1);

    const statuses = await sql<{ status: string; n: string }>(
      url,
      `SELECT status, count(*) AS n FROM "${schema}".race_suspensions GROUP BY status`,
    );
    expect(statuses).toEqual([{ status: 'resolved', n: '1000' }]);
    for (const w of racers) expect((await w.exited).code).toBe(0);
  });

  it('4 approving and 4 declining processes race for the same 200 suspensions: one answer wins each, the others are told it conflicts', async () => {
    const ids = await suspend('clash_', 200);
    const racers = Array.from({ length: 8 }, (_, i) =>
      spawn({ tablePrefix: 'clash_', concurrency: 2, answer: i % 2 === 0 ? 'approve' : 'decline' }),
    );
    await Promise.all(racers.map((w) => w.next('ready')));
    for (const w of racers) w.go(ids);
    const reports = await Promise.all(racers.map((w) => w.next('done', 60_000)));
    const approvers = reports.filter((_, i) => i % 2 === 0);
    const decliners = reports.filter((_, i) => i % 2 === 1);

    const rows = await sql<{ id: string; status: string; outcome: string }>(
      url,
      `SELECT id, status, outcome::text AS outcome FROM "${schema}".clash_suspensions`,
    );
    const shipped = await sql<{ suspension_id: string; n: string }>(
      url,
      `SELECT suspension_id, count(*) AS n FROM "${schema}".effects WHERE suspension_id = ANY($1) GROUP BY 1`,
      [ids],
    );
    const shipments = new Map(shipped.map((r) => [r.suspension_id, Number(r.n)]));
    expect(rows).toHaveLength(200);
    const byStatus: Record<string, number> & { resolved: number; declined: number } = { resolved: 0, declined: 0 };
    for (const row of rows) {
      byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
      const { output } = JSON.parse(row.outcome) as { output: string };
      const i = ids.indexOf(row.id);
      if (row.status === 'resolved') {
        // The approval won: shipped once; every approver got the outcome, every decliner was told.
        expect(shipments.get(row.id)).toBe(1);
        for (const r of approvers) expect(r.outcomes[row.id]).toBe(output);
        for (const r of decliners) expect(r.outcomes[row.id]).toBe('AlreadyResolvedError:resolved');
      } else {
        // The decline won: never shipped; every decliner got "declined/expired", every approver was told.
        expect(row.status).toBe('declined');
        expect(output).toBe(`declined/expired: Ship order o-${i}? (declined)`);
        expect(shipments.get(row.id)).toBeUndefined();
        for (const r of decliners) expect(r.outcomes[row.id]).toBe(output);
        for (const r of approvers) expect(r.outcomes[row.id]).toBe('AlreadyResolvedError:declined');
      }
    }
    expect(byStatus.resolved + byStatus.declined).toBe(200);
    expect(byStatus.resolved).toBeGreaterThan(0); // both sides won some: a real race
    expect(byStatus.declined).toBeGreaterThan(0);
    expect(reports.reduce((sum, r) => sum + r.replays, 0)).toBe(byStatus.resolved);
  });

  it('a worker SIGKILLed mid-replay is recovered by another process once its lease lapses; the replay completes once', async () => {
    const ids = await suspend('kill_', 1);
    expect(ids).toHaveLength(1);
    const id = ids[0]!;
    const leaseMs = 1500;
    const doomed = spawn({ tablePrefix: 'kill_', leaseMs, hangOnReplay: true });
    await doomed.next('ready');
    doomed.go([id]);
    await doomed.next('replaying');
    doomed.child.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');

    // The dead worker's claim is still there, holding the call.
    const held = await sqlRow<{ status: string; lease_until_ms: string }>(
      url,
      `SELECT status, lease_until_ms FROM "${schema}".kill_suspensions WHERE id = $1`,
      [id],
    );
    expect(held.status).toBe('resolving');

    const rescuer = spawn({ tablePrefix: 'kill_', leaseMs });
    await rescuer.next('ready');
    rescuer.go([id]);
    const report = await rescuer.next('done', 30_000);
    expect(report.outcomes[id]).toBe(`shipped o-0 by ${rescuer.pid}`);
    expect(report.replays).toBe(1);

    const trail = await sql<{ worker: number; phase: string; at_ms: string }>(
      url,
      `SELECT worker, phase, (extract(epoch FROM at) * 1000)::bigint AS at_ms FROM "${schema}".effects WHERE suspension_id = $1 ORDER BY at`,
      [id],
    );
    expect(trail.map((t) => [t.worker, t.phase])).toEqual([
      [doomed.pid, 'started'],
      [rescuer.pid, 'shipped'],
    ]);
    // The rescuer waited for the dead worker's lease instead of stealing a live claim.
    expect(Number(trail[1]!.at_ms)).toBeGreaterThanOrEqual(Number(held.lease_until_ms) - 5);
    const settled = await sqlRow<{ status: string; outcome: string }>(
      url,
      `SELECT status, outcome::text AS outcome FROM "${schema}".kill_suspensions WHERE id = $1`,
      [id],
    );
    expect(settled.status).toBe('resolved');
    expect(JSON.parse(settled.outcome)).toEqual({ output: `shipped o-0 by ${rescuer.pid}`, isError: false });
  });
});
