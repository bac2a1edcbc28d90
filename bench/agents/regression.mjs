// The runner against an earlier build of itself, in ONE process, interleaved (docs/performance.md,
// "Before merging a runner change"): `run()`, `stream()` and a durable run (`durability: 'step'`),
// each built from this checkout's dist/ and from a base build's, asked in turn round after round,
// so whatever else the machine does lands on both alike. Two measures per path:
//
//   own   the runner's own time per run, no HTTP: a scripted in-process model (two tool calls,
//         then the answer), the two validated tools of the bench, one run at a time; µs a run
//   http  the same run against the bench's mock (a child process) over node:http; wall time
//         and client CPU a run
//
// and, for this build alone, `configured`: stream() with a no-op output guardrail holding back
// by turn, a budget and a caller's signal (cancel) all configured, against the same stream()
// with nothing configured.
//
// The base: `--base <commit>` (default `main`) is checked out with `git worktree add` into a
// temp folder and built there (`npm run build`, node_modules linked from this checkout; kept for
// the next time), or `--base-dir <path>` names a checkout whose dist/ is built.
//
//   npm run build && node bench/agents/regression.mjs --base main
//
// Knobs: BENCH_ROUNDS (12), BENCH_OWN_RUNS (1000 a batch), BENCH_HTTP_RUNS (150 a batch),
// BENCH_WARMUP (2000 own, and a fifth of it over HTTP), BENCH_PATHS (run,stream,durable,configured),
// BENCH_NO_HTTP=1 (the own time alone). Not a test: nothing here fails a build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMock } from './mock-process.mjs';
import { median } from './stats.mjs';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const scenario = require('./scenario.cjs');

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const OWN_RUNS = Number(process.env.BENCH_OWN_RUNS ?? 1000);
const HTTP_RUNS = Number(process.env.BENCH_HTTP_RUNS ?? 150);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2000);
const PATHS = (process.env.BENCH_PATHS ?? 'run,stream,durable,configured').split(',');
const NO_HTTP = process.env.BENCH_NO_HTTP === '1';

/** The argument after `flag`, if given. */
function arg(flag) {
  const at = process.argv.indexOf(flag);
  return at < 0 ? undefined : process.argv[at + 1];
}

/** A checkout of `ref` in a temp folder, built; reused when it is there already. */
function baseCheckout(ref) {
  const sha = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).trim();
  const dir = path.join(os.tmpdir(), `tnx-bench-base-${sha.slice(0, 12)}`);
  if (!existsSync(path.join(dir, 'package.json'))) {
    mkdirSync(path.dirname(dir), { recursive: true });
    execFileSync('git', ['worktree', 'add', '--detach', dir, sha], { cwd: root, stdio: 'inherit' });
  }
  if (!existsSync(path.join(dir, 'node_modules'))) symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  if (!existsSync(path.join(dir, 'dist/runner/index.js'))) execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: 'inherit' });
  return { dir, label: `${ref} (${sha.slice(0, 9)})` };
}

/** One build's library: the root, the runner and the models, from `dir`/dist. */
function load(dir) {
  const dist = path.join(dir, 'dist');
  return {
    ...require(path.join(dist, 'index.js')),
    ...require(path.join(dist, 'runner/index.js')),
    ...require(path.join(dist, 'models/index.js')),
  };
}

/** The bench's two tools (bench/agents/frameworks/tools.ts) made with one build's decorators, as tsc emits them. */
function toolsOf(lib) {
  const { IsNumber, IsString } = require('class-validator');
  const type = (t) => Reflect.metadata('design:type', t);
  class WeatherArgs {}
  Reflect.decorate([IsString(), lib.Describe(scenario.WEATHER.city), type(String)], WeatherArgs.prototype, 'city', undefined);
  class GetWeatherTool {
    run(args) {
      return scenario.getWeather(args);
    }
  }
  Reflect.decorate(
    [lib.Tool({ name: scenario.WEATHER.name, description: scenario.WEATHER.description, args: WeatherArgs })],
    GetWeatherTool,
  );
  class AddArgs {}
  Reflect.decorate([IsNumber(), lib.Describe(scenario.ADD.a), type(Number)], AddArgs.prototype, 'a', undefined);
  Reflect.decorate([IsNumber(), lib.Describe(scenario.ADD.b), type(Number)], AddArgs.prototype, 'b', undefined);
  class AddTool {
    run(args) {
      return scenario.add(args);
    }
  }
  Reflect.decorate([lib.Tool({ name: scenario.ADD.name, description: scenario.ADD.description, args: AddArgs })], AddTool);
  return new lib.Toolkit().register(GetWeatherTool, AddTool);
}

