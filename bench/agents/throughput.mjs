// Throughput: BENCH_CONCURRENCY (default 64) runs of the scenario in flight at once in ONE
// process, against the same mock child process, for every framework in the same run.
//
// Per round and framework: BENCH_TP_RUNS runs (default 4 × the concurrency) are started
// by BENCH_CONCURRENCY workers, each starting its next run as soon as its last one ends.
// Runs per second = runs / wall time of the round; p95 = of every run's own wall time.
// The order of the frameworks rotates every round, and the ratios to the floor are taken
// within a round ("paired"), so whatever else the machine does in a round weighs on every
// row of that round alike.
//
// `node throughput.mjs` runs this phase alone (its own mock, warm-up and checks);
// run.mjs runs it after its warm phase and adds the table to its report.
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import scenario from './scenario.cjs';
import { available } from './frameworks.mjs';
import { startMock } from './mock-process.mjs';
import { median, percentile, rotation } from './stats.mjs';

const intEnv = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};

export function throughputSettings(rowCount) {
  const concurrency = intEnv('BENCH_CONCURRENCY', 64);
  return {
    concurrency,
    runs: intEnv('BENCH_TP_RUNS', 4 * concurrency),
    // One round per row: each framework takes every place in the order once.
    rounds: intEnv('BENCH_TP_ROUNDS', rowCount),
  };
}

/** One round of one framework: `runs` runs, `concurrency` at a time. */
async function burst(ask, key, runs, concurrency) {
  const times = [];
  let started = 0;
  const worker = async () => {
    while (started < runs) {
      started++;
      const t = performance.now();
      const text = await ask();
      times.push(performance.now() - t);
      if (text !== scenario.FINAL_TEXT) throw new Error(`${key} answered ${JSON.stringify(text)} under load`);
    }
  };
  const began = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const cpu = process.cpuUsage(cpuBefore);
  const seconds = (performance.now() - began) / 1000;
  // Client CPU per run: what the framework costs this process, whatever else shares the machine.
  return { runsPerSecond: runs / seconds, cpuUsPerRun: (cpu.user + cpu.system) / runs, times };
}

/** The phase over already created (and warmed) adapters: `asks` maps a row's key to its `ask`. */
export async function throughputPhase(rows, asks) {
  const { concurrency, runs, rounds } = throughputSettings(rows.length);
  const runsBefore = { ...scenario.toolRuns };
  // Untimed first: every framework opens its connections and warms its concurrent path.
  for (const f of rows) await burst(asks.get(f.key), f.key, concurrency, concurrency);
  const perRound = [];
  const times = new Map(rows.map((f) => [f.key, []]));
  for (let round = 0; round < rounds; round++) {
    const thisRound = new Map();
    for (const f of rotation(rows, round)) {
      const result = await burst(asks.get(f.key), f.key, runs, concurrency);
      times.get(f.key).push(...result.times);
      thisRound.set(f.key, result);
    }
    perRound.push(thisRound);
  }
  // Every run of the phase, warm-up included (what the mock's request count must show).
  const measured = rows.length * (concurrency + rounds * runs);
  for (const tool of ['get_weather', 'add']) {
    const ran = scenario.toolRuns[tool] - runsBefore[tool];
    if (ran !== measured) throw new Error(`${tool} ran ${ran} times in ${measured} throughput runs`);
  }
  const summary = new Map();
  for (const f of rows) {
    const sorted = times.get(f.key).sort((a, b) => a - b);
    summary.set(f.key, {
      runsPerSecond: median(perRound.map((r) => r.get(f.key).runsPerSecond)),
      pairedVsFloor: median(perRound.map((r) => r.get(f.key).runsPerSecond / r.get('floor').runsPerSecond)),
      cpuUsPerRun: median(perRound.map((r) => r.get(f.key).cpuUsPerRun)),
      p50: percentile(sorted, 0.5),
      p95: percentile(sorted, 0.95),
    });
  }
  return { summary, settings: { concurrency, runs, rounds }, measured };
}

const fmt = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '—');
const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');

