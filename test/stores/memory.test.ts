import { MemoryPendingStore } from 'toolnexus-ts';
import { runStoreConformance } from './conformance';

runStoreConformance('MemoryPendingStore', async () => new MemoryPendingStore());
