/**
 * The PostgreSQL tables at scale (issue 37; docs/performance.md, "Tables at a million rows").
 *
 * 1. Resolve p50/p99 with 1,000 stored suspensions against 1,000 pending among 1,000,000
 *    settled ones: the claim, the read and the completion walk the primary key, so the size
 *    of the table should not show.
 * 2. Runs at 1,000,000 rows: `loadRun`, `saveRun` and the orphan scan `listStaleRuns`
 *    (what `recoverOrphans` runs every lease), with and without the `runs_running_idx` partial
 *    index of this release's schema step: the before and after of that fix.
 * 3. Sessions at 1,000,000 rows: `loadSession`, `saveSession`, `listSessions`.
 * 4. Pruning 1,000,000 settled suspensions in batches of 1,000 while resolves go on (4 in
 *    flight): every resolve's latency during the prune against the p50 before it.
 *
 * Rows are written by SQL (`generate_series`) in the store's own layout, then ANALYZEd.
 *
 *   npm run bench:tables
 *   (TOOLNEXUS_PG_URL=postgres://… to use your server; else a throwaway embedded PostgreSQL;
 *   BENCH_ROWS=200000 for a quicker run)
 */
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Toolkit, defineTool, pending, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../test/fixtures/pg/embedded';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const SAMPLES = 1_000;
const POOL_SIZE = 4;
const IN_FLIGHT = 4;

const approve = defineTool({
  name: 'approve_payment',
  description: 'Pays an invoice once a human approved it',
  inputSchema: { type: 'object', properties: { invoice: { type: 'string' } }, required: ['invoice'] },
  run: (args, ctx) =>
    ctx?.answer ? success(`paid ${String(args.invoice)}`) : pending({ kind: 'approval', prompt: `Pay ${String(args.invoice)}?` }),
});

interface Timing {
  p50: number;
  p99: number;
  max: number;
}

function timing(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;
const show = (t: Timing) => `p50 ${t.p50.toFixed(2)} ms, p99 ${t.p99.toFixed(2)} ms, max ${t.max.toFixed(2)} ms`;

/** Times `one(i)` for i in [from, to), `inFlight` at a time. */
async function timed(from: number, to: number, inFlight: number, one: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  let next = from;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < to; i = next++) {
        const started = process.hrtime.bigint();
        await one(i);
        samples.push(ms(started));
      }
    }),
  );
  return samples;
}

class Bench {
  constructor(
    readonly url: string,
    readonly schema: string,
    readonly admin: Client,
  ) {}

  table(prefix: string, name: string): string {
    return `"${this.schema}"."${prefix}${name}"`;
  }

  async store(prefix: string): Promise<{ store: PostgresStore; coordinator: ResumeCoordinator }> {
    const store = new PostgresStore({
      connectionString: this.url,
      schema: this.schema,
      tablePrefix: prefix,
      poolConfig: { max: POOL_SIZE },
    });
    await store.ensureSchema();
    return { store, coordinator: new ResumeCoordinator({ toolkit: new Toolkit().register(approve), store }) };
  }

  /** `count` suspensions `key(g)` with `status`; settled ones a day apart from 2020 on, so a cut-off can take them all. */
  async suspensions(prefix: string, key: string, count: number, status: 'pending' | 'resolved'): Promise<void> {
    await this.admin.query(
      `INSERT INTO ${this.table(prefix, 'suspensions')} (id, tool, kind, status, request, args, outcome, created_at, updated_at)
       SELECT $1 || g, 'approve_payment', 'approval', $2,
              json_build_object('id', $1 || g, 'kind', 'approval', 'prompt', 'Pay inv-' || g || '?'),
              json_build_object('invoice', 'inv-' || g),
              CASE WHEN $2 = 'resolved' THEN json_build_object('output', 'paid', 'isError', false) END,
              to_char(timestamp '2020-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              CASE WHEN $2 = 'resolved' THEN to_char(timestamp '2020-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END
         FROM generate_series(0, $3 - 1) AS g`,
      [key, status, count],
    );
    await this.admin.query(`ANALYZE ${this.table(prefix, 'suspensions')}`);
  }

