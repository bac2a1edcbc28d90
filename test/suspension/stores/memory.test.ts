import { MemoryPendingStore } from 'toolnexus-ts';
import { runStoreConformance } from '../../fixtures/stores/conformance';

runStoreConformance('MemoryPendingStore', async () => new MemoryPendingStore());
