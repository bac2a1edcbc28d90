/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // tsconfig.json plus isolatedModules: ts-jest then transpiles each file alone, and `npm run typecheck` is what checks types.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }] },
  moduleNameMapper: { '^toolnexus-ts$': '<rootDir>/src/index.ts', '^toolnexus-ts/(.*)$': '<rootDir>/src/$1' },
  testTimeout: 60000,
  // One embedded PostgreSQL for the whole run unless TOOLNEXUS_PG_URL names a server (test/fixtures/pg/global-setup.ts).
  globalSetup: '<rootDir>/test/fixtures/pg/global-setup.ts',
  globalTeardown: '<rootDir>/test/fixtures/pg/global-teardown.ts',
  reporters: ['default', '<rootDir>/scripts/jest-summary-line.js'],
};