  async resolveTiming(coordinator: ResumeCoordinator, key: string, from: number, to: number): Promise<Timing> {
    return timing(await timed(from, to, IN_FLIGHT, (i) => coordinator.resolve({ id: `${key}${i}`, ok: true })));
  }
}

export async function main(): Promise<void> {
  const embedded: EmbeddedPostgresServer | undefined = process.env.TOOLNEXUS_PG_URL ? undefined : await startEmbeddedPostgres();
  const url = process.env.TOOLNEXUS_PG_URL ?? embedded!.url;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const schema = `tables_${randomBytes(3).toString('hex')}`;
  try {
    const version = (await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    console.log(`tables on PostgreSQL ${version}, node ${process.version}; ${ROWS} rows; pool ${POOL_SIZE}, ${IN_FLIGHT} in flight`);
    await run(new Bench(url, schema, admin));
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    await embedded?.destroy();
  }
}

async function run(bench: Bench): Promise<void> {
  // 1. Resolve with 1k stored against 1k pending among ROWS settled.
  const small = await bench.store('small_');
  await bench.suspensions('small_', 'pnd-s', SAMPLES * 2, 'pending');
  await small.coordinator.resolve({ id: 'pnd-s0', ok: true }); // warm-up: connections, prepared statements
  const smallTiming = await bench.resolveTiming(small.coordinator, 'pnd-s', SAMPLES, SAMPLES * 2);
  const large = await bench.store('large_');
  let started = process.hrtime.bigint();
  await bench.suspensions('large_', 'old-', ROWS, 'resolved');
  console.log(`\nwrote ${ROWS} settled suspensions in ${(ms(started) / 1000).toFixed(1)} s`);
  await bench.suspensions('large_', 'pnd-l', SAMPLES * 2, 'pending');
  await large.coordinator.resolve({ id: 'pnd-l0', ok: true });
  const largeTiming = await bench.resolveTiming(large.coordinator, 'pnd-l', SAMPLES, SAMPLES * 2);
  console.log(`resolve with ${SAMPLES * 2} stored: ${show(smallTiming)}`);
  console.log(`resolve with ${ROWS + SAMPLES * 2} stored: ${show(largeTiming)}  (p50 ${(largeTiming.p50 / smallTiming.p50).toFixed(2)}×)`);
  await small.store.close();

  // 2. Runs at ROWS rows: finished runs, and 100 running ones whose driver stopped an hour ago.
  const runs = bench.table('large_', 'runs');
  started = process.hrtime.bigint();
  await bench.admin.query(
    `INSERT INTO ${runs} (run_id, version, state, updated_at)
     SELECT 'run-' || g, 3, json_build_object('phase', CASE WHEN g % 10000 = 0 THEN 'running' ELSE 'done' END, 'messages', json_build_array()),
            to_char(timestamp '2024-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
       FROM generate_series(0, $1 - 1) AS g`,
    [ROWS],
  );
  await bench.admin.query(`ANALYZE ${runs}`);
  console.log(`\nwrote ${ROWS} runs in ${(ms(started) / 1000).toFixed(1)} s`);
  const store = large.store;
  const load = timing(await timed(0, SAMPLES, IN_FLIGHT, (i) => store.loadRun(`run-${(i * 997) % ROWS}`)));
  const save = timing(
    await timed(0, SAMPLES, IN_FLIGHT, (i) =>
      store.saveRun({ runId: `run-${(i * 991) % ROWS}x`, version: 1, state: { phase: 'done' }, updatedAt: new Date().toISOString() }),
    ),
  );
  const stale = async () =>
    timing(await timed(0, 20, 1, () => store.listStaleRuns({ updatedBefore: new Date().toISOString(), limit: 100 })));
  const withIndex = await stale();
  // Before the fix: neither index of this release (the scan then reads every run).
  await bench.admin.query(`DROP INDEX "${bench.schema}"."large_runs_running_idx", "${bench.schema}"."large_runs_upd_idx"`);
  const withoutIndex = await stale();
  await bench.admin.query(`CREATE INDEX large_runs_upd_idx ON ${runs} (updated_at COLLATE "C")`);
  await bench.admin.query(`CREATE INDEX large_runs_running_idx ON ${runs} (updated_at COLLATE "C") WHERE (state->>'phase') = 'running'`);
  console.log(`loadRun: ${show(load)}`);
  console.log(`saveRun (new run): ${show(save)}`);
  console.log(`listStaleRuns (limit 100) without runs_running_idx: ${show(withoutIndex)}`);
  console.log(`listStaleRuns (limit 100) with runs_running_idx:    ${show(withIndex)}`);

  // 3. Sessions at ROWS rows.
  const sessions = bench.table('large_', 'sessions');
  started = process.hrtime.bigint();
  await bench.admin.query(
    `INSERT INTO ${sessions} (id, version, state, message_count, active_run, created_at, updated_at)
     SELECT 'chat-' || g, 2, json_build_object('messages', json_build_array(json_build_object('role', 'user', 'content', 'hello'))), 1, NULL,
            to_char(timestamp '2024-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            to_char(timestamp '2024-01-01' + g * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
       FROM generate_series(0, $1 - 1) AS g`,
    [ROWS],
  );
  await bench.admin.query(`ANALYZE ${sessions}`);
  console.log(`\nwrote ${ROWS} sessions in ${(ms(started) / 1000).toFixed(1)} s`);
  const loadSession = timing(await timed(0, SAMPLES, IN_FLIGHT, (i) => store.loadSession(`chat-${(i * 997) % ROWS}`)));
  const saveSession = timing(
    await timed(0, SAMPLES, IN_FLIGHT, async (i) => {
      const id = `chat-${(i * 991) % ROWS}`;
      const loaded = await store.loadSession(id);
      if (loaded) await store.saveSession({ ...loaded, version: loaded.version + 1, updatedAt: new Date().toISOString() });
    }),
  );
  const listSessions = timing(await timed(0, 50, 1, () => store.listSessions({ limit: 50 })));
  console.log(`loadSession: ${show(loadSession)}`);
  console.log(`load + saveSession: ${show(saveSession)}`);
  console.log(`listSessions (limit 50): ${show(listSessions)}`);

  // 4. Prune ROWS settled suspensions while resolves go on.
  const live = 20_000;
  await bench.suspensions('large_', 'live-', live, 'pending');
  const before = timing(await timed(0, SAMPLES, IN_FLIGHT, (i) => large.coordinator.resolve({ id: `live-${i}`, ok: true })));
  let pruning = true;
  let resolvedDuring = SAMPLES;
  const during: number[] = [];
  const resolving = (async () => {
    while (pruning && resolvedDuring < live) {
      const chunk = await timed(resolvedDuring, Math.min(live, resolvedDuring + 200), IN_FLIGHT, (i) =>
        large.coordinator.resolve({ id: `live-${i}`, ok: true }),
      );
      during.push(...chunk);
      resolvedDuring += chunk.length;
    }
  })();
  const pruner = new PostgresStore({ connectionString: bench.url, schema: bench.schema, tablePrefix: 'large_', poolConfig: { max: 1 } });
  started = process.hrtime.bigint();
  const report = await pruner.prune({ settledBefore: new Date('2021-01-01T00:00:00Z'), batchSize: 1_000 });
  const pruneMs = ms(started);
  pruning = false;
  await resolving;
  await pruner.close();
  const duringTiming = timing(during);
  console.log(
    `\nprune: ${report.suspensions} settled suspensions in ${report.batches} batches, ${(pruneMs / 1000).toFixed(1)} s ` +
      `(${((report.suspensions / pruneMs) * 1000).toFixed(0)} rows/s)`,
  );
  console.log(`resolves before the prune: ${show(before)}`);
  console.log(
    `resolves during the prune (${during.length}): ${show(duringTiming)}; slowest ÷ p50 before: ${(duringTiming.max / before.p50).toFixed(2)}×`,
  );
  await store.close();
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
