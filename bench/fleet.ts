/**
 * A fleet on one PostgreSQL (issue 37; docs/performance.md, "A fleet on one PostgreSQL").
 *
 * N worker processes (1, 2, 4, 8) behind a load balancer, each an HTTP server that takes an
 * answer (`POST /answer {"id":…}`) and settles it through a `ResumeCoordinator` on a
 * `PostgresStore`; a separate **producer** process sends every answer of a shared pool of
 * pending suspensions (BENCH_POOL, default 100,000) over keep-alive HTTP, round robin, and
 * delivers every BENCH_DUPLICATE_EVERY-th answer twice at once to two workers (as a retrying
 * client or a double click does). The **floor** is the same workers and producer, each answer
 * settled by the two statements any claim-then-settle hand-off needs, prepared, straight on `pg`:
 * `UPDATE … WHERE id = $1 AND status = 'pending' … RETURNING` and the settling `UPDATE`.
 *
 * Reported per size: answers settled per second, the producer's p50/p99 latency per answer
 * (claim to settled, HTTP included), duplicate replays (the workers count every replay of the
 * tool; it must equal the pool), PostgreSQL's CPU per 1,000 answers (its processes' utime +
 * stime from /proc, so only for a server on this machine), and the pool size. Then a recovery
 * phase: 4 workers with a 2 s lease, one SIGKILLed at 30 % of the answers, its answers sent
 * again to the others; the tool writes its side effect to a ledger keyed on the request id, as
 * docs/who-may-answer.md ("Idempotency key") tells a tool to, and counts how often it ran: each
 * answer takes effect once, and a claim the killed worker held is replayed again by the worker
 * that takes it over (counted, not hidden).
 *
 *   npm run bench:fleet
 *   (TOOLNEXUS_PG_URL=postgres://… to use your server; else a throwaway embedded PostgreSQL)
 *   BENCH_POOL=20000 BENCH_WORKERS=1,2,4 npm run bench:fleet   (a quicker run)
 *   BENCH_ROUNDS (default 3): store and floor measured that many times per size, interleaved, the
 *   order swapped each round; the round of median store ÷ floor is shown, with every round's ratio
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Pool } from 'pg';
import { Toolkit, defineTool, pending, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../test/fixtures/pg/embedded';

const WORKER_COUNTS = (process.env.BENCH_WORKERS ?? '1,2,4,8').split(',').map(Number);
const POOL = Number(process.env.BENCH_POOL ?? 100_000);
const DUPLICATE_EVERY = Number(process.env.BENCH_DUPLICATE_EVERY ?? 20);
/** Store and floor measured this many times per size, interleaved; the median round is shown. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Connections per worker process (its PostgresStore pool, and the floor's). */
const POOL_SIZE = Number(process.env.BENCH_POOL_SIZE ?? 4);
/** Answers in flight per worker (the producer's concurrency is this times N). */
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 8);
const KILL_LEASE_MS = 2_000;

type Variant = 'store' | 'floor';
type ToWorker =
  { type: 'setup'; variant: Variant; tablePrefix: string; leaseMs?: number; ledger?: boolean } | { type: 'report' } | { type: 'exit' };
type FromWorker = { type: 'listening'; port: number } | { type: 'set' } | { type: 'report'; replays: number; cpuMicros: number };
type ToProducer =
  { type: 'go'; ports: number[]; prefix: string; count: number; inFlight: number; duplicateEvery: number } | { type: 'exit' };
type FromProducer =
  | { type: 'ready' }
  | { type: 'progress'; settled: number }
  | { type: 'done'; seconds: number; p50: number; p99: number; deliveries: number; redeliveries: number };

const keyOf = (prefix: string, i: number) => `pnd-${prefix}${i}`;

// ---------------------------------------------------------------- worker process

