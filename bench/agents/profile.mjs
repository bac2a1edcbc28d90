// Where one framework's per-request time goes: runs it against a fresh mock for
// BENCH_PROFILE_REQUESTS requests under the V8 CPU profiler and prints self time grouped
// by where the code lives (the library's own files one by one, packages by name).
// Usage: node profile.mjs <framework-key>   (writes build/<key>.cpuprofile too)
// BENCH_PROFILE_CONCURRENCY (default 1) keeps that many requests in flight, as the
// throughput phase does.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { FRAMEWORKS } from './frameworks.mjs';
import { startMock } from './mock-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const framework = FRAMEWORKS.find((f) => f.key === process.argv[2]);
if (!framework) throw new Error(`usage: node profile.mjs <${FRAMEWORKS.map((f) => f.key).join('|')}>`);
const requests = Number(process.env.BENCH_PROFILE_REQUESTS ?? 2000);
const concurrency = Number(process.env.BENCH_PROFILE_CONCURRENCY ?? 1);

const mock = await startMock();
const { url } = mock;
try {
  const { create } = await import(pathToFileURL(framework.file).href);
  const ask = await create(url);
  for (let i = 0; i < 200; i++) await ask();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const t = performance.now();
  let started = 0;
  const worker = async () => {
    while (started < requests) {
      started++;
      await ask();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - t;
  const { profile } = await session.post('Profiler.stop');
  mkdirSync(path.join(here, 'build'), { recursive: true });
  writeFileSync(path.join(here, `build/${framework.key}.cpuprofile`), JSON.stringify(profile));
  summarize(profile, elapsed);
} finally {
  mock.stop();
}

function where(frame) {
  const url = frame.url || '';
  if (!url)
    return frame.functionName === '(garbage collector)'
      ? '(gc)'
      : frame.functionName === '(idle)'
        ? '(idle: waiting on the mock)'
        : `(${frame.functionName || 'native'})`;
  const dist = url.indexOf('/dist/');
  if (dist >= 0 && !url.includes('/node_modules/')) return `toolnexus-ts dist/${url.slice(dist + '/dist/'.length)}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith('node:'))
    return url.includes('undici') || url.includes('fetch') ? 'node: undici (fetch)' : `node: ${url.slice(5).split('/')[0]}`;
  return path.relative(here, fileURLToPath(url.startsWith('file:') ? url : pathToFileURL(url)));
}

function summarize(profile, elapsed) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const key = where(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + (deltas[i] ?? 0) / 1000);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  console.log(
    `${framework.label}: ${requests} requests in ${elapsed.toFixed(0)} ms (${(elapsed / requests).toFixed(3)} ms each); self time by place:`,
  );
  const line = (key, ms) =>
    console.log(
      `  ${((ms / requests) * 1000).toFixed(1).padStart(8)} µs/request  ${((ms / total) * 100).toFixed(1).padStart(5)} %  ${key}`,
    );
  for (const [key, ms] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 25)) line(key, ms);
  const groups = {
    'toolnexus-ts dist/* (all files)': (k) => k.startsWith('toolnexus-ts dist/'),
    'class-validator + class-transformer + reflect-metadata': (k) =>
      ['class-validator', 'class-transformer', 'reflect-metadata'].includes(k),
    'node: undici (fetch) + node: internal + (writev)': (k) => ['node: undici (fetch)', 'node: internal', '(writev)'].includes(k),
  };
  console.log('  totals:');
  for (const [name, test] of Object.entries(groups))
    line(
      name,
      [...self].filter(([k]) => test(k)).reduce((a, [, ms]) => a + ms, 0),
    );
}
