/** The in-memory store: `import { MemoryStore } from 'toolnexus-ts/memory'`. */
export { MemoryStore } from './store';
export type { MemoryStoreOptions } from './store';
