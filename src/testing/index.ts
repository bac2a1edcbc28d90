/**
 * The conformance suite for pending stores: `import { runStoreConformance } from 'toolnexus-ts/testing'`.
 * Call it from a test file run by jest (or vitest with `globals: true`); it registers its
 * tests with the framework's global `describe` / `it` / `expect` and imports no framework.
 */
export { runStoreConformance } from './conformance';
export { sampleCall } from './store-contract';
