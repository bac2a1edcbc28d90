import type { LoadedMcpTask, McpTaskRecord, McpTaskStore } from '../mcp-tasks';
import { checkLease, checkMcpTaskPrune, checkMcpTaskRecord } from '../mcp-tasks';

interface Kept {
  /** The record as JSON: what comes back is what JSON carries, and nobody mutates what is kept. */
  json: string;
  /** The record's version, status and last update, kept beside its JSON so a renewal or a prune reads them without parsing it. */
  version: number;
  status: McpTaskRecord['status'];
  updatedAt: string;
  /** Epoch ms by the store's clock until which a process holds it; undefined when nobody does. */
  leaseUntil: number | undefined;
}

/** The MCP task records of a `MemoryStore` (docs/mcp.md, "Tasks"), leases by its clock. */
export class MemoryMcpTasks implements McpTaskStore {
  private readonly records = new Map<string, Kept>();

  constructor(private readonly now: () => number) {}

  loadMcpTask(taskId: string): Promise<LoadedMcpTask | undefined> {
    const kept = this.records.get(taskId);
    if (kept === undefined) return Promise.resolve(undefined);
    const record = JSON.parse(kept.json) as McpTaskRecord;
    return Promise.resolve({ ...record, lapsed: this.lapsed(kept) });
  }

  saveMcpTask(record: McpTaskRecord, leaseMs?: number): Promise<boolean> {
    checkMcpTaskRecord(record, leaseMs);
    const stored = this.records.get(record.taskId);
    if (record.version !== (stored?.version ?? 0) + 1) return Promise.resolve(false);
    const first = stored === undefined ? undefined : (JSON.parse(stored.json) as McpTaskRecord);
    // Owner and creation are the first save's: a later one changes only where the task stands.
    const kept: McpTaskRecord = {
      taskId: record.taskId,
      owner: first?.owner ?? record.owner,
      status: record.status,
      version: record.version,
      createdAt: first?.createdAt ?? record.createdAt,
      updatedAt: record.updatedAt,
      state: record.state,
    };
    this.records.set(record.taskId, {
      json: JSON.stringify(kept),
      version: kept.version,
      status: kept.status,
      updatedAt: kept.updatedAt,
      leaseUntil: leaseMs === undefined ? undefined : this.now() + leaseMs,
    });
    return Promise.resolve(true);
  }

  renewMcpTask(taskId: string, version: number, leaseMs: number): Promise<boolean> {
    checkLease('renewMcpTask', leaseMs);
    const kept = this.records.get(taskId);
    if (kept === undefined) return Promise.resolve(false);
    if (kept.version !== version || kept.status !== 'working') return Promise.resolve(false);
    kept.leaseUntil = this.now() + leaseMs;
    return Promise.resolve(true);
  }

  pruneMcpTasks(updatedBefore: string, limit: number): Promise<number> {
    checkMcpTaskPrune(updatedBefore, limit);
    let gone = 0;
    for (const [taskId, kept] of this.records) {
      if (gone >= limit) break;
      const held = kept.status === 'working' && !this.lapsed(kept);
      if (!held && kept.updatedAt < updatedBefore && this.records.delete(taskId)) gone++;
    }
    return Promise.resolve(gone);
  }

  private lapsed(kept: Kept): boolean {
    return kept.status === 'working' && kept.leaseUntil !== undefined && kept.leaseUntil < this.now();
  }
}
