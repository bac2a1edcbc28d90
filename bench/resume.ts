/**
 * Cost of durable suspend/resume on SQLite.
 *
 * 1. Cycles per second: one suspend (`coordinator.execute` records a pending call) plus one
 *    `resolve` (read, atomic claim with a lease, replay, store the outcome), against a floor
 *    of raw better-sqlite3 doing the least a durable hand-off needs: one INSERT of the
 *    request plus one conditional UPDATE that settles it, on a file with the same pragmas.
 *    Variants run interleaved; the median round is shown.
 * 2. Resolve latency as the table grows: p50 of `resolve` with 1,000 versus 100,000
 *    pending rows already in the file (sampled alternately from both files).
 *
 * The store runs on better-sqlite3 here, as the raw floor does, so the ratio compares like
 * with like. better-sqlite3 is no devDependency: it comes from TOOLNEXUS_BETTER_SQLITE3 or the
 * cache folder scripts/better-sqlite3.js fills (docs/deploying.md, "Running the SQLite tests").
 *
 *   npm run bench:resume
 */
import type BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore, type SqliteStoreOptions } from 'toolnexus-ts/sqlite';

interface Installer {
  ensure(): string;
}
/* eslint-disable @typescript-eslint/no-require-imports -- a package outside the repository, found at run time */
const Database = require(
  process.env.TOOLNEXUS_BETTER_SQLITE3 || (require(join(process.cwd(), 'scripts', 'better-sqlite3.js')) as Installer).ensure(),
) as typeof BetterSqlite3;
/* eslint-enable @typescript-eslint/no-require-imports -- end of the run-time require */

const ROUNDS = 15;
const CYCLES = 200;
const LATENCY_SAMPLES = 600;

const approve = defineTool({
  name: 'approve_payment',
  description: 'Pays an invoice once a human approved it',
  inputSchema: {
    type: 'object',
    properties: { invoice: { type: 'string' }, amount: { type: 'integer' } },
    required: ['invoice', 'amount'],
  },
  run: (args, ctx) =>
    ctx?.answer ? success(`paid ${String(args.invoice)}`) : pending({ kind: 'approval', prompt: `Pay ${String(args.invoice)}?` }),
});

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('median of no samples');
  return middle;
}

function coordinatorOn(filename: string, synchronous: SqliteStoreOptions['synchronous']): ResumeCoordinator {
  return new ResumeCoordinator({
    toolkit: new Toolkit().register(approve),
    store: new SqliteStore({ filename, synchronous, driver: Database }),
  });
}

async function coordinatorCycles(coordinator: ResumeCoordinator, round: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < CYCLES; i++) {
    const suspended = await coordinator.execute('approve_payment', { invoice: `inv-${round}-${i}`, amount: 1250 });
    await coordinator.resolve({ id: pendingOf(suspended)!.id, ok: true, data: { approver: 'ops' } });
  }
  return CYCLES / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** The floor: what any durable hand-off must at least do, straight on better-sqlite3. */
function rawFloor(filename: string, synchronous: SqliteStoreOptions['synchronous']) {
  const db = new Database(filename);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  db.exec('CREATE TABLE IF NOT EXISTS calls (id TEXT PRIMARY KEY, request TEXT NOT NULL, status TEXT NOT NULL, outcome TEXT)');
  const insert = db.prepare("INSERT INTO calls (id, request, status) VALUES (?, ?, 'pending')");
  const settle = db.prepare("UPDATE calls SET status = 'resolved', outcome = ? WHERE id = ? AND status = 'pending'");
  return {
    cycles(round: number): number {
      const started = process.hrtime.bigint();
      for (let i = 0; i < CYCLES; i++) {
        const id = `raw-${round}-${i}`;
        insert.run(id, JSON.stringify({ id, kind: 'approval', prompt: `Pay inv-${round}-${i}?` }));
        if (settle.run(JSON.stringify({ output: `paid inv-${round}-${i}`, isError: false }), id).changes !== 1)
          throw new Error('floor lost a row');
      }
      return CYCLES / (Number(process.hrtime.bigint() - started) / 1e9);
    },
    close: () => db.close(),
  };
}