async function worker(url: string, schema: string): Promise<void> {
  let replays = 0;
  let cpuFrom = process.cpuUsage();
  let current: { variant: Variant; table: string; coordinator?: ResumeCoordinator; store?: PostgresStore; pool: Pool } | undefined;
  const send = (message: FromWorker) => process.send!(message);

  const settle = async (id: string): Promise<void> => {
    if (!current) throw new Error('not set up');
    if (current.variant === 'store') {
      const result = await current.coordinator!.resolve({ id, ok: true, data: { approver: 'ops' } });
      if (result.isError) throw new Error(`resolve of ${id}: ${result.output}`);
      return;
    }
    // Prepared, as the store's statements are: the floor is the fastest hand-written equivalent.
    const claimed = await current.pool.query({
      name: `floor_claim_${current.table}`,
      text: `UPDATE ${current.table} SET status = 'resolving', fence = COALESCE(fence, 0) + 1, lease_until_ms = $2
              WHERE id = $1 AND status = 'pending' RETURNING fence, args::text`,
      values: [id, Date.now() + 60_000],
    });
    if (claimed.rowCount !== 1) return; // another delivery holds it: the floor does not wait for its outcome
    replays++;
    await current.pool.query({
      name: `floor_settle_${current.table}`,
      text: `UPDATE ${current.table} SET status = 'resolved', outcome = $2::json, lease_until_ms = NULL WHERE id = $1 AND fence = $3`,
      values: [id, JSON.stringify({ output: 'paid', isError: false }), (claimed.rows[0] as { fence: number }).fence],
    });
  };

  const server = createServer((req, res) => {
    readBody(req)
      .then((body) => settle((JSON.parse(body) as { id: string }).id))
      .then(
        () => res.writeHead(200).end('ok'),
        (error: unknown) => {
          console.error(error);
          res.writeHead(500).end(String(error));
        },
      );
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  process.on('message', (message: ToWorker) => {
    void (async () => {
      if (message.type === 'exit') {
        await current?.store?.close();
        await current?.pool.end();
        process.exit(0);
      }
      if (message.type === 'report') {
        const cpu = process.cpuUsage(cpuFrom);
        send({ type: 'report', replays, cpuMicros: cpu.user + cpu.system });
        return;
      }
      await current?.store?.close();
      await current?.pool.end();
      const pool = new Pool({ connectionString: url, max: POOL_SIZE });
      const table = `"${schema}"."${message.tablePrefix}suspensions"`;
      const ledger = `"${schema}"."${message.tablePrefix}ledger"`;
      const approve = defineTool({
        name: 'approve_payment',
        description: 'Pays an invoice once a human approved it',
        inputSchema: { type: 'object', properties: { invoice: { type: 'string' } }, required: ['invoice'] },
        run: async (args, ctx) => {
          if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Pay ${String(args.invoice)}?` });
          replays++;
          // The side effect keyed on the request id (docs/who-may-answer.md, "Idempotency key"): a replay after a
          // takeover finds it done; `replays` counts how often the tool ran for it.
          const key = ctx.replay?.request.id ?? String(args.invoice);
          if (message.ledger)
            await pool.query(
              `INSERT INTO ${ledger} (id, replays) VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET replays = ${ledger}.replays + 1`,
              [key],
            );
          return success(`paid ${String(args.invoice)}`);
        },
      });
      if (message.variant === 'store') {
        const store = new PostgresStore({
          connectionString: url,
          schema,
          tablePrefix: message.tablePrefix,
          poolConfig: { max: POOL_SIZE },
        });
        await store.ensureSchema();
        const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(approve), store, leaseMs: message.leaseMs });
        current = { variant: 'store', table, coordinator, store, pool };
      } else {
        current = { variant: 'floor', table, pool };
      }
      replays = 0;
      cpuFrom = process.cpuUsage();
      send({ type: 'set' });
    })().catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'listening', port: (server.address() as AddressInfo).port });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > 4096) req.destroy(new Error('answer too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

// ---------------------------------------------------------------- producer process

async function producer(): Promise<void> {
  const send = (message: FromProducer) => process.send!(message);
  process.on('message', (message: ToProducer) => {
    if (message.type === 'exit') process.exit(0);
    else
      void deliverAll(message, send).catch((error: unknown) => {
        console.error(error);
        process.exit(1);
      });
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

async function deliverAll(go: Extract<ToProducer, { type: 'go' }>, send: (m: FromProducer) => void): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: go.inFlight });
  const latencies = new Float64Array(go.count);
  let next = 0;
  let settled = 0;
  let deliveries = 0;
  let redeliveries = 0;
  const dead = new Set<number>();
  /** Sends one answer to `ports[index]`, and on a refused or cut connection to the next live worker. */
  const deliver = async (id: string, index: number): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const port = go.ports[(index + attempt) % go.ports.length]!;
      if (dead.has(port)) continue;
      deliveries++;
      try {
        await post(agent, port, JSON.stringify({ id }));
        return;
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code !== 'ECONNREFUSED' && code !== 'ECONNRESET' && code !== 'EPIPE' && code !== 'HTTP_500') throw error;
        if (code !== 'HTTP_500') dead.add(port);
        redeliveries++;
        if (attempt > 50) throw error;
      }
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: go.inFlight }, async () => {
      for (let i = next++; i < go.count; i = next++) {
        const id = keyOf(go.prefix, i);
        const t0 = process.hrtime.bigint();
        const twice = go.ports.length > 1 && i % go.duplicateEvery === 0;
        await Promise.all(twice ? [deliver(id, i), deliver(id, i + 1)] : [deliver(id, i)]);
        latencies[i] = Number(process.hrtime.bigint() - t0) / 1e6;
        if (++settled % 5_000 === 0) send({ type: 'progress', settled });
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  send({ type: 'done', seconds, p50: at(0.5), p99: at(0.99), deliveries, redeliveries });
}

function post(agent: Agent, port: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/answer',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { code: `HTTP_${res.statusCode}` })),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// ---------------------------------------------------------------- parent process

interface Handle<In, Out> {
  child: ChildProcess;
  send(message: In): void;
  next(): Promise<Out>;
}

function start<In, Out>(role: string, args: string[]): Handle<In, Out> {
  const child = fork(__filename, [role, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: Out[] = [];
  const waiting: Array<(m: Out) => void> = [];
  child.on('message', (m: Out) => {
    const wake = waiting.shift();
    if (wake) wake(m);
    else inbox.push(m);
  });
  return {
    child,
    send: (message) => child.send(message as object),
    next: () => (inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve))),
  };
}

/**
 * PostgreSQL's CPU so far, in ms: utime + stime of the postmaster `root` and its backends (of
 * every process named `postgres` on this machine when the server is not ours), plus the
 * postmaster's cutime + cstime, where the CPU of the backends it has reaped (closed
 * connections) is kept, so the figure never goes down when a pool closes. Other PostgreSQL
 * servers on a shared machine are not counted.
 */
function postgresCpuMs(root: number | undefined): number {
  const stats = new Map<number, string[]>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const ours = root === undefined || Number(pid) === root || Number(fields[1]) === root;
      if (ours && stat.slice(stat.indexOf('(') + 1, close) === 'postgres') stats.set(Number(pid), fields);
    } catch {
      // A process that ended between the listing and the read.
    }
  }
  let ticks = 0;
  for (const fields of stats.values()) {
    ticks += Number(fields[11]) + Number(fields[12]);
    if (!stats.has(Number(fields[1]))) ticks += Number(fields[13]) + Number(fields[14]); // the postmaster: its reaped children
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** `count` pending suspensions of `approve_payment`, in one statement. */
async function seed(admin: Client, schema: string, prefix: string, count: number, url: string): Promise<void> {
  const store = new PostgresStore({ connectionString: url, schema, tablePrefix: prefix });
  await store.ensureSchema();
  await store.close();
  await admin.query(
    `INSERT INTO "${schema}"."${prefix}suspensions" (id, tool, kind, status, request, args, created_at)
     SELECT 'pnd-' || $1 || g, 'approve_payment', 'approval', 'pending',
            json_build_object('id', 'pnd-' || $1 || g, 'kind', 'approval', 'prompt', 'Pay inv-' || g || '?'),
            json_build_object('invoice', 'inv-' || g), $2
       FROM generate_series(0, $3 - 1) AS g`,
    [prefix, new Date().toISOString(), count],
  );
  await admin.query(`CREATE TABLE "${schema}"."${prefix}ledger" (id text PRIMARY KEY, replays integer NOT NULL)`);
  await admin.query(`ANALYZE "${schema}"."${prefix}suspensions"`);
}

/**
 * PostgreSQL's and the workers' CPU per answer: what bounds answers per second when they share
 * the cores, and less swayed than wall time by other work on a shared machine.
 */
const cpuPerAnswer = (m: Measurement) => m.dbCpuPer1000 + m.workerCpuPer1000;

interface Measurement {
  perSecond: number;
  p50: number;
  p99: number;
  replays: number;
  dbCpuPer1000: number;
  workerCpuPer1000: number;
  redeliveries: number;
}

export async function main(): Promise<void> {
  const role = process.argv[2];
  if (role === '--worker') return worker(process.argv[3]!, process.argv[4]!);
  if (role === '--producer') return producer();
  const embedded: EmbeddedPostgresServer | undefined = process.env.TOOLNEXUS_PG_URL ? undefined : await startEmbeddedPostgres();
  try {
    await run(process.env.TOOLNEXUS_PG_URL ?? embedded!.url, embedded?.pid);
  } finally {
    await embedded?.destroy();
  }
}

async function run(url: string, postmaster: number | undefined): Promise<void> {
  const schema = `fleet_${randomBytes(3).toString('hex')}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const settings = (
    await admin.query<{ v: string; fsync: string; max: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('fsync') AS fsync, current_setting('max_connections') AS max",
    )
  ).rows[0]!;
  console.log(
    `fleet on PostgreSQL ${settings.v} (fsync=${settings.fsync}, max_connections=${settings.max}), node ${process.version}; ` +
      `${POOL} answers per measurement, every ${DUPLICATE_EVERY}th delivered twice; pool ${POOL_SIZE} connections and ${IN_FLIGHT} answers in flight per worker`,
  );
  const workers = Array.from({ length: Math.max(...WORKER_COUNTS, 4) }, () => start<ToWorker, FromWorker>('--worker', [url, schema]));
  const ports = await Promise.all(workers.map(async (w) => ((await w.next()) as Extract<FromWorker, { type: 'listening' }>).port));
  const producerHandle = start<ToProducer, FromProducer>('--producer', []);
  await producerHandle.next();

  const measure = async (
    variant: Variant,
    n: number,
    label: string,
    options: { leaseMs?: number; ledger?: boolean; killAt?: number } = {},
  ) => {
    const prefix = `${label}_`;
    await seed(admin, schema, prefix, POOL, url);
    const active = workers.slice(0, n);
    active.forEach((w) => w.send({ type: 'setup', variant, tablePrefix: prefix, leaseMs: options.leaseMs, ledger: options.ledger }));
    await Promise.all(active.map((w) => w.next()));
    const dbBefore = postgresCpuMs(postmaster);
    producerHandle.send({
      type: 'go',
      ports: ports.slice(0, n),
      prefix,
      count: POOL,
      inFlight: IN_FLIGHT * n,
      duplicateEvery: DUPLICATE_EVERY,
    });
    let done: Extract<FromProducer, { type: 'done' }> | undefined;
    let killed = false;
    while (!done) {
      const message = await producerHandle.next();
      if (message.type === 'done') done = message;
      else if (message.type === 'progress' && options.killAt !== undefined && !killed && message.settled >= options.killAt * POOL) {
        active[0]!.child.kill('SIGKILL');
        killed = true;
      }
    }
    const dbCpu = postgresCpuMs(postmaster) - dbBefore;
    const living = killed ? active.slice(1) : active;
    living.forEach((w) => w.send({ type: 'report' }));
    const reports = (await Promise.all(living.map((w) => w.next()))) as Array<Extract<FromWorker, { type: 'report' }>>;
    const settledRows = Number(
      (await admin.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}"."${prefix}suspensions" WHERE status = 'resolved'`)).rows[0]!
        .n,
    );
    if (settledRows !== POOL) throw new Error(`${settledRows} of ${POOL} rows resolved in ${prefix}`);
    const measurement: Measurement = {
      perSecond: POOL / done.seconds,
      p50: done.p50,
      p99: done.p99,
      replays: reports.reduce((sum, r) => sum + r.replays, 0),
      dbCpuPer1000: (dbCpu / POOL) * 1000,
      workerCpuPer1000: (reports.reduce((sum, r) => sum + r.cpuMicros, 0) / 1000 / POOL) * 1000,
      redeliveries: done.redeliveries,
    };
    await admin
      .query(`DROP TABLE "${schema}"."${prefix}suspensions", "${schema}"."${prefix}runs", "${schema}"."${prefix}grants"`)
      .catch(() => undefined);
    return { measurement, prefix };
  };

  console.log(
    '\nworkers  variant  answers/s  p50 ms  p99 ms  duplicate replays  PG CPU ms/1k  worker CPU ms/1k   store ÷ floor  CPU floor ÷ store',
  );
  const rows: Array<{ n: number; store: Measurement; floor: Measurement }> = [];
  for (const n of WORKER_COUNTS) {
    // Store and floor interleaved, ROUNDS times, the order swapped every round: on a machine whose
    // load drifts, both meet the same drift. The round of median store ÷ floor is shown.
    const rounds: Array<{ store: Measurement; floor: Measurement }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order: Variant[] = r % 2 === 0 ? ['store', 'floor'] : ['floor', 'store'];
      const [a, b] = [
        (await measure(order[0]!, n, `${order[0]![0]}${n}r${r}`)).measurement,
        (await measure(order[1]!, n, `${order[1]![0]}${n}r${r}`)).measurement,
      ];
      rounds.push(r % 2 === 0 ? { store: a, floor: b } : { store: b, floor: a });
    }
    const ratios = rounds.map((round) => round.store.perSecond / round.floor.perSecond);
    const { store, floor } = rounds[ratios.indexOf([...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!)]!;
    // Every round's duplicate replays count, not only the median's.
    const duplicateReplays = rounds.reduce((sum, round) => sum + round.store.replays - POOL, 0);
    rows.push({ n, store, floor });
    if (ROUNDS > 1) console.log(`${String(n).padStart(7)}  rounds' store ÷ floor: ${ratios.map((x) => `${x.toFixed(2)}×`).join(', ')}`);
    for (const [variant, m] of [
      ['store', store],
      ['floor', floor],
    ] as const) {
      const duplicates = variant === 'store' ? String(duplicateReplays) : '-';
      console.log(
        `${String(n).padStart(7)}  ${variant.padEnd(7)} ${m.perSecond.toFixed(0).padStart(10)} ${m.p50.toFixed(2).padStart(7)} ${m.p99.toFixed(2).padStart(7)} ` +
          `${duplicates.padStart(18)} ${m.dbCpuPer1000.toFixed(0).padStart(13)} ${m.workerCpuPer1000.toFixed(0).padStart(17)}` +
          (variant === 'floor'
            ? `   ${(store.perSecond / floor.perSecond).toFixed(2).padStart(12)}×  ${(cpuPerAnswer(floor) / cpuPerAnswer(store)).toFixed(2).padStart(16)}×`
            : ''),
      );
    }
  }
  const first = rows[0];
  if (first) {
    console.log('\nthroughput against one worker (store, floor):');
    for (const row of rows)
      console.log(
        `  ${row.n}: ${(row.store.perSecond / first.store.perSecond).toFixed(2)}×, ${(row.floor.perSecond / first.floor.perSecond).toFixed(2)}×`,
      );
  }

  // Recovery: one of four workers SIGKILLed at 30 %; its answers go to the others, which take its claims over once the lease lapses.
  const { measurement: kill, prefix } = await measure('store', 4, 'k4', { leaseMs: KILL_LEASE_MS, ledger: true, killAt: 0.3 });
  const ledger = (
    await admin.query<{ effects: string; twice: string }>(
      `SELECT count(*) AS effects, count(*) FILTER (WHERE replays > 1) AS twice FROM "${schema}"."${prefix}ledger"`,
    )
  ).rows[0]!;
  console.log(
    `\nrecovery: 4 workers, one SIGKILLed at 30 %, lease ${KILL_LEASE_MS} ms: ${kill.perSecond.toFixed(0)} answers/s, p99 ${kill.p99.toFixed(0)} ms, ` +
      `${kill.redeliveries} answers sent again; ${ledger.effects} side effects for ${POOL} answers (keyed on the request id); ` +
      `${ledger.twice} replayed a second time by the worker that took over a claim the killed one held`,
  );
  for (const w of workers) if (w.child.exitCode === null && !w.child.killed) w.send({ type: 'exit' });
  producerHandle.send({ type: 'exit' });
  await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
  await admin.end();
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
