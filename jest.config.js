/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  moduleNameMapper: { '^toolnexus-ts$': '<rootDir>/src/index.ts', '^toolnexus-ts/(.*)$': '<rootDir>/src/$1' },
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/scripts/jest-summary-line.js'],
};