/**
 * Not the floor, but where the cost goes: the store's own SQL (its schema and indexes; insert,
 * claim in an IMMEDIATE transaction, complete) run straight on better-sqlite3, with no JS around it.
 */
async function rawStoreSql(filename: string, synchronous: SqliteStoreOptions['synchronous']) {
  await new SqliteStore({ filename, synchronous, driver: Database }).close(); // creates the schema
  const db = new Database(filename);
  db.pragma(`synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  const insert = db.prepare(`INSERT INTO suspensions (id, kind, tool, args, request, status, created_at)
    VALUES (@id, 'approval', 'approve_payment', @args, @request, 'pending', @now) ON CONFLICT (id) DO NOTHING`);
  const claimStatement =
    db.prepare(`UPDATE suspensions SET status = 'resolving', answer = ?, lease_until = ?, fence = COALESCE(fence, 0) + 1, updated_at = ?
    WHERE id = ? AND (status = 'pending' OR (status = 'resolving' AND lease_until < ?)) RETURNING *`);
  const claimTransaction = db.transaction((id: string, answer: string) =>
    claimStatement.get(answer, Date.now() + 60_000, new Date().toISOString(), id, Date.now()),
  );
  // As the store does: the claim skips its own sync (the outcome's commit syncs it).
  const relax = db.prepare('PRAGMA synchronous = NORMAL');
  const restore = db.prepare(`PRAGMA synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  const claim = {
    immediate(id: string, answer: string) {
      relax.run();
      try {
        return claimTransaction.immediate(id, answer);
      } finally {
        restore.run();
      }
    },
  };
  const complete = db.prepare(`UPDATE suspensions SET status = 'resolved', outcome = ?, lease_until = NULL, updated_at = ?
    WHERE id = ? AND status = 'resolving' AND fence = 1`);
  return {
    cycles(round: number): number {
      const started = process.hrtime.bigint();
      for (let i = 0; i < CYCLES; i++) {
        const id = `sql-${round}-${i}`;
        insert.run({
          id,
          args: JSON.stringify({ invoice: `inv-${round}-${i}`, amount: 1250 }),
          request: JSON.stringify({ id, kind: 'approval', prompt: `Pay inv-${round}-${i}?` }),
          now: new Date().toISOString(),
        });
        claim.immediate(id, JSON.stringify({ id, ok: true, data: { approver: 'ops' } }));
        complete.run(JSON.stringify({ output: `paid inv-${round}-${i}`, isError: false }), new Date().toISOString(), id);
      }
      return CYCLES / (Number(process.hrtime.bigint() - started) / 1e9);
    },
    close: () => db.close(),
  };
}

async function throughput(
  dir: string,
  synchronous: SqliteStoreOptions['synchronous'],
): Promise<{ ours: number; floor: number; storeSql: number }> {
  const coordinator = coordinatorOn(join(dir, `cycles-${synchronous}.db`), synchronous);
  const floor = rawFloor(join(dir, `floor-${synchronous}.db`), synchronous);
  const storeSql = await rawStoreSql(join(dir, `store-sql-${synchronous}.db`), synchronous);
  const variants: Array<{ samples: number[]; once: (round: number) => number | Promise<number> }> = [
    { samples: [], once: (round) => coordinatorCycles(coordinator, round) },
    { samples: [], once: (round) => floor.cycles(round) },
    { samples: [], once: (round) => storeSql.cycles(round) },
  ];
  for (const variant of variants) await variant.once(-1); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order so no variant always runs first (or on a fuller WAL).
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(round + k) % variants.length]!;
      variant.samples.push(await variant.once(round));
    }
  }
  await coordinator.store.close();
  floor.close();
  storeSql.close();
  const [ours, floorSql, storeSqlRun] = variants.map((v) => median(v.samples));
  return { ours: ours!, floor: floorSql!, storeSql: storeSqlRun! };
}