const USAGE = { inputTokens: 20, outputTokens: 10 };

/** A model answered in process, as the mock answers over HTTP: the two calls, then the final text. */
function scriptedModel() {
  let n = 0;
  return {
    provider: 'scripted',
    complete(request) {
      const last = request.messages[request.messages.length - 1];
      if (last.role !== 'tool') {
        n++;
        return Promise.resolve({
          text: '',
          toolCalls: [
            { id: `w${n}`, name: 'get_weather', arguments: '{"city":"Paris"}' },
            { id: `a${n}`, name: 'add', arguments: '{"a":2,"b":3}' },
          ],
          usage: USAGE,
        });
      }
      return Promise.resolve({ text: scenario.FINAL_TEXT, toolCalls: [], usage: USAGE });
    },
  };
}

const allow = () => ({ action: 'allow' });
/** One caller's signal for every configured run: a long-lived signal, as a server's shutdown switch is. */
const callerSignal = new AbortController().signal;

/** One way of asking a runner, by path. */
function asker(lib, model, pathName) {
  const toolkit = toolsOf(lib);
  const base = { model, toolkit, systemPrompt: scenario.SYSTEM_PROMPT, maxTurns: 5 };
  const check = (status) => {
    if (status !== 'done') throw new Error(`${pathName} ended ${status}`);
  };
  const streamed = (runner, options) => async () => {
    let status = '';
    for await (const event of runner.stream(scenario.PROMPT, options)) if (event.type === 'done') status = event.result.status;
    check(status);
  };
  if (pathName === 'run') {
    const runner = new lib.AgentRunner(base);
    return async () => check((await runner.run(scenario.PROMPT)).status);
  }
  if (pathName === 'durable') {
    const runner = new lib.AgentRunner({ ...base, durability: 'step' });
    return async () => check((await runner.run(scenario.PROMPT)).status);
  }
  if (pathName === 'stream') return streamed(new lib.AgentRunner(base), {});
  if (pathName === 'configured') {
    const runner = new lib.AgentRunner({
      ...base,
      guardrails: { output: [allow], holdBack: 'turn' },
      budget: { totalTokens: 1_000_000, toolCalls: 1_000, wallMs: 3_600_000 },
    });
    return streamed(runner, { signal: callerSignal });
  }
  throw new Error(`unknown path ${pathName}`);
}

/** Runs `ask` `n` times one after the other: µs of wall time and of client CPU a run. */
async function batch(ask, n) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await ask();
  const wall = ((performance.now() - t0) * 1000) / n;
  const cpu = process.cpuUsage(cpu0);
  return { wall, cpu: (cpu.user + cpu.system) / n };
}

/** Each variant's batches, round after round, the order rotated, with per-round ratios to `pairs`. */
async function measure(variants, runs, warmup) {
  for (const v of variants) for (let i = 0; i < warmup; i++) await v.ask();
  const seen = new Map(variants.map((v) => [v.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]);
    for (const v of order) seen.get(v.name).push(await batch(v.ask, runs));
  }
  return seen;
}

const fmt = (x, digits = 1) => x.toFixed(digits);

function report(title, variants, seen, pairs) {
  console.log(`\n${title}`);
  console.log('| variant | wall µs a run | CPU µs a run | ratio (paired by round) | against |');
  console.log('|---|---:|---:|---:|---|');
  for (const v of variants) {
    const rows = seen.get(v.name);
    const against = pairs[v.name];
    let ratio = '';
    if (against) {
      const other = seen.get(against);
      const wall = median(rows.map((r, i) => r.wall / other[i].wall));
      const cpu = median(rows.map((r, i) => r.cpu / other[i].cpu));
      ratio = `${fmt(wall, 3)}× wall, ${fmt(cpu, 3)}× CPU`;
    }
    console.log(
      `| ${v.name} | ${fmt(median(rows.map((r) => r.wall)))} | ${fmt(median(rows.map((r) => r.cpu)))} | ${ratio} | ${against ?? ''} |`,
    );
  }
}

