// Cross-framework per-request overhead, all frameworks in ONE run against ONE mock.
//
// 1. A scripted OpenAI-compatible mock runs as a child process on 127.0.0.1 (its CPU is
//    not charged to the frameworks; on 2 cores client and mock each get one).
// 2. Cold: for each framework, BENCH_COLD fresh `node` processes (order rotated) measure
//    import time, setup + first request, and peak RSS after BENCH_COLD_REQUESTS more.
// 3. Warm: this process loads every framework, warms each up, then runs BENCH_ROUNDS
//    rounds of BENCH_BATCH requests per framework, the order rotated every round, and
//    takes p50/p95 of the per-request wall times.
// 4. Throughput: the same process, the same adapters, 64 runs in flight at once
//    (throughput.mjs): runs per second and p95 per framework.
// Each request is the same scenario: one model turn with two parallel tool calls
// (get_weather, add), the tools run, then the final answer: 2 HTTP round trips.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import path from 'node:path';
import scenario from './scenario.cjs';
import { FRAMEWORKS, available } from './frameworks.mjs';
import { startMock } from './mock-process.mjs';
import { median, percentile, rotation } from './stats.mjs';
import { throughputLines, throughputPhase } from './throughput.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
const intEnv = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
};

// No peer may phone home: tracing exporters stay off.
process.env.OPENAI_AGENTS_DISABLE_TRACING = '1';
for (const name of ['LANGCHAIN_TRACING_V2', 'LANGCHAIN_TRACING', 'LANGSMITH_TRACING', 'LANGSMITH_TRACING_V2']) delete process.env[name];

const only = process.env.BENCH_ONLY ? process.env.BENCH_ONLY.split(',').map((s) => s.trim()) : undefined;
const rows = available(only);
const missing = FRAMEWORKS.filter((f) => (!only || only.includes(f.key)) && !rows.includes(f));
if (!rows.some((f) => f.role === 'floor')) throw new Error('the floor row is required: every ratio is against it');

const BATCH = intEnv('BENCH_BATCH', 25);
const ROUNDS = intEnv('BENCH_ROUNDS', 3 * rows.length);
// 2000, not 100: after 100 warm-up requests V8 is still tiering both loops up (on 2026-12-04,
// quiet machine, the floor's own p50 was 0.64 ms after 100 and 0.43 ms after 2000, and the
// runner's ratio to it swung 1.15–1.25× at 100 or 1000 but held at 1.04–1.08× at 2000): a
// short warm-up measured how fast each loop gets optimised, not what a warm request costs.
const WARMUP = intEnv('BENCH_WARMUP', 2000);
const COLD = intEnv('BENCH_COLD', 5);
const COLD_REQUESTS = intEnv('BENCH_COLD_REQUESTS', 50);
const ASK_TIMEOUT_MS = 10_000;
const CHILD_TIMEOUT_MS = 60_000;

