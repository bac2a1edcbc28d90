/**
 * Which test files `npm test` runs. By default the quick set: every file but the ones below,
 * the slowest, which re-prove on real processes, compilers and generated input what the quick
 * set proves in-process (on a busy 2-core machine the whole suite took about 25 minutes, the
 * quick set 5.5 to 12.5, by how busy, using some 3 minutes of CPU). `TOOLNEXUS_TESTS=all npm test` runs every file; .ci/run does so, and the
 * Node 22 and 20 runs (jest.older-node.config.js) take every file they can load.
 *
 * Each entry is a jest `testPathIgnorePatterns` regular expression and why it waits for the
 * full run. jest.config.js reads them; scripts/jest-summary-line.js says how many files a quick
 * run left out and how to run them, so nothing is left out in silence.
 */
'use strict';

/** @type {Array<{ pattern: string, why: string }>} */
const FULL_ONLY = [
  // Real child processes killed at the worst moment, leases left to lapse, two servers racing.
  { pattern: '<rootDir>/test/.*\\.process\\.test\\.ts$', why: 'crash and multi-process' },
  { pattern: '<rootDir>/test/runner/crash(\\.postgres)?\\.test\\.ts$', why: 'crash and multi-process' },
  // Every ```ts block of docs/ compiled, and the docs' programs run.
  { pattern: '<rootDir>/test/docs/', why: 'the docs compiled and run' },
  { pattern: '<rootDir>/test/.*/docs\\.test\\.ts$', why: 'the docs compiled and run' },
  // Generated input by the thousand, and the deadline races of hostile tools.
  { pattern: '<rootDir>/test/toolkit/(hostile\\.fuzz|fuzz|hostile-deadlines|argument-bounds)\\.test\\.ts$', why: 'fuzz and bounds' },
  // A full tsc build of the package, its own embedded PostgreSQL, PostgreSQL's faults injected, DBOS's runtime.
  { pattern: '<rootDir>/test/package/root-loads\\.test\\.ts$', why: 'builds and servers of their own' },
  {
    pattern: '<rootDir>/test/stores/(embedded-postgres-private-folder|postgres\\.faults|memory-clock)\\.test\\.ts$',
    why: 'builds and servers of their own',
  },
  { pattern: '<rootDir>/test/dbos/', why: 'builds and servers of their own' },
  // The slowest front-door and adapter files, each with a quicker sibling in the quick set
  // (cli/serve and setup-mistakes, a2a/serve, ai-sdk-model, langchain, mcp/source and its
  // other hostile servers, the inbox page in test/inbox/browser*.test.ts).
  { pattern: '<rootDir>/test/cli/(cli|prune|runs-cancel)\\.test\\.ts$', why: 'slowest doors and adapters' },
  { pattern: '<rootDir>/test/nest/inbox-defaults\\.test\\.ts$', why: 'slowest doors and adapters' },
  { pattern: '<rootDir>/test/mcp/source-hostile-notifications\\.test\\.ts$', why: 'slowest doors and adapters' },
  { pattern: '<rootDir>/test/a2a/bounds\\.test\\.ts$', why: 'slowest doors and adapters' },
  { pattern: '<rootDir>/test/adapters/(ai-sdk-tools|openai-agents)\\.test\\.ts$', why: 'slowest doors and adapters' },
  { pattern: '<rootDir>/test/mcp/source-config\\.test\\.ts$', why: 'slowest doors and adapters' },
];

/**
 * Whether this jest run leaves FULL_ONLY out: not with `TOOLNEXUS_TESTS=all`, and not when the
 * command line names test files (`npx jest test/suspension/leases.process.test.ts`), which
 * jest's ignore patterns would otherwise turn into "no tests found".
 */
function quickRun(argv = process.argv.slice(2)) {
  if (process.env.TOOLNEXUS_TESTS === 'all') return false;
  return !argv.some((arg) => !arg.startsWith('-') && (/\.test\.ts$/.test(arg) || /^(\.\/)?test\//.test(arg)));
}

/** The test files of `rootDir` that FULL_ONLY names (what a quick run leaves out). */
function fullOnlyFiles(rootDir) {
  const fs = require('node:fs');
  const path = require('node:path');
  const patterns = FULL_ONLY.map(({ pattern }) => new RegExp(pattern.replace('<rootDir>', rootDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))));
  const found = [];
  (function walk(dir) {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.test.ts') && patterns.some((pattern) => pattern.test(file))) found.push(file);
    }
  })(path.join(rootDir, 'test'));
  return found;
}

module.exports = { FULL_ONLY, quickRun, fullOnlyFiles };
