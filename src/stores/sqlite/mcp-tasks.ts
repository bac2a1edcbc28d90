import type { LoadedMcpTask, McpTaskRecord, McpTaskRow, McpTaskStore } from '../mcp-tasks';
import { checkLease, checkMcpTaskPrune, checkMcpTaskRecord, mcpTaskOf, mcpTaskRowOf } from '../mcp-tasks';
import { NOW_MS } from './clock';
import { SqlitePart } from './part';

/**
 * Schema step 4 of the SQLite store, MCP tasks' block (docs/mcp.md, "Tasks"): one row per task
 * of a served call that did not suspend, whose it is, where it stands, what its status carries,
 * and the lease (SQLite's clock, epoch ms) of the process running it while it is `working`;
 * indexed by its last change for the retention prune.
 */
export const MCP_TASKS_SQLITE_DDL = `
    CREATE TABLE mcp_tasks (
      task_id     TEXT PRIMARY KEY,
      owner       TEXT NOT NULL,
      status      TEXT NOT NULL,
      version     INTEGER NOT NULL,
      created_at  TEXT NOT NULL,
      updated_at  TEXT NOT NULL,
      state       TEXT NOT NULL,
      lease_until INTEGER
    );
    CREATE INDEX mcp_tasks_updated ON mcp_tasks (updated_at);
`;

const COLUMNS = `task_id, owner, status, version, created_at, updated_at, state,
  (status = 'working' AND lease_until IS NOT NULL AND lease_until < ${NOW_MS}) AS lapsed`;

/** A saved task's lease: none, or `@lease_ms` from now by SQLite's clock. */
const LEASE = `CASE WHEN @lease_ms IS NULL THEN NULL ELSE ${NOW_MS} + @lease_ms END`;

/** The MCP task records of a `SqliteStore`, in the same file. */
export class SqliteMcpTasks extends SqlitePart implements McpTaskStore {
  private readonly insert = this.db
    .prepare(`INSERT INTO mcp_tasks (task_id, owner, status, version, created_at, updated_at, state, lease_until)
      VALUES (@task_id, @owner, @status, 1, @created_at, @updated_at, @state, ${LEASE}) ON CONFLICT (task_id) DO NOTHING`);
  private readonly update = this.db
    .prepare(`UPDATE mcp_tasks SET status = @status, version = @version, updated_at = @updated_at, state = @state,
      lease_until = ${LEASE} WHERE task_id = @task_id AND version = @version - 1`);
  private readonly read = this.db.prepare(`SELECT ${COLUMNS} FROM mcp_tasks WHERE task_id = ?`);
  private readonly renew = this.db.prepare(`UPDATE mcp_tasks SET lease_until = ${NOW_MS} + @lease_ms
      WHERE task_id = @task_id AND version = @version AND status = 'working'`);
  private readonly prune = this.db.prepare(`DELETE FROM mcp_tasks WHERE task_id IN (
      SELECT task_id FROM mcp_tasks WHERE updated_at < @before
        AND (status <> 'working' OR lease_until IS NULL OR lease_until < ${NOW_MS}) LIMIT @limit)`);

  async loadMcpTask(taskId: string): Promise<LoadedMcpTask | undefined> {
    this.assertOpen();
    const row = this.run(() => this.read.get(taskId) as McpTaskRow | undefined, `load MCP task ${taskId}`);
    return row ? mcpTaskOf(row) : undefined;
  }

  async saveMcpTask(record: McpTaskRecord, leaseMs?: number): Promise<boolean> {
    this.assertOpen();
    checkMcpTaskRecord(record, leaseMs);
    const row = { ...mcpTaskRowOf(record), lease_ms: leaseMs === undefined ? null : Math.ceil(leaseMs) };
    const statement = record.version === 1 ? this.insert : this.update;
    if (record.version === 1) delete (row as { version?: unknown }).version;
    return this.run(() => statement.run(row).changes === 1, `save MCP task ${record.taskId}`);
  }

  async renewMcpTask(taskId: string, version: number, leaseMs: number): Promise<boolean> {
    this.assertOpen();
    checkLease('renewMcpTask', leaseMs);
    return this.run(
      () => this.renew.run({ task_id: taskId, version, lease_ms: Math.ceil(leaseMs) }).changes === 1,
      `renew MCP task ${taskId}`,
    );
  }

  async pruneMcpTasks(updatedBefore: string, limit: number): Promise<number> {
    this.assertOpen();
    checkMcpTaskPrune(updatedBefore, limit);
    return Number(this.run(() => this.prune.run({ before: updatedBefore, limit }).changes, 'prune MCP tasks'));
  }
}
