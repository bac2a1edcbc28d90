#!/usr/bin/env node
/**
 * The Chromium the browser tests drive (test/fixtures/browser.ts, through playwright-core), and
 * where it came from. Prints one line, `<path>\t<where it came from>\t<version>`:
 *
 *   node scripts/chromium.js
 *
 * In this order:
 * 1. `CHROMIUM_PATH`: the binary it names.
 * 2. The machine's own Chromium (`chromium` or `chromium-browser` on PATH, e.g. Debian's
 *    package), unless `TOOLNEXUS_CHROMIUM=bundled`, which skips it (so the next one is tested
 *    on a machine that has both).
 * 3. The Chromium the `@sparticuz/chromium` devDependency ships inside its package, brotli
 *    compressed, so `npm install` brings it with no download of its own (the only network a
 *    machine may have is the npm registry's). It is inflated once into
 *    `${TOOLNEXUS_CACHE:-~/.cache/toolnexus-ts}/chromium-<package version>` (about 5 s), a
 *    folder of the user running the tests, so root and a normal user each get one they own.
 *
 * None found is an error that says what to do: the browser tests never skip in silence.
 */
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const PACKAGE = '@sparticuz/chromium';

/** The first of `names` on PATH that is an executable file, or undefined. */
function onPath(names) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** Where the packaged Chromium is inflated, for this package version (whether or not it is there yet). */
function bundledFolder(version) {
  const cache = process.env.TOOLNEXUS_CACHE || path.join(os.homedir(), '.cache', 'toolnexus-ts');
  return path.join(cache, `chromium-${version}`);
}

/**
 * The packaged Chromium's path, inflated unless it is there. The package inflates into
 * `os.tmpdir()`, and treats any file already at `<tmpdir>/chromium` as done: so it runs in a
 * child whose TMPDIR is a private staging folder, renamed into place once complete, and two
 * runs at once (or one killed half-way) never leave or use half a binary.
 */
function bundled() {
  let manifest;
  try {
    manifest = require.resolve(`${PACKAGE}/package.json`);
  } catch {
    // The package's "exports" may not list package.json: find it from the entry.
    manifest = path.join(path.dirname(require.resolve(PACKAGE)), '..', 'package.json');
  }
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  const folder = bundledFolder(version);
  const binary = path.join(folder, 'chromium');
  if (fs.existsSync(binary)) return { path: binary, from: `${PACKAGE} ${version}` };
  fs.mkdirSync(path.dirname(folder), { recursive: true });
  const staging = `${folder}.${process.pid}.tmp`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging);
  try {
    // The package is an ES module: imported by URL from a child node, which prints the path.
    const entry = require('node:url').pathToFileURL(require.resolve(PACKAGE)).href;
    const script = 'const { default: c } = await import(process.argv[1]); process.stdout.write(await c.executablePath());';
    const inflated = execFileSync(process.execPath, ['--input-type=module', '-e', script, entry], {
      env: { ...process.env, TMPDIR: staging, TMP: staging, TEMP: staging },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    });
    if (path.resolve(inflated) !== path.join(staging, 'chromium'))
      throw new Error(`${PACKAGE} inflated Chromium to ${inflated}, not into ${staging}`);
    try {
      fs.renameSync(staging, folder);
    } catch (error) {
      // Another run put its folder there first: that one is as good.
      if (!fs.existsSync(binary)) throw error;
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { path: binary, from: `${PACKAGE} ${version}` };
}

/** What `binary --version` says ("Chromium 153.0.8010.0"), or why it could not run. */
function versionOf(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 }).trim();
  } catch (error) {
    const detail = String(error.stderr || error.message)
      .trim()
      .split('\n')[0];
    // The packaged build needs NSS and NSPR from the system (present on Debian with most desktops' libraries).
    const hint = /shared librar/.test(detail) ? ' (on Debian: apt-get install libnss3)' : '';
    throw new Error(`${binary} does not run: ${detail}${hint}`);
  }
}

/**
 * The Chromium to use: `{ path, from, version }`, `from` saying where it came from. Throws an
 * error that says what to do when there is none, or it does not run.
 */
function resolveChromium() {
  let found;
  if (process.env.CHROMIUM_PATH) found = { path: process.env.CHROMIUM_PATH, from: 'CHROMIUM_PATH' };
  else {
    const system = process.env.TOOLNEXUS_CHROMIUM === 'bundled' ? undefined : onPath(['chromium', 'chromium-browser']);
    if (system) found = { path: system, from: "the system's" };
    else {
      try {
        found = bundled();
      } catch (error) {
        throw new Error(
          `no Chromium for the browser tests: none on PATH, and ${PACKAGE} (a devDependency) could not be used: ${error.message}. ` +
            'Run npm install, or name a Chromium binary in CHROMIUM_PATH.',
        );
      }
    }
  }
  return { ...found, version: versionOf(found.path) };
}

module.exports = { resolveChromium };

if (require.main === module) {
  try {
    const chromium = resolveChromium();
    process.stdout.write(`${chromium.path}\t${chromium.from}\t${chromium.version}\n`);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
