/** The in-memory store: `import { MemoryPendingStore } from 'toolnexus-ts/memory'`. */
export { MemoryPendingStore } from './store';
export type { MemoryPendingStoreOptions } from './store';
