// The suite on Node 22 and 20 (.ci/run runs it after the main run on Node 24), less two groups:
// - Nest's test files, and test/di/docs.test.ts, which runs the Nest doc program. NestJS 12
//   ships ES modules only; Node itself require()s them on 20.19+ and 22.12+ (the engines
//   range), but jest's own module loader can only do so on Node 24.9+ with
//   --experimental-vm-modules (the "test" script). test/package/exports.test.ts still loads
//   toolnexus-ts/nest, and so Nest 12, in a real child process on these Nodes.
// - test/a2a/agent-tool-options.test.ts, which loads toolnexus-ts/a2a in jest: @a2a-js/sdk's
//   CommonJS build require()s jose, an ES module, the same limit as Nest's. Every other A2A test
//   runs the entry in real child processes, and runs on these Nodes.
// - The browser tests (Chromium through playwright-core): the pages are the same bytes on every
//   Node, and they are the slowest files; the Node 24 run keeps them.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testPathIgnorePatterns: [
    // Its own list, after the quick set's (empty under TOOLNEXUS_TESTS=all, as .ci/run runs it).
    ...base.testPathIgnorePatterns,
    '<rootDir>/test/nest/',
    '<rootDir>/test/inbox/body-parsers\\.test\\.ts$',
    '<rootDir>/test/inbox/internal-errors\\.test\\.ts$',
    // Runs docs/dependency-injection.md's programs, the NestJS one among them, inside jest.
    '<rootDir>/test/di/docs\\.test\\.ts$',
    '<rootDir>/test/a2a/agent-tool-options\\.test\\.ts$',
    '<rootDir>/test/inbox/browser(-live)?\\.test\\.ts$',
    '<rootDir>/test/chat/browser\\.test\\.ts$',
    '<rootDir>/test/mcp/approval-card\\.browser\\.test\\.ts$',
  ],
};
