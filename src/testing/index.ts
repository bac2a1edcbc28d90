/**
 * The conformance suites for stores: `import { runStoreConformance } from 'toolnexus-ts/testing'`
 * (or `runSuspensionStoreConformance` / `runRunStoreConformance` for a store that does one job).
 * Call it from a test file run by jest (or vitest with `globals: true`); it registers its
 * tests with the framework's global `describe` / `it` / `expect` and imports no framework.
 */
export { runStoreConformance, runSuspensionStoreConformance, runRunStoreConformance } from './conformance';
export { sampleCall } from './store-contract';
export type { ClosableRunStore } from './store-contract';
/** The types a store implements besides those of the root entry (`SuspensionStore`, `RunStore`, `SuspendedCall`...). */
export type { Claim, Settlement } from '../suspension/store';
