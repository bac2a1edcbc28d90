/**
 * The conformance suite every PendingStore runs. It checks the store contract directly
 * (JSON round-trip, atomic claim with a lease, token-guarded complete, versioned run
 * checkpoints, close) and then every ResumeCoordinator rule (docs/design.md) on top of the
 * store, so a store that passes behaves like every other one behind a coordinator.
 *
 * Use it from a `*.test.ts` file:
 *
 * ```ts
 * import { runStoreConformance } from 'toolnexus-ts/testing';
 * runStoreConformance('PostgresPendingStore', async () => new PostgresPendingStore({ pool }), async () => { await truncate() });
 * ```
 *
 * `makeStore` is called before every test and must return an EMPTY, open store (a fresh
 * file, schema or truncated tables). The suite closes each store itself after its test;
 * `cleanup`, when given, runs after that close (drop tables, delete files).
 */
import type { PendingStore } from '../index';
import { describeCoordinatorRules } from './coordinator-rules';
import { testGlobals } from './globals';
import { describeStoreContract } from './store-contract';

/** Registers the conformance tests for one store implementation under `describe(name)`. */
export function runStoreConformance(name: string, makeStore: () => Promise<PendingStore>, cleanup?: () => Promise<void>): void {
  const { describe, beforeEach, afterEach } = testGlobals();
  describe(`${name} conformance`, () => {
    let store: PendingStore;
    beforeEach(async () => {
      store = await makeStore();
    });
    afterEach(async () => {
      await store.close();
      if (cleanup) await cleanup();
    });

    describeStoreContract(() => store);
    describeCoordinatorRules(() => store);
  });
}
