const { exports: entries } = require('./package.json');

function entryMap() {
  const map = {};
  for (const [entry, target] of Object.entries(entries)) {
    if (typeof target === 'string') continue;
    const name = entry === '.' ? 'toolnexus-ts' : 'toolnexus-ts/' + entry.slice(2);
    map['^' + name + '$'] = '<rootDir>/' + target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
  }
  return map;
}

// better-sqlite3 is no devDependency: the tests take it from the folder jest's global setup
// installs it in (scripts/better-sqlite3.js), or from TOOLNEXUS_BETTER_SQLITE3.
const betterSqlite3 = process.env.TOOLNEXUS_BETTER_SQLITE3 || require('./scripts/better-sqlite3.js').packagePath().package;

// `npm test` runs the quick set; TOOLNEXUS_TESTS=all (which .ci/run sets) every file
// (scripts/test-sets.js says which files wait for the full run, and why).
const testSets = require('./scripts/test-sets.js');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', ...(testSets.quickRun() ? testSets.FULL_ONLY.map(({ pattern }) => pattern) : [])],
  // tsconfig.json plus isolatedModules: ts-jest then transpiles each file alone, and `npm run typecheck` is what checks types.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }] },
  // Each entry of package.json's "exports" maps to its source (dist/x/index.js → src/x/index.ts).
  moduleNameMapper: { ...entryMap(), '^better-sqlite3$': betterSqlite3 },
  testTimeout: 60000,
  // better-sqlite3 for this Node.js, then one embedded PostgreSQL for the whole run unless
  // TOOLNEXUS_PG_URL names a server (test/fixtures/global-setup.ts).
  globalSetup: '<rootDir>/test/fixtures/global-setup.ts',
  globalTeardown: '<rootDir>/test/fixtures/pg/global-teardown.ts',
  reporters: ['default', '<rootDir>/scripts/jest-summary-line.js'],
  // In CI a handle some test leaked must not hold the run open until CI's own limit ends it
  // (it did once, after two failures on Node 22): the summary is written, then the run exits.
  // Locally jest's "did not exit" warning still names the leak.
  forceExit: process.env.CI === 'true',
};
