/**
 * The conformance suites for stores: `import { runStoreConformance } from 'toolnexus-ts/testing'`
 * (or `runSuspensionStoreConformance` / `runRunStoreConformance` for a store that does one job).
 * Call it from a test file run by jest (or vitest with `globals: true`); it registers its
 * tests with the framework's global `describe` / `it` / `expect` and imports no framework.
 * The types a store implements are those of the store contract: `SuspensionStore`, `Claim`
 * and `Settlement` in `toolnexus-ts/suspension`, `RunStore` in `toolnexus-ts/agents`.
 */
export { runStoreConformance, runSuspensionStoreConformance, runRunStoreConformance } from './conformance';
export { sampleCall } from './store-contract';
export type { ClosableRunStore } from './store-contract';
