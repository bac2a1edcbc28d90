import { MemoryPendingStore } from 'toolnexus-ts';
import { runStoreConformance } from 'toolnexus-ts/testing';

runStoreConformance('MemoryPendingStore', async () => new MemoryPendingStore());
