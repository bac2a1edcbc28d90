/**
 * Resume on PostgreSQL: resolves per second with 1, 2, 4 and 8 worker processes sharing one
 * PostgresStore, as a ratio to one worker, next to a floor of the same processes
 * running only the two statements any claim-then-settle hand-off needs (a conditional
 * UPDATE … RETURNING and the settling UPDATE) straight on `pg`.
 *
 * Each measurement: a fresh table prefix, SUSPENSIONS pending calls recorded through the
 * store, split evenly over the N workers (every resolve request lands on one worker, as
 * behind a load balancer); each worker resolves its share CONCURRENCY at a time. Timing runs
 * from the `go` message to the last worker's `done`; process start-up is not counted.
 * Variants run interleaved for ROUNDS rounds, order rotated; the median is shown.
 *
 *   TOOLNEXUS_PG_URL=postgres://... npm run bench:resume-pg
 *   (without TOOLNEXUS_PG_URL it starts a throwaway embedded PostgreSQL, as the tests do, and stops it after)
 *
 *   npm run bench:resume-pg
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Client, Pool } from 'pg';
import { Toolkit, defineTool, pending, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../test/fixtures/pg/embedded';

const WORKER_COUNTS = [1, 2, 4, 8] as const;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SUSPENSIONS = Number(process.env.BENCH_SUSPENSIONS ?? 1600);
const CONCURRENCY = 4;

type Variant = 'store' | 'floor';
type ToWorker = { type: 'go'; variant: Variant; tablePrefix: string; ids: string[] } | { type: 'exit' };
type FromWorker = { type: 'ready' } | { type: 'done'; resolved: number; cpuMicros: number };

const approve = defineTool({
  name: 'approve_payment',
  description: 'Pays an invoice once a human approved it',
  inputSchema: { type: 'object', properties: { invoice: { type: 'string' } }, required: ['invoice'] },
  run: (args, ctx) =>
    ctx?.answer ? success(`paid ${String(args.invoice)}`) : pending({ kind: 'approval', prompt: `Pay ${String(args.invoice)}?` }),
});

// ---------------------------------------------------------------- worker process

async function worker(url: string, schema: string): Promise<void> {
  const stores = new Map<string, { store: PostgresStore; coordinator: ResumeCoordinator }>();
  const floorPool = new Pool({ connectionString: url, max: CONCURRENCY });
  const send = (message: FromWorker) => process.send!(message);

  const lanes = async (ids: string[], one: (id: string) => Promise<void>) => {
    const queue = [...ids];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let id = queue.pop(); id !== undefined; id = queue.pop()) await one(id);
      }),
    );
  };

  process.on('message', (message: ToWorker) => {
    if (message.type === 'exit') {
      void Promise.all([...stores.values()].map((s) => s.store.close()))
        .then(() => floorPool.end())
        .then(() => process.exit(0));
      return;
    }
    void (async () => {
      const cpuBefore = process.cpuUsage();
      if (message.variant === 'store') {
        let entry = stores.get(message.tablePrefix);
        if (!entry) {
          // One pool per worker, sized like the floor's, so both sides get the same connections.
          const store = new PostgresStore({
            connectionString: url,
            schema,
            tablePrefix: message.tablePrefix,
            poolConfig: { max: CONCURRENCY },
          });
          await store.ensureSchema();
          entry = { store, coordinator: new ResumeCoordinator({ toolkit: new Toolkit().register(approve), store }) };
          stores.set(message.tablePrefix, entry);
        }
        const { coordinator } = entry;
        await lanes(message.ids, async (id) => {
          const result = await coordinator.resolve({ id, ok: true, data: { approver: 'ops' } });
          if (result.isError) throw new Error(`resolve of ${id} failed: ${result.output}`);
        });
      } else {
        const table = `"${schema}"."${message.tablePrefix}suspensions"`;
        await lanes(message.ids, async (id) => {
          const claimed = await floorPool.query(
            `UPDATE ${table} SET status = 'resolving', claim_token = $2, lease_until_ms = $3 WHERE id = $1 AND status = 'pending' RETURNING args::text`,
            [id, 't', Date.now() + 60_000],
          );
          if (claimed.rowCount !== 1) throw new Error(`floor lost ${id}`);
          await floorPool.query(
            `UPDATE ${table} SET status = 'resolved', outcome = $2::json, claim_token = NULL WHERE id = $1 AND claim_token = $3`,
            [id, JSON.stringify({ output: 'paid', isError: false }), 't'],
          );
        });
      }
      const cpu = process.cpuUsage(cpuBefore);
      send({ type: 'done', resolved: message.ids.length, cpuMicros: cpu.user + cpu.system });
    })().catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
  // A parent that dies (Ctrl-C) must not leave workers holding connections.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

// ---------------------------------------------------------------- parent process

interface Handle {
  child: ChildProcess;
  next(): Promise<FromWorker>;
}

function startWorker(url: string, schema: string): Handle {
  const child = fork(__filename, ['--worker', url, schema], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: FromWorker[] = [];
  const waiting: Array<(m: FromWorker) => void> = [];
  child.on('message', (m: FromWorker) => {
    const wake = waiting.shift();
    if (wake) wake(m);
    else inbox.push(m);
  });
  child.on('exit', (code) => {
    if (code !== 0) {
      console.error(`bench worker exited with ${code}`);
      process.exit(1);
    }
  });
  return { child, next: () => (inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve))) };
}

async function locateServer(): Promise<{ url: string; embedded?: EmbeddedPostgresServer }> {
  if (process.env.TOOLNEXUS_PG_URL) return { url: process.env.TOOLNEXUS_PG_URL };
  const embedded = await startEmbeddedPostgres();
  return { url: embedded.url, embedded };
}

async function suspend(url: string, schema: string, tablePrefix: string, count: number): Promise<string[]> {
  const store = new PostgresStore({ connectionString: url, schema, tablePrefix, poolConfig: { max: 8 } });
  const createdAt = new Date().toISOString();
  const ids = Array.from({ length: count }, (_, i) => `pnd-${tablePrefix}${i}`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < count; i = next++) {
        await store.insert({
          request: { id: ids[i]!, kind: 'approval', prompt: `Pay inv-${i}?` },
          tool: 'approve_payment',
          args: { invoice: `inv-${i}` },
          status: 'pending',
          createdAt,
        });
      }
    }),
  );
  await store.close();
  return ids;
}

interface Sample {
  perSecond: number;
  /** CPU the worker processes spent per resolve (user + system), in µs; PostgreSQL's own CPU is not in it. */
  workerCpuMicros: number;
}

