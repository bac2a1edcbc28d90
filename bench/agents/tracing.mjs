// What tracing costs the agent loop (docs/performance.md, "Tracing"): the toolnexus-ts
// AgentRunner row of this benchmark (frameworks/toolnexus.js, the same two-tool request
// against the same mock) in three set-ups, each in fresh child processes, rounds rotated:
//
//   off       @opentelemetry/api installed, no provider registered (what most apps have)
//   otel      a global tracer provider (SimpleSpanProcessor over a no-op exporter) and a
//             global meter provider, with the AsyncLocalStorage context manager: every span
//             and metric is made, then dropped
//   baseline  `off` against a build of the library before tracing existed, when
//             TRACING_BASELINE names a copy of bench/agents built against it
//
// Per child: BENCH_WARMUP requests, then BENCH_REQUESTS measured; wall time and client CPU
// per request. Run: npm run build && node bench/agents/build.mjs && node bench/agents/tracing.mjs
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startMock } from './mock-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const WARMUP = Number(process.env.BENCH_WARMUP ?? 100);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

async function child(mode, url) {
  let spans = 0;
  if (mode === 'otel') {
    // The repository's OpenTelemetry (devDependencies), registered as an app registers it.
    const require = createRequire(path.join(here, '..', '..', 'package.json'));
    const { context, trace, metrics } = require('@opentelemetry/api');
    const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
    const { SimpleSpanProcessor, TracerProvider } = require('@opentelemetry/sdk-trace');
    const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
    const exporter = {
      export: (batch, done) => {
        spans += batch.length;
        done({ code: 0 });
      },
      shutdown: () => Promise.resolve(),
    };
    class Idle extends MetricReader {
      onForceFlush() {
        return Promise.resolve();
      }
      onShutdown() {
        return Promise.resolve();
      }
    }
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new Idle()] }));
  }
  const { create } = await import(pathToFileURL(path.join(here, 'frameworks', 'toolnexus.js')).href);
  const ask = await create(url);
  for (let i = 0; i < WARMUP; i++) await ask();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < REQUESTS; i++) await ask();
  const ms = (performance.now() - t0) / REQUESTS;
  const cpu = process.cpuUsage(cpu0);
  // 5 spans a run (invoke_agent, 2 chat, 2 execute_tool): proof the otel set-up traced every run.
  if (mode === 'otel' && spans < 5 * (WARMUP + REQUESTS)) throw new Error(`only ${spans} spans exported`);
  process.stdout.write(`${JSON.stringify({ ms, cpuUs: (cpu.user + cpu.system) / REQUESTS, spans })}\n`);
}

function runChild(dir, mode, url) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [path.join(dir, 'tracing.mjs'), 'child', mode, url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (chunk) => (out += chunk));
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${mode} child exited ${code}`))));
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  if (process.argv[2] === 'child') return child(process.argv[3], process.argv[4]);
  const variants = [
    { name: 'off', dir: here, mode: 'off' },
    { name: 'otel', dir: here, mode: 'otel' },
  ];
  if (process.env.TRACING_BASELINE) variants.push({ name: 'baseline', dir: path.resolve(process.env.TRACING_BASELINE), mode: 'off' });
  const mock = await startMock();
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
    Object.entries(results).map(([name, rs]) => [
      name,
      { ms: median(rs.map((r) => r.ms)), cpuUs: median(rs.map((r) => r.cpuUs)), rounds: rs },
    ]),
  );
  console.log(`${REQUESTS} requests per child after ${WARMUP} warm-up, ${ROUNDS} rounds, medians over rounds:`);
  for (const [name, s] of Object.entries(summary))
    console.log(`${name.padEnd(9)} wall ${s.ms.toFixed(3)} ms/run   client CPU ${s.cpuUs.toFixed(0)} µs/run`);
  if (summary.baseline) {
    console.log(
      `off vs baseline: wall ${((summary.off.ms / summary.baseline.ms - 1) * 100).toFixed(1)} %, CPU ${((summary.off.cpuUs / summary.baseline.cpuUs - 1) * 100).toFixed(1)} %`,
    );
  }
  console.log(
    `otel vs off: +${(summary.otel.ms - summary.off.ms).toFixed(3)} ms wall, +${(summary.otel.cpuUs - summary.off.cpuUs).toFixed(0)} µs CPU per run`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
