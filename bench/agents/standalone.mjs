// The floor pair with each framework in its OWN process (docs/performance.md, "Against the
// node:http floor"): run.mjs loads every row into one process, where one row's garbage lands on
// the next; here every round starts a fresh `node` for the floor and one for the AgentRunner
// (from this checkout's built dist/), the order rotated, against one mock in a third process.
// Each child warms up, then measures one request at a time (p50 and client CPU a request) and 64
// in flight (runs/s and client CPU a run); the ratios to the floor are taken within each round.
//
//   npm run build && node bench/agents/build.mjs && node bench/agents/standalone.mjs
//
// Knobs: BENCH_ROUNDS (6), BENCH_WARMUP (2000), BENCH_REQUESTS (1000 one at a time),
// BENCH_CONCURRENCY (64), BENCH_TP_RUNS (2048 at that concurrency), BENCH_ONLY (floor,toolnexus).
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import scenario from './scenario.cjs';
import { available } from './frameworks.mjs';
import { startMock } from './mock-process.mjs';
import { median, percentile } from './stats.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const TP_RUNS = Number(process.env.BENCH_TP_RUNS ?? 2048);
const ONLY = (process.env.BENCH_ONLY ?? 'floor,toolnexus').split(',');

/** In the child: one framework, warmed, measured one at a time and then `CONCURRENCY` at a time. */
async function child(key, url) {
  const [row] = available([key]);
  if (!row) throw new Error(`no adapter for ${key} (run node bench/agents/build.mjs)`);
  const { create } = await import(pathToFileURL(row.file).href);
  const ask = await create(url);
  const check = (text) => {
    if (text !== scenario.FINAL_TEXT) throw new Error(`${key} answered ${JSON.stringify(text)}`);
  };
  for (let i = 0; i < WARMUP; i++) check(await ask());
  const times = [];
  let cpu0 = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    check(await ask());
    times.push(performance.now() - t);
  }
  let cpu = process.cpuUsage(cpu0);
  const one = {
    p50: percentile(
      times.sort((a, b) => a - b),
      0.5,
    ),
    cpuUs: (cpu.user + cpu.system) / REQUESTS,
  };
  let started = 0;
  const worker = async () => {
    while (started < TP_RUNS) {
      started++;
      check(await ask());
    }
  };
  cpu0 = process.cpuUsage();
  const began = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - began) / 1000;
  cpu = process.cpuUsage(cpu0);
  process.stdout.write(`${JSON.stringify({ ...one, runsPerSecond: TP_RUNS / seconds, cpuUsPerRun: (cpu.user + cpu.system) / TP_RUNS })}\n`);
}

function runChild(key, url) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [fileURLToPath(import.meta.url), 'child', key, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (chunk) => (out += chunk));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${key} child exited ${code}`))));
  });
}

async function main() {
  if (process.argv[2] === 'child') return child(process.argv[3], process.argv[4]);
  const rows = available(ONLY);
  if (!rows.some((row) => row.key === 'floor')) throw new Error('the floor row is needed');
  const mock = await startMock();
  const seen = new Map(rows.map((row) => [row.key, []]));
  const load = loadavg()[0];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = rows.map((_, i) => rows[(i + round) % rows.length]);
      for (const row of order) seen.get(row.key).push(await runChild(row.key, mock.url));
    }
  } finally {
    mock.stop();
  }
  const floor = seen.get('floor');
  const ratio = (rounds, field) => median(rounds.map((r, i) => r[field] / floor[i][field]));
  console.log(
    `node ${process.version}; each framework in its own process; ${ROUNDS} rounds; load average ${load.toFixed(1)} → ${loadavg()[0].toFixed(1)}`,
  );
  console.log(
    '\n| framework | p50 ms | × floor | CPU µs / request | × floor | runs/s at ' + CONCURRENCY + ' | × floor | CPU µs / run | × floor |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) {
    const rounds = seen.get(row.key);
    const m = (field) => median(rounds.map((r) => r[field]));
    console.log(
      `| ${row.label} | ${m('p50').toFixed(3)} | ${ratio(rounds, 'p50').toFixed(2)}× | ${m('cpuUs').toFixed(0)} | ${ratio(rounds, 'cpuUs').toFixed(2)}× | ${m('runsPerSecond').toFixed(0)} | ${ratio(rounds, 'runsPerSecond').toFixed(2)}× | ${m('cpuUsPerRun').toFixed(0)} | ${ratio(rounds, 'cpuUsPerRun').toFixed(2)}× |`,
    );
  }
  console.log('(ratios: the median over rounds of each round’s figure over the floor’s in the same round)');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