async function measure(url: string, schema: string, workers: Handle[], variant: Variant, n: number, label: string): Promise<Sample> {
  const tablePrefix = `b${label}_`;
  const ids = await suspend(url, schema, tablePrefix, SUSPENSIONS);
  const share = Math.ceil(ids.length / n);
  const active = workers.slice(0, n);
  const started = process.hrtime.bigint();
  active.forEach((w, i) =>
    w.child.send({ type: 'go', variant, tablePrefix, ids: ids.slice(i * share, (i + 1) * share) } satisfies ToWorker),
  );
  const reports = await Promise.all(active.map((w) => w.next()));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const resolved = reports.reduce((sum, r) => sum + (r.type === 'done' ? r.resolved : 0), 0);
  const cpuMicros = reports.reduce((sum, r) => sum + (r.type === 'done' ? r.cpuMicros : 0), 0);
  if (resolved !== ids.length) throw new Error(`only ${resolved} of ${ids.length} resolved`);
  const client = new Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM "${schema}"."${tablePrefix}suspensions" WHERE status = 'resolved'`,
  );
  await client.end();
  const resolvedRows = rows[0]!.n; // count(*) always returns one row
  if (Number(resolvedRows) !== ids.length) throw new Error(`${resolvedRows} of ${ids.length} rows resolved in ${tablePrefix}`);
  return { perSecond: ids.length / seconds, workerCpuMicros: cpuMicros / ids.length };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('median of no samples');
  return middle;
}

export async function main(): Promise<void> {
  const { url, embedded } = await locateServer();
  try {
    await run(url);
  } finally {
    await embedded?.destroy();
  }
}

async function run(url: string): Promise<void> {
  const schema = `bench_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const { rows } = await admin.query<{ v: string; fsync: string }>(
    "SELECT current_setting('server_version') AS v, current_setting('fsync') AS fsync",
  );
  console.log(
    `resume on PostgreSQL ${rows[0]!.v} (fsync=${rows[0]!.fsync}), node ${process.version}; ${SUSPENSIONS} resolves per measurement, ${CONCURRENCY} in flight per worker`,
  );
  const workers = Array.from({ length: Math.max(...WORKER_COUNTS) }, () => startWorker(url, schema));
  try {
    await Promise.all(workers.map((w) => w.next()));
    const variants = WORKER_COUNTS.flatMap((n) =>
      (['store', 'floor'] as const).map((variant) => ({ n, variant, samples: [] as Sample[] })),
    );
    for (const v of variants) await measure(url, schema, workers, v.variant, v.n, `w${v.variant[0]}${v.n}`); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(round + k) % variants.length]!;
        v.samples.push(await measure(url, schema, workers, v.variant, v.n, `r${round}${v.variant[0]}${v.n}`));
      }
    }
    const samples = (variant: Variant, n: number) => variants.find((v) => v.variant === variant && v.n === n)!.samples;
    const rate = (variant: Variant, n: number) => median(samples(variant, n).map((x) => x.perSecond));
    // Ratios are taken within each round (N workers against 1 worker measured minutes apart at
    // most), then the median over rounds: other load on the machine drifts, and this cancels most of it.
    const ratio = (a: Variant, n: number, b: Variant, m: number) =>
      median(samples(a, n).map((x, round) => x.perSecond / samples(b, m)[round]!.perSecond));
    const cpu = (variant: Variant, n: number) => median(samples(variant, n).map((x) => x.workerCpuMicros));
    console.log(`\nresolves per second (${ROUNDS} interleaved rounds; medians; ratios per round, then median)`);
    console.log('workers   store/s   store ÷ 1 worker   floor/s   floor ÷ 1 worker   store ÷ floor   worker CPU µs/resolve (store, floor)');
    for (const n of WORKER_COUNTS) {
      console.log(
        `${String(n).padStart(7)} ${rate('store', n).toFixed(0).padStart(9)} ${ratio('store', n, 'store', 1).toFixed(2).padStart(17)}× ${rate('floor', n).toFixed(0).padStart(9)} ` +
          `${ratio('floor', n, 'floor', 1).toFixed(2).padStart(17)}× ${ratio('store', n, 'floor', n).toFixed(2).padStart(14)}×   ${cpu('store', n).toFixed(0).padStart(6)}, ${cpu('floor', n).toFixed(0)}`,
      );
    }
    // The spread says how much the machine's other load moved the figures.
    console.log('\nevery sample, resolves/s (store | floor)');
    for (const n of WORKER_COUNTS) {
      const list = (variant: Variant) =>
        samples(variant, n)
          .map((x) => x.perSecond.toFixed(0))
          .join(' ');
      console.log(`${String(n).padStart(7)}   ${list('store')} | ${list('floor')}`);
    }
  } finally {
    for (const w of workers) w.child.send({ type: 'exit' } satisfies ToWorker);
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

if (require.main === module) {
  // startWorker() always passes the URL and the schema after --worker.
  if (process.argv[2] === '--worker') void worker(process.argv[3]!, process.argv[4]!);
  else void main();
}
