import { MemoryStore } from 'toolnexus-ts/memory';
import { runStoreConformance } from 'toolnexus-ts/testing';

runStoreConformance('MemoryStore', async () => new MemoryStore());
