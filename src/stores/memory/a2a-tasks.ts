import type { A2ATaskPage, A2ATaskRecord, A2ATaskStore } from '../a2a-tasks';
import { checkA2ATaskPage, checkA2ATaskRecord, checkMovedLimit } from '../a2a-tasks';

/** The A2A task records of a `MemoryStore` (docs/a2a.md, "Listing and push"), kept as JSON copies. */
export class MemoryA2ATasks implements A2ATaskStore {
  private readonly records = new Map<string, string>();

  /** `versionOf`: the version of a run's checkpoint in the same store (what a watched record is compared with). */
  constructor(private readonly versionOf: (runId: string) => number | undefined = () => undefined) {}

  loadA2ATask(taskId: string): Promise<A2ATaskRecord | undefined> {
    const text = this.records.get(taskId);
    return Promise.resolve(text === undefined ? undefined : (JSON.parse(text) as A2ATaskRecord));
  }

  saveA2ATask(record: A2ATaskRecord): Promise<boolean> {
    checkA2ATaskRecord(record);
    const stored = this.records.get(record.taskId);
    const version = stored === undefined ? 0 : (JSON.parse(stored) as A2ATaskRecord).version;
    if (record.version !== version + 1) return Promise.resolve(false);
    // Owner, context and creation are the first save's: a later one changes only the state.
    const first = stored === undefined ? record : (JSON.parse(stored) as A2ATaskRecord);
    const kept: A2ATaskRecord = { ...record, owner: first.owner, contextId: first.contextId, createdAt: first.createdAt };
    if (kept.dueAt === undefined) delete kept.dueAt;
    if (kept.watch === undefined) delete kept.watch;
    this.records.set(record.taskId, JSON.stringify(kept));
    return Promise.resolve(true);
  }

  listA2ATasks(page: A2ATaskPage): Promise<A2ATaskRecord[]> {
    checkA2ATaskPage(page);
    const after = page.after;
    const rows = this.all()
      .filter((record) => record.owner === page.owner)
      .filter(
        (record) => !after || record.createdAt > after.createdAt || (record.createdAt === after.createdAt && record.taskId > after.taskId),
      )
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.taskId < b.taskId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
    return Promise.resolve(rows.slice(0, page.limit));
  }

  listA2ADue(dueBefore: number, limit: number): Promise<A2ATaskRecord[]> {
    const due = this.all()
      .filter((record) => record.dueAt !== undefined && record.dueAt <= dueBefore)
      .sort((a, b) => (a.dueAt as number) - (b.dueAt as number));
    return Promise.resolve(due.slice(0, limit));
  }

  /** Watched records whose run's checkpoint version (`versionOf`) is past their `watch`, by task id. */
  listA2AMoved(limit: number, after = ''): Promise<A2ATaskRecord[]> {
    checkMovedLimit(limit, after);
    const moved = this.all()
      .filter((record) => record.watch !== undefined && (this.versionOf(record.taskId) ?? 0) > record.watch && record.taskId > after)
      .sort((a, b) => (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0));
    return Promise.resolve(moved.slice(0, limit));
  }

  /**
   * The records created before `cutoff` (RFC 3339) with nothing left in their outbox whose run
   * `over` says ended before it, oldest first, and the deletion of one: what `MemoryStore.prune` works through.
   */
  prunableTasks(cutoff: string, over: (taskId: string) => boolean): A2ATaskRecord[] {
    return this.all()
      .filter((record) => prunableTask(record, cutoff, over))
      .sort((a, b) => (a.createdAt === b.createdAt ? (a.taskId < b.taskId ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1));
  }

  deletePrunableTask(taskId: string, cutoff: string, over: (taskId: string) => boolean): boolean {
    const text = this.records.get(taskId);
    return text !== undefined && prunableTask(JSON.parse(text) as A2ATaskRecord, cutoff, over) && this.records.delete(taskId);
  }

  private all(): A2ATaskRecord[] {
    return [...this.records.values()].map((text) => JSON.parse(text) as A2ATaskRecord);
  }
}

function prunableTask(record: A2ATaskRecord, cutoff: string, over: (taskId: string) => boolean): boolean {
  return record.dueAt === undefined && record.createdAt < cutoff && over(record.taskId);
}