/** The phase's table and its targets, as report lines. */
export function throughputLines(rows, result) {
  const { summary, settings } = result;
  const floor = summary.get('floor');
  const out = [];
  out.push(
    `Throughput (${settings.concurrency} runs in flight in one process; ${settings.rounds} rounds × ${settings.runs} runs per framework, order rotated every round; runs/s is the median over rounds)`,
  );
  out.push('');
  out.push(
    '| framework | runs/s | × floor | × floor, paired by round | p50 ms | p95 ms | p95 × floor | client CPU µs / run | CPU × floor |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const f of rows) {
    const s = summary.get(f.key);
    out.push(
      `| ${f.label} | ${fmt(s.runsPerSecond, 0)} | ${ratio(s.runsPerSecond / floor.runsPerSecond)} | ${ratio(s.pairedVsFloor)} | ${fmt(s.p50, 1)} | ${fmt(s.p95, 1)} | ${ratio(s.p95 / floor.p95)} | ${fmt(s.cpuUsPerRun, 0)} | ${ratio(s.cpuUsPerRun / floor.cpuUsPerRun)} |`,
    );
  }
  out.push('("paired by round": the median over rounds of the framework\'s runs/s divided by the floor\'s in the same round)');
  const self = summary.get('toolnexus');
  if (self) {
    const peers = rows.filter((f) => f.role === 'peer');
    const bestPeer = peers.reduce((b, f) => (!b || summary.get(f.key).runsPerSecond > summary.get(b.key).runsPerSecond ? f : b), undefined);
    const verdict = (ok) => (ok ? 'met' : 'NOT met');
    out.push('');
    out.push('throughput targets for toolnexus-ts AgentRunner:');
    out.push(
      `  runs/s ≥ 0.85× floor:                ${ratio(self.runsPerSecond / floor.runsPerSecond)}  ${verdict(self.runsPerSecond / floor.runsPerSecond >= 0.85)} (paired by round: ${ratio(self.pairedVsFloor)}  ${verdict(self.pairedVsFloor >= 0.85)})`,
    );
    out.push(
      `  client CPU / run ≤ 1.3× floor:       ${ratio(self.cpuUsPerRun / floor.cpuUsPerRun)}  ${verdict(self.cpuUsPerRun / floor.cpuUsPerRun <= 1.3)}`,
    );
    if (bestPeer) {
      const peer = summary.get(bestPeer.key);
      out.push(
        `  ahead of every peer (best: ${bestPeer.label}, ${fmt(peer.runsPerSecond, 0)} runs/s): ${ratio(self.runsPerSecond / peer.runsPerSecond)}  ${verdict(self.runsPerSecond > peer.runsPerSecond)}`,
      );
    }
  }
  return out;
}

async function main() {
  // No peer may phone home: tracing exporters stay off.
  process.env.OPENAI_AGENTS_DISABLE_TRACING = '1';
  for (const name of ['LANGCHAIN_TRACING_V2', 'LANGCHAIN_TRACING', 'LANGSMITH_TRACING', 'LANGSMITH_TRACING_V2']) delete process.env[name];
  const only = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : undefined;
  const rows = available(only);
  if (!rows.some((f) => f.role === 'floor')) throw new Error('the floor row is required: every ratio is against it');
  const warmup = intEnv('BENCH_WARMUP', 100);
  const loadBefore = loadavg();
  const mock = await startMock();
  try {
    const asks = new Map();
    for (const f of rows) {
      const { create } = await import(pathToFileURL(f.file).href);
      asks.set(f.key, await create(mock.url));
    }
    for (const f of rows) {
      const ask = asks.get(f.key);
      for (let i = 0; i < warmup; i++) await ask();
    }
    const began = performance.now();
    const result = await throughputPhase(rows, asks);
    const stats = await mock.stats();
    const expected = 2 * (rows.length * warmup + result.measured);
    // (the sequential warm-up runs are not counted by the phase's tool check, only here)
    if (stats.requests !== expected || stats.badFinal !== 0)
      throw new Error(`mock saw ${stats.requests} requests (expected ${expected}), ${stats.badFinal} with wrong tool results`);
    const fmtLoad = (l) => l.map((v) => v.toFixed(2)).join(' ');
    console.log(
      `node ${process.version}, ${cpus().length} cores, load average before ${fmtLoad(loadBefore)}, after ${fmtLoad(loadavg())}; mock in a child process on 127.0.0.1`,
    );
    console.log('');
    console.log(throughputLines(rows, result).join('\n'));
    console.log('');
    console.log(`mock served ${stats.requests} requests, every tool result checked; ${fmt((performance.now() - began) / 1000, 1)} s`);
  } finally {
    mock.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