/**
 * `--instructions`: the own time's runs counted in machine instructions under valgrind's
 * callgrind instead of timed, which no other work on the machine moves (a timed ratio on a
 * shared 2-core machine scatters by more than a runner change is worth). Each build and path
 * runs in a child process twice, with WARMUP runs and then INSTRUCTION_RUNS more or none; the
 * difference over INSTRUCTION_RUNS is a run's count. V8 is kept to one thread
 * (`--single-threaded`) so that no compiler or GC thread adds its own. Repeats of one build
 * differed by 1–7 % on this bench's machine: a change smaller than that needs several runs.
 */
const INSTRUCTION_RUNS = Number(process.env.BENCH_INSTRUCTION_RUNS ?? 4000);

/** Instructions a run of `pathName` from the build in `dir`, counted under callgrind. */
function instructionsPerRun(dir, pathName) {
  const total = (runs) => {
    const result = spawnSync(
      'valgrind',
      ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--single-threaded', fileURLToPath(import.meta.url)].concat([
        '--count-child',
        dir,
        pathName,
        String(WARMUP),
        String(runs),
      ]),
      { encoding: 'utf8' },
    );
    const found = /I\s+refs:\s+([\d,]+)/.exec(result.stderr ?? '');
    if (result.status !== 0 || !found) throw new Error(`valgrind failed (is it installed?): ${result.error?.message ?? result.stderr}`);
    return Number(found[1].replaceAll(',', ''));
  };
  return (total(INSTRUCTION_RUNS) - total(0)) / INSTRUCTION_RUNS;
}

/** The child of {@link instructionsPerRun}: WARMUP + runs of one path, nothing printed. */
async function countChild() {
  const at = process.argv.indexOf('--count-child');
  const [dir, pathName, warm, runs] = process.argv.slice(at + 1);
  const ask = asker(load(dir), scriptedModel(), pathName);
  for (let i = 0; i < Number(warm) + Number(runs); i++) await ask();
}

async function instructions(base) {
  console.log(
    `node ${process.version}; current ${root}; base ${base.label}; instructions a run under callgrind (${INSTRUCTION_RUNS} runs after ${WARMUP})`,
  );
  console.log('\n| path | base | current | current ÷ base |\n|---|---:|---:|---:|');
  for (const p of PATHS.filter((name) => name !== 'configured')) {
    const before = instructionsPerRun(base.dir, p);
    const after = instructionsPerRun(root, p);
    console.log(
      `| \`${p}\` | ${Math.round(before).toLocaleString('en')} | ${Math.round(after).toLocaleString('en')} | ${(after / before).toFixed(3)}× |`,
    );
  }
}

async function main() {
  if (process.argv.includes('--count-child')) return countChild();
  const baseDir = arg('--base-dir');
  const base = baseDir ? { dir: path.resolve(baseDir), label: path.resolve(baseDir) } : baseCheckout(arg('--base') ?? 'main');
  if (!existsSync(path.join(root, 'dist/runner/index.js'))) throw new Error(`${root}/dist is not built: npm run build`);
  if (process.argv.includes('--instructions')) return instructions(base);
  const builds = { current: load(root), base: load(base.dir) };
  console.log(`node ${process.version}; current ${root}; base ${base.label}; ${ROUNDS} rounds`);

  const variantsOf = (modelOf) => {
    const variants = [];
    const pairs = {};
    for (const p of PATHS) {
      if (p === 'configured') {
        variants.push({ name: 'current configured', ask: asker(builds.current, modelOf(builds.current), 'configured') });
        pairs['current configured'] = 'current stream';
        if (!PATHS.includes('stream'))
          variants.push({ name: 'current stream', ask: asker(builds.current, modelOf(builds.current), 'stream') });
        continue;
      }
      variants.push({ name: `base ${p}`, ask: asker(builds.base, modelOf(builds.base), p) });
      variants.push({ name: `current ${p}`, ask: asker(builds.current, modelOf(builds.current), p) });
      pairs[`current ${p}`] = `base ${p}`;
    }
    return { variants, pairs };
  };

  const own = variantsOf(() => scriptedModel());
  report('The runner’s own time (no HTTP, one run at a time)', own.variants, await measure(own.variants, OWN_RUNS, WARMUP), own.pairs);

  if (NO_HTTP) return;
  const mock = await startMock({ MOCK_STREAM: '1' });
  try {
    const http = variantsOf((lib) => new lib.OpenAIChatModel({ baseUrl: mock.url, apiKey: scenario.API_KEY, model: scenario.MODEL }));
    const seen = await measure(http.variants, HTTP_RUNS, Math.ceil(WARMUP / 5));
    report('Over HTTP (the bench’s mock in a child process, one run at a time)', http.variants, seen, http.pairs);
  } finally {
    mock.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