function withTimeout(promise, what) {
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ASK_TIMEOUT_MS} ms`)), ASK_TIMEOUT_MS);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

async function coldPhase(url) {
  const results = new Map(rows.map((f) => [f.key, []]));
  for (let rep = 0; rep < COLD; rep++) {
    for (const f of rotation(rows, rep)) {
      const { stdout } = await run(process.execPath, [path.join(here, 'cold.mjs'), f.file, url, String(COLD_REQUESTS)], {
        timeout: CHILD_TIMEOUT_MS,
        env: process.env,
      });
      const sample = JSON.parse(stdout.trim().split('\n').pop());
      if (sample.firstText !== scenario.FINAL_TEXT || sample.lastText !== scenario.FINAL_TEXT) {
        throw new Error(`${f.key} (cold) answered ${JSON.stringify(sample.lastText)}`);
      }
      results.get(f.key).push(sample);
    }
  }
  const summary = new Map();
  for (const [key, samples] of results) {
    summary.set(key, {
      importMs: median(samples.map((s) => s.importMs)),
      firstRequestMs: median(samples.map((s) => s.firstRequestMs)),
      importPlusFirstMs: median(samples.map((s) => s.importMs + s.firstRequestMs)),
      importPlusFirstCpuMs: median(samples.map((s) => s.importCpuMs + s.firstRequestCpuMs)),
      peakRssMB: median(samples.map((s) => s.peakRssMB)),
    });
  }
  return summary;
}

async function warmPhase(url) {
  const fetchBefore = globalThis.fetch;
  const asks = new Map();
  for (const f of rows) {
    const { create } = await import(pathToFileURL(f.file).href);
    asks.set(f.key, await create(url));
  }
  const fetchPatched = globalThis.fetch !== fetchBefore;
  const check = (key, text) => {
    if (text !== scenario.FINAL_TEXT) throw new Error(`${key} answered ${JSON.stringify(text)}`);
  };
  for (const f of rows) {
    const ask = asks.get(f.key);
    for (let i = 0; i < WARMUP; i++) check(f.key, await withTimeout(ask(), `${f.key} warm-up`));
  }
  const times = new Map(rows.map((f) => [f.key, []]));
  // Per round: each framework's batch median and its client CPU per request. Ratios taken
  // within a round cancel the drift of whatever else the machine is doing.
  const rounds = [];
  const runsBefore = { ...scenario.toolRuns };
  let measured = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const thisRound = new Map();
    for (const f of rotation(rows, round)) {
      const ask = asks.get(f.key);
      const bucket = times.get(f.key);
      const batch = [];
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < BATCH; i++) {
        const t = performance.now();
        const text = await withTimeout(ask(), f.key);
        batch.push(performance.now() - t);
        check(f.key, text);
        measured++;
      }
      const cpu = process.cpuUsage(cpuBefore);
      bucket.push(...batch);
      thisRound.set(f.key, { median: median(batch), cpuUs: (cpu.user + cpu.system) / BATCH });
    }
    rounds.push(thisRound);
  }
  for (const tool of ['get_weather', 'add']) {
    const ran = scenario.toolRuns[tool] - runsBefore[tool];
    if (ran !== measured) throw new Error(`${tool} ran ${ran} times in ${measured} measured requests`);
  }
  const summary = new Map();
  for (const [key, list] of times) {
    const sorted = [...list].sort((a, b) => a - b);
    summary.set(key, {
      n: sorted.length,
      p50: percentile(sorted, 0.5),
      p95: percentile(sorted, 0.95),
      mean: list.reduce((a, b) => a + b, 0) / list.length,
      pairedP50VsFloor: median(rounds.map((r) => r.get(key).median / r.get('floor').median)),
      cpuUsPerRequest: median(rounds.map((r) => r.get(key).cpuUs)),
    });
  }
  return { summary, fetchPatched, measured, asks };
}

const fmt = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : '—');
const ratio = (v) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : '—');

async function main() {
  const began = performance.now();
  const mock = await startMock();
  try {
    const cold = await coldPhase(mock.url);
    const coldRequests = rows.length * COLD * (1 + COLD_REQUESTS);
    const warm = await warmPhase(mock.url);
    const throughput = await throughputPhase(rows, warm.asks);
    const mockStats = await mock.stats();
    const warmRequests = rows.length * WARMUP + warm.measured;
    const expectedRequests = 2 * (coldRequests + warmRequests + throughput.measured);
    if (mockStats.requests !== expectedRequests || mockStats.badFinal !== 0) {
      throw new Error(
        `mock saw ${mockStats.requests} requests (expected ${expectedRequests}), ${mockStats.badFinal} with wrong tool results`,
      );
    }
    report({ cold, warm, throughput, mockStats, seconds: (performance.now() - began) / 1000 });
  } finally {
    mock.stop();
  }
}

function report({ cold, warm, throughput, mockStats, seconds }) {
  const floor = warm.summary.get('floor');
  const vercel = warm.summary.get('vercel-ai');
  const peers = rows.filter((f) => f.role === 'peer');
  const best = (metric) => peers.reduce((b, f) => (!b || cold.get(f.key)[metric] < cold.get(b.key)[metric] ? f : b), undefined);
  const bestPeer = best('importPlusFirstMs');
  const bestPeerCpu = best('importPlusFirstCpuMs');
  const bestWall = bestPeer ? cold.get(bestPeer.key).importPlusFirstMs : NaN;
  const bestCpu = bestPeerCpu ? cold.get(bestPeerCpu.key).importPlusFirstCpuMs : NaN;
  const floorRss = cold.get('floor').peakRssMB;

  const out = [];
  out.push(
    `node ${process.version}, ${cpus().length} cores, load average at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}; mock in a child process on 127.0.0.1`,
  );
  out.push('');
  out.push(
    `Per request, warm (one process, ${ROUNDS} rounds × ${BATCH} requests per framework = ${floor.n} each, order rotated every round, after ${WARMUP} warm-up requests each)`,
  );
  out.push('');
  out.push(
    '| framework | p50 ms | p95 ms | p50 × floor | p95 × floor | p50 × Vercel AI SDK | p50 × floor, paired by round | client CPU µs / request | CPU × floor |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const f of rows) {
    const w = warm.summary.get(f.key);
    out.push(
      `| ${f.label} | ${fmt(w.p50, 3)} | ${fmt(w.p95, 3)} | ${ratio(w.p50 / floor.p50)} | ${ratio(w.p95 / floor.p95)} | ${vercel ? ratio(w.p50 / vercel.p50) : '—'} | ${ratio(w.pairedP50VsFloor)} | ${fmt(w.cpuUsPerRequest, 0)} | ${ratio(w.cpuUsPerRequest / floor.cpuUsPerRequest)} |`,
    );
  }
  out.push(
    '("paired by round": the median over rounds of the framework\'s batch median divided by the floor\'s batch median in the same round)',
  );
  out.push('');
  out.push(
    `Cold (median of ${COLD} fresh processes per framework; "first request" includes building the agent; peak RSS after 1 + ${COLD_REQUESTS} requests)`,
  );
  out.push('');
  out.push(
    '| framework | import ms | first request ms | import + first ms | × best peer | import + first, CPU ms | × best peer (CPU) | peak RSS MB | RSS over floor MB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const f of rows) {
    const c = cold.get(f.key);
    const vsPeer = (v, b) => (f.role === 'floor' ? '—' : ratio(v / b));
    out.push(
      `| ${f.label} | ${fmt(c.importMs, 1)} | ${fmt(c.firstRequestMs, 1)} | ${fmt(c.importPlusFirstMs, 1)} | ${vsPeer(c.importPlusFirstMs, bestWall)} | ${fmt(c.importPlusFirstCpuMs, 1)} | ${vsPeer(c.importPlusFirstCpuMs, bestCpu)} | ${fmt(c.peakRssMB, 1)} | ${fmt(c.peakRssMB - floorRss, 1)} |`,
    );
  }
  out.push('');
  if (bestPeer)
    out.push(
      `best peer at import + first request: ${bestPeer.label} (${fmt(bestWall, 1)} ms wall); by CPU time: ${bestPeerCpu.label} (${fmt(bestCpu, 1)} ms)`,
    );
  if (missing.length) out.push(`rows left out (adapter not built): ${missing.map((f) => f.label).join(', ')}`);
  if (warm.fetchPatched) out.push('WARNING: a framework replaced globalThis.fetch in the warm process; every row shares that fetch');
  const self = warm.summary.get('toolnexus');
  if (self) {
    const selfCold = cold.get('toolnexus');
    const verdict = (ok) => (ok ? 'met' : 'NOT met');
    out.push('');
    out.push('targets for toolnexus-ts AgentRunner (argument validation ON):');
    out.push(
      `  p50 ≤ 1.10× floor:                    ${ratio(self.p50 / floor.p50)}  ${verdict(self.p50 / floor.p50 <= 1.1)} (paired by round: ${ratio(self.pairedP50VsFloor)}  ${verdict(self.pairedP50VsFloor <= 1.1)})`,
    );
    out.push(
      `  client CPU / request ≤ 1.3× floor:    ${ratio(self.cpuUsPerRequest / floor.cpuUsPerRequest)}  ${verdict(self.cpuUsPerRequest / floor.cpuUsPerRequest <= 1.3)}`,
    );
    if (vercel)
      out.push(`  p50 ≤ 0.6× Vercel AI SDK:             ${ratio(self.p50 / vercel.p50)}  ${verdict(self.p50 / vercel.p50 <= 0.6)}`);
    if (bestPeer) {
      out.push(
        `  import + first ≤ 0.75× best peer:     ${ratio(selfCold.importPlusFirstMs / bestWall)}  ${verdict(selfCold.importPlusFirstMs / bestWall <= 0.75)} (wall)`,
      );
      out.push(
        `                                        ${ratio(selfCold.importPlusFirstCpuMs / bestCpu)}  ${verdict(selfCold.importPlusFirstCpuMs / bestCpu <= 0.75)} (CPU)`,
      );
    }
  }
  out.push('');
  out.push(...throughputLines(rows, throughput));
  out.push('');
  out.push(`mock served ${mockStats.requests} requests, every tool result checked; total ${fmt(seconds, 1)} s`);
  console.log(out.join('\n'));

  mkdirSync(path.join(here, 'build'), { recursive: true });
  const record = {
    node: process.version,
    cores: cpus().length,
    settings: { ROUNDS, BATCH, WARMUP, COLD, COLD_REQUESTS },
    warm: Object.fromEntries(warm.summary),
    cold: Object.fromEntries(cold),
    throughput: { settings: throughput.settings, summary: Object.fromEntries(throughput.summary) },
    mock: mockStats,
    seconds,
  };
  writeFileSync(path.join(here, 'build/last-run.json'), JSON.stringify(record, null, 2));
}

await main();
