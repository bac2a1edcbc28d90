import type { StreamLogStore, StreamSlice } from './stream-log';

/**
 * A session store that keeps its runs' stream logs in a part of its own (docs/chat.md,
 * "Reconnecting"): every stream-log method is that part's. `MemorySessionStore` and the SQL
 * stores' sessions side extend it.
 */
export abstract class StreamLogHolder implements StreamLogStore {
  /** Keeps the stream logs of the sessions' runs. */
  protected abstract readonly streams: StreamLogStore;

  openStream(runId: string, sessionId: string): Promise<number> {
    return this.streams.openStream(runId, sessionId);
  }

  appendStream(runId: string, at: number, parts: readonly string[], next: number, end: boolean): Promise<void> {
    return this.streams.appendStream(runId, at, parts, next, end);
  }

  readStream(runId: string, from: number, limit: number): Promise<StreamSlice | undefined> {
    return this.streams.readStream(runId, from, limit);
  }
}
