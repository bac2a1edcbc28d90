import { MemoryStore } from 'toolnexus-ts';
import { runStoreConformance } from 'toolnexus-ts/testing';

runStoreConformance('MemoryStore', async () => new MemoryStore());
