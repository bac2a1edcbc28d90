// Where the root entry's import time goes, module by module (issue 26): fresh `node` processes
// load the three mandatory peers, then dist/index.js under a require hook that times each
// module the library loads (its own time: load and compile, minus the modules it loads in
// turn), node builtins included. Prints the median per module summed by folder, then the
// slowest modules. A hook adds its own overhead to every module: read the shares, and take
// the cost itself from `npm run bench:import`.
// Usage: npm run build && node bench/import-modules.cjs [processes=9] [dist folder=dist]
'use strict';
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const processes = Number(process.argv[2] ?? 9);
const dist = path.resolve(root, process.argv[3] ?? 'dist');

// The child: peers, then the hook, then the library; one JSON object of module → ms on stdout.
const child = `
const Module = require('node:module');
require('reflect-metadata'); require('class-validator'); require('class-transformer');
const load = Module._load;
const stack = [];
const own = {};
Module._load = function (request, parent, isMain) {
  let id;
  try { id = Module._resolveFilename(request, parent, isMain); } catch { id = request; }
  if (id in require.cache || id in own || (!id.includes('/') && process.moduleLoadList.includes('NativeModule ' + id.replace(/^node:/, '')))) {
    return load.apply(this, arguments);
  }
  const frame = { children: 0 };
  stack.push(frame);
  const t0 = process.hrtime.bigint();
  try {
    return load.apply(this, arguments);
  } finally {
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    stack.pop();
    if (stack.length > 0) stack[stack.length - 1].children += ms;
    own[id] = ms - frame.children;
  }
};
require(${JSON.stringify(path.join(dist, 'index.js'))});
process.stdout.write(JSON.stringify(own));
`;

const samples = new Map();
for (let i = 0; i < processes; i++) {
  // The program on stdin, not -e: -e loads node:crypto before it runs (bench/import.mjs).
  const own = JSON.parse(execFileSync(process.execPath, ['-'], { cwd: root, input: child, encoding: 'utf8' }));
  for (const [id, ms] of Object.entries(own)) samples.set(id, [...(samples.get(id) ?? []), ms]);
}
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const rows = [...samples].map(([id, values]) => ({
  id: path.relative(dist, id).startsWith('..') ? id : path.relative(dist, id),
  ms: median(values),
}));
const folders = new Map();
for (const { id, ms } of rows) {
  const folder = id.includes('/') ? path.dirname(id) : id;
  const entry = folders.get(folder) ?? { folder, modules: 0, ms: 0 };
  entry.modules++;
  entry.ms += ms;
  folders.set(folder, entry);
}
const total = rows.reduce((sum, row) => sum + row.ms, 0);
console.log(
  `${rows.length} modules loaded by ${path.relative(root, dist)}/index.js after the peers; ${total.toFixed(1)} ms under the hook (medians of ${processes} processes)`,
);
console.table(
  [...folders.values()].sort((a, b) => b.ms - a.ms).map((f) => ({ folder: f.folder, modules: f.modules, ms: f.ms.toFixed(2) })),
);
console.table(
  rows
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 12)
    .map((r) => ({ module: r.id, ms: r.ms.toFixed(2) })),
);
