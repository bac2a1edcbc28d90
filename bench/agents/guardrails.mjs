// What guardrails cost the agent loop (docs/performance.md, "Guardrails"): the toolnexus-ts
// AgentRunner row's request (the same two-tool run against the same mock), asked through
// `stream()` so hold-back is on the path, the mock streaming its answers (MOCK_STREAM=1: the
// final text a word at a time), in fresh child processes, rounds rotated:
//
//   off       no guardrails
//   holdback  one no-op output guardrail, hold-back by turn (the default)
//   segments  one no-op output guardrail, hold-back by sentence
//   baseline  `off` against a build of the library from before guardrails, when
//             GUARDRAILS_BASELINE names a copy of bench/agents built against it
//
// Per child: BENCH_WARMUP requests, then BENCH_REQUESTS measured; p50 wall time and client CPU
// per request. Run: npm run build && node bench/agents/build.mjs && node bench/agents/guardrails.mjs
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startMock } from './mock-process.mjs';
import { median } from './stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

async function child(mode, url) {
  const { create } = await import(pathToFileURL(path.join(here, 'frameworks', 'toolnexus-guarded.js')).href);
  const ask = await create(url, mode);
  for (let i = 0; i < WARMUP; i++) await ask();
  const times = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    await ask();
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(`${JSON.stringify({ p50: median(times), cpuUs: (cpu.user + cpu.system) / REQUESTS })}\n`);
}

function runChild(dir, mode, url) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(dir, 'guardrails.mjs'), 'child', mode, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (chunk) => (out += chunk));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${mode} child exited ${code}`))));
  });
}

async function main() {
  if (process.argv[2] === 'child') return child(process.argv[3], process.argv[4]);
  const variants = [
    { name: 'off', dir: here, mode: 'off' },
    { name: 'holdback', dir: here, mode: 'holdback' },
    { name: 'segments', dir: here, mode: 'segments' },
  ];
  if (process.env.GUARDRAILS_BASELINE) variants.push({ name: 'baseline', dir: path.resolve(process.env.GUARDRAILS_BASELINE), mode: 'off' });
  const mock = await startMock({ MOCK_STREAM: '1' });
  const results = Object.fromEntries(variants.map((v) => [v.name, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = variants.map((_, i) => variants[(i + round) % variants.length]);
      for (const v of order) results[v.name].push(await runChild(v.dir, v.mode, mock.url));
      console.error(`round ${round + 1}/${ROUNDS} done`);
    }
  } finally {
    mock.stop();
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, rs]) => [name, { p50: median(rs.map((r) => r.p50)), cpuUs: median(rs.map((r) => r.cpuUs)) }]),
  );
  console.log(`${REQUESTS} streamed requests per child after ${WARMUP} warm-up, ${ROUNDS} rounds, medians over rounds:`);
  for (const [name, s] of Object.entries(summary))
    console.log(`${name.padEnd(9)} p50 ${s.p50.toFixed(3)} ms/run   client CPU ${s.cpuUs.toFixed(0)} µs/run`);
  const ratio = (a, b) => `${(summary[a].p50 / summary[b].p50).toFixed(3)}× p50, ${(summary[a].cpuUs / summary[b].cpuUs).toFixed(3)}× CPU`;
  if (summary.baseline) console.log(`off ÷ baseline (guardrails off, target ≤ 1.02×): ${ratio('off', 'baseline')}`);
  console.log(`holdback ÷ off (no-op output guardrail, hold-back by turn, target ≤ 1.1×): ${ratio('holdback', 'off')}`);
  console.log(`segments ÷ off (no-op output guardrail, hold-back by sentence): ${ratio('segments', 'off')}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
