// Import cost of the root entry, in one run: fresh `node` processes, alternating, that load
// the three mandatory peers (reflect-metadata, class-validator, class-transformer) WITHOUT
// the library, and the same peers WITH `require('toolnexus-ts')` (dist/index.js) after them.
// Reported: the medians of each (wall and CPU), their difference (the library's own import
// cost; target ≤ 15 ms), with ÷ without, and how many of the library's modules the root loads.
// Usage: npm run build && node bench/import.mjs [rounds=15]
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const rounds = Number(process.argv[2] ?? 15);

// The child: peers first, then (with) the library; times and module count on stdout.
const child = (withLibrary) => `
const path = require('node:path');
const c0 = process.cpuUsage(); const t0 = performance.now();
require('reflect-metadata'); require('class-validator'); require('class-transformer');
const before = new Set(Object.keys(require.cache));
${withLibrary ? `require(${JSON.stringify(join(root, 'dist', 'index.js'))});` : ''}
const t1 = performance.now(); const c1 = process.cpuUsage();
const dist = ${JSON.stringify(join(root, 'dist') + '/')};
const modules = Object.keys(require.cache).filter((k) => !before.has(k) && k.startsWith(dist)).length;
process.stdout.write(JSON.stringify({ ms: t1 - t0, cpuMs: (c1.user - c0.user + c1.system - c0.system) / 1000, modules }));
`;

// The child's program comes on stdin (`node -`), not `-e`: Node's `-e` loads node:crypto before
// the program runs, which would hide the cost of a library that loads it (every `.js` a user
// runs starts without it).
const run = (withLibrary) => JSON.parse(execFileSync(process.execPath, ['-'], { cwd: root, input: child(withLibrary), encoding: 'utf8' }));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

run(false); // warm the file cache
run(true);
const without = [];
const withLib = [];
for (let i = 0; i < rounds; i++) {
  // Alternate which goes first, so drift on a shared machine falls on both alike.
  if (i % 2 === 0) {
    without.push(run(false));
    withLib.push(run(true));
  } else {
    withLib.push(run(true));
    without.push(run(false));
  }
}
const row = (name, samples) => ({
  name,
  ms: median(samples.map((s) => s.ms)),
  cpuMs: median(samples.map((s) => s.cpuMs)),
});
const a = row('peers only (without)', without);
const b = row('peers + toolnexus-ts (with)', withLib);
console.log(`import cost of the root entry, ${rounds} fresh processes each, medians`);
console.table([a, b].map((r) => ({ name: r.name, 'wall ms': r.ms.toFixed(1), 'CPU ms': r.cpuMs.toFixed(1) })));
console.log(
  `the library's own cost: +${(b.ms - a.ms).toFixed(1)} ms wall (with ÷ without ${(b.ms / a.ms).toFixed(2)}×), ` +
    `+${(b.cpuMs - a.cpuMs).toFixed(1)} ms CPU (${(b.cpuMs / a.cpuMs).toFixed(2)}×); ` +
    `${withLib[0].modules} of its modules loaded; target ≤ 15 ms above the peers`,
);
