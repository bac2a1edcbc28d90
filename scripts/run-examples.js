#!/usr/bin/env node
// Runs every compiled example (examples/*.ts and examples/*/main.ts) in its own process, so
// none can rot: a non-zero exit, or one that takes over two minutes, fails the run.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const compiled = path.join(root, 'dist-examples', 'examples');
const entries = [];
for (const name of readdirSync(path.join(root, 'examples')).sort()) {
  const full = path.join(root, 'examples', name);
  if (statSync(full).isDirectory()) {
    if (existsSync(path.join(full, 'main.ts'))) entries.push(path.join(compiled, name, 'main.js'));
  } else if (name.endsWith('.ts')) {
    entries.push(path.join(compiled, name.replace(/\.ts$/, '.js')));
  }
}
let failed = 0;
for (const entry of entries) {
  const label = path.relative(compiled, entry);
  const started = Date.now();
  const run = spawnSync(process.execPath, [entry], { cwd: root, encoding: 'utf8', timeout: 120_000 });
  const ok = run.status === 0;
  console.log(`${ok ? 'ok  ' : 'FAIL'} example ${label} (${Date.now() - started} ms)`);
  if (!ok) {
    failed++;
    process.stdout.write(run.stdout ?? '');
    process.stderr.write(run.stderr ?? '');
    if (run.error) console.error(run.error.message);
  }
}
// Worded unlike a test summary: CI reads the tests' closing line as the count.
console.log(failed === 0 ? `all ${entries.length} examples ran` : `${failed} of ${entries.length} examples failed`);
process.exit(failed === 0 ? 0 : 1);
