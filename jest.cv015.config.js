// The DTO and schema tests again with class-validator 0.15 (the peer range admits ^0.14.0 ||
// ^0.15.0; the main run uses the 0.14 devDependency). `class-validator-0.15` is an npm alias of
// class-validator@0.15, so every import of class-validator — the tests', src's, and the
// fixtures' — resolves to it here. .ci/run runs it: `npx jest -c jest.cv015.config.js`.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/schema', '<rootDir>/test/toolkit'],
  moduleNameMapper: {
    ...base.moduleNameMapper,
    '^class-validator$': 'class-validator-0.15',
    '^class-validator/(.*)$': 'class-validator-0.15/$1',
  },
  // Fails the run at once if the mapping did not take (the tests would pass on 0.14 and prove nothing).
  setupFiles: ['<rootDir>/test/fixtures/class-validator-0.15.js'],
  // These suites need no PostgreSQL.
  globalSetup: undefined,
  globalTeardown: undefined,
  // Its last line is not shaped like the main run's "N passed, N failed" summary, which CI reads as the test count.
  reporters: ['default', ['<rootDir>/scripts/jest-summary-line.js', { label: 'class-validator 0.15' }]],
};
