import type { LoadedMcpTask, McpTaskRecord, McpTaskRow, McpTaskStore } from '../mcp-tasks';
import { checkLease, checkMcpTaskPrune, checkMcpTaskRecord, mcpTaskOf, mcpTaskRowOf } from '../mcp-tasks';
import { CLOCK } from './columns';
import { PostgresPart, type TableLayout } from './part';

/**
 * Layout step 4 of the PostgreSQL store, MCP tasks' block (docs/mcp.md, "Tasks"): as in SQLite,
 * a row per task of a served call that did not suspend, with the lease (the server's clock,
 * epoch ms) of the process running it while it is `working`.
 */
export const MCP_TASKS_POSTGRES: TableLayout = {
  columns: `
       task_id        text PRIMARY KEY,
       owner          text NOT NULL,
       status         text NOT NULL,
       version        integer NOT NULL CHECK (version >= 1),
       created_at     text NOT NULL,
       updated_at     text NOT NULL,
       state          json NOT NULL,
       lease_until_ms bigint`,
  indexes: { mcp_tasks_upd_idx: '(updated_at COLLATE "C")' },
};

/** The columns of a loaded task, `lapsed` judged by the server's clock (the statement's `clock`). */
const COLUMNS = `t.task_id, t.owner, t.status, t.version, t.created_at, t.updated_at, t.state::text AS state,
  (t.status = 'working' AND t.lease_until_ms IS NOT NULL AND t.lease_until_ms < clock.ms) AS lapsed`;

/** The MCP task records of a `PostgresStore`, in its schema. */
export class PostgresMcpTasks extends PostgresPart implements McpTaskStore {
  async loadMcpTask(taskId: string): Promise<LoadedMcpTask | undefined> {
    const result = await this.query<McpTaskRow>(
      `load of MCP task ${taskId}`,
      `WITH ${CLOCK} SELECT ${COLUMNS} FROM ${this.table} t, clock WHERE t.task_id = $1`,
      [taskId],
    );
    return result.rows[0] ? mcpTaskOf(result.rows[0]) : undefined;
  }

  async saveMcpTask(record: McpTaskRecord, leaseMs?: number): Promise<boolean> {
    checkMcpTaskRecord(record, leaseMs);
    const row = mcpTaskRowOf(record);
    const lease = leaseMs === undefined ? null : Math.ceil(leaseMs);
    const result =
      record.version === 1
        ? await this.query(
            `save of MCP task ${row.task_id}`,
            `WITH ${CLOCK} INSERT INTO ${this.table} (task_id, owner, status, version, created_at, updated_at, state, lease_until_ms)
             SELECT $1, $2, $3, 1, $4, $5, $6::json, clock.ms + $7::bigint FROM clock ON CONFLICT (task_id) DO NOTHING`,
            [row.task_id, row.owner, row.status, row.created_at, row.updated_at, row.state, lease],
          )
        : await this.query(
            `save of MCP task ${row.task_id}`,
            `WITH ${CLOCK} UPDATE ${this.table} SET status = $3, version = $2, updated_at = $4, state = $5::json,
               lease_until_ms = clock.ms + $6::bigint
             FROM clock WHERE task_id = $1 AND version = $2 - 1`,
            [row.task_id, row.version, row.status, row.updated_at, row.state, lease],
          );
    return result.rowCount === 1;
  }

  async renewMcpTask(taskId: string, version: number, leaseMs: number): Promise<boolean> {
    checkLease('renewMcpTask', leaseMs);
    const result = await this.query(
      `renewal of MCP task ${taskId}`,
      `WITH ${CLOCK} UPDATE ${this.table} SET lease_until_ms = clock.ms + $3::bigint
         FROM clock WHERE task_id = $1 AND version = $2 AND status = 'working'`,
      [taskId, version, Math.ceil(leaseMs)],
    );
    return result.rowCount === 1;
  }

  async pruneMcpTasks(updatedBefore: string, limit: number): Promise<number> {
    checkMcpTaskPrune(updatedBefore, limit);
    const result = await this.query(
      'prune of MCP tasks',
      `WITH ${CLOCK} DELETE FROM ${this.table} WHERE task_id IN (
         SELECT t.task_id FROM ${this.table} t, clock WHERE t.updated_at COLLATE "C" < $1 COLLATE "C"
           AND (t.status <> 'working' OR t.lease_until_ms IS NULL OR t.lease_until_ms < clock.ms) LIMIT $2::bigint)`,
      [updatedBefore, limit],
    );
    return result.rowCount ?? 0;
  }
}
