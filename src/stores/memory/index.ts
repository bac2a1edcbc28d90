/**
 * The in-memory store, `toolnexus-ts/memory`: `import { MemoryStore } from 'toolnexus-ts/memory'`.
 * It keeps suspended calls, run checkpoints and sessions for the life of the process; the
 * errors it throws are the store contract's, in `toolnexus-ts/suspension`.
 */
export { MemoryStore } from './store';
export type { MemoryStoreOptions } from './store';