async function prefill(filename: string, rows: number): Promise<ResumeCoordinator> {
  // Filling is not what is measured: write it without a sync per row, then reopen as configured.
  const filler = new SqliteStore({ filename, synchronous: 'normal', driver: Database });
  const createdAt = new Date().toISOString();
  for (let i = 0; i < rows; i++) {
    await filler.insert({
      request: { id: `pnd-fill-${i}`, kind: i % 3 === 0 ? 'input' : 'approval', prompt: `Pay inv-fill-${i}?` },
      tool: 'approve_payment',
      args: { invoice: `inv-fill-${i}`, amount: i },
      runId: `run-${i % 500}`,
      status: 'pending',
      createdAt,
    });
  }
  await filler.close();
  return coordinatorOn(filename, 'full');
}

async function resolveMs(coordinator: ResumeCoordinator, i: number): Promise<number> {
  const suspended = await coordinator.execute('approve_payment', { invoice: `inv-lat-${i}`, amount: 1 });
  const started = process.hrtime.bigint();
  await coordinator.resolve({ id: pendingOf(suspended)!.id, ok: true });
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-bench-resume-'));
  try {
    console.log(
      `resume: SQLite ${new Database(':memory:').prepare('SELECT sqlite_version() AS v').pluck().get() as string}, node ${process.version}`,
    );
    console.log(`\nsuspend + resolve cycles per second (${ROUNDS} interleaved rounds x ${CYCLES} cycles, median)`);
    console.log('synchronous   coordinator/s   raw floor/s   floor ÷ coordinator   store SQL alone/s   store SQL ÷ coordinator');
    for (const synchronous of ['full', 'normal'] as const) {
      const { ours, floor, storeSql } = await throughput(dir, synchronous);
      const ratio = floor / ours;
      console.log(
        `${synchronous.padEnd(12)} ${ours.toFixed(0).padStart(14)} ${floor.toFixed(0).padStart(13)}   ${ratio.toFixed(2).padStart(6)}× (target ≤ 2.00×) ${(ratio <= 2 ? 'OK' : 'OVER').padEnd(4)}` +
          ` ${storeSql.toFixed(0).padStart(10)}   ${(storeSql / ours).toFixed(2).padStart(17)}×`,
      );
    }

    console.log(`\nresolve latency with pending rows already stored (synchronous=full, ${LATENCY_SAMPLES} samples each, alternating)`);
    const small = await prefill(join(dir, 'rows-1k.db'), 1_000);
    const large = await prefill(join(dir, 'rows-100k.db'), 100_000);
    for (let i = 0; i < 50; i++) {
      await resolveMs(small, -i - 1);
      await resolveMs(large, -i - 1);
    }
    const smallMs: number[] = [];
    const largeMs: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      smallMs.push(await resolveMs(small, i));
      largeMs.push(await resolveMs(large, i));
    }
    const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] ?? NaN;
    console.log('pending rows   p50 ms   p90 ms   list(status=pending, kind=input) ms');
    for (const [rows, coordinator, xs] of [
      ['1,000', small, smallMs],
      ['100,000', large, largeMs],
    ] as const) {
      const started = process.hrtime.bigint();
      const listed = await coordinator.list({ status: 'pending', runId: 'run-7', kind: 'input' });
      const listMs = Number(process.hrtime.bigint() - started) / 1e6;
      console.log(
        `${rows.padStart(12)} ${p(xs, 0.5).toFixed(3).padStart(8)} ${p(xs, 0.9).toFixed(3).padStart(8)}   ${listMs.toFixed(3)} (${listed.length} rows)`,
      );
    }
    const flatness = p(largeMs, 0.5) / p(smallMs, 0.5);
    console.log(`resolve p50 100,000 ÷ 1,000 rows = ${flatness.toFixed(2)}× (target ≤ 1.20×) ${flatness <= 1.2 ? 'OK' : 'OVER TARGET'}`);
    await small.store.close();
    await large.store.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) void main();
