import { quoteIdentifier } from './resolve';
import type { A2ATaskPage, A2ATaskRecord, A2ATaskStore, A2ATaskRow } from '../a2a-tasks';
import { a2aTaskOf, a2aTaskRowOf, checkA2ATaskPage, checkA2ATaskRecord, checkMovedLimit } from '../a2a-tasks';
import { PostgresPart, type TableLayout, type PostgresQuery } from './part';

/** Layout step 4 of the PostgreSQL store, A2A tasks' block: as in SQLite (docs/a2a.md, "Listing and push"). */
export const A2A_TASKS_POSTGRES: TableLayout = {
  columns: `
       task_id    text PRIMARY KEY,
       owner      text NOT NULL,
       context_id text NOT NULL,
       created_at text NOT NULL,
       version    integer NOT NULL CHECK (version >= 1),
       state      json NOT NULL,
       due_at     bigint`,
  indexes: {
    a2a_tasks_owner_idx: '(owner, created_at COLLATE "C", task_id COLLATE "C")',
    a2a_tasks_due_idx: '(due_at) WHERE due_at IS NOT NULL',
  },
};

/**
 * Layout step 4 of the PostgreSQL store, A2A push watch's block (issue 49, docs/a2a.md "Listing
 * and push"): as in SQLite, the run checkpoint version each watched task was last told of.
 */
export function a2aWatchPostgresDdl(table: string, prefix: string): string[] {
  return [
    `ALTER TABLE ${table} ADD COLUMN watch bigint`,
    `CREATE INDEX ${quoteIdentifier(`${prefix}a2a_tasks_watched_idx`)} ON ${table} (task_id COLLATE "C") WHERE watch IS NOT NULL`,
  ];
}

const COLUMNS = 'task_id, owner, context_id, created_at, version, state::text AS state, due_at, watch';

/** The A2A task records of a `PostgresStore`, in its schema. */
export class PostgresA2ATasks extends PostgresPart implements A2ATaskStore {
  constructor(
    table: string,
    query: PostgresQuery,
    /** The store's runs table: a watched task's run is read there. */
    private readonly runs: string,
  ) {
    super(table, query);
  }

  async loadA2ATask(taskId: string): Promise<A2ATaskRecord | undefined> {
    const result = await this.query<A2ATaskRow>(`load of A2A task ${taskId}`, `SELECT ${COLUMNS} FROM ${this.table} WHERE task_id = $1`, [
      taskId,
    ]);
    return result.rows[0] ? a2aTaskOf(result.rows[0]) : undefined;
  }

  async saveA2ATask(record: A2ATaskRecord): Promise<boolean> {
    checkA2ATaskRecord(record);
    const row = a2aTaskRowOf(record);
    const result =
      record.version === 1
        ? await this.query(
            `save of A2A task ${row.task_id}`,
            `INSERT INTO ${this.table} (task_id, owner, context_id, created_at, version, state, due_at, watch)
             VALUES ($1, $2, $3, $4, 1, $5::json, $6, $7) ON CONFLICT (task_id) DO NOTHING`,
            [row.task_id, row.owner, row.context_id, row.created_at, row.state, row.due_at, row.watch],
          )
        : await this.query(
            `save of A2A task ${row.task_id}`,
            `UPDATE ${this.table} SET version = $2, state = $3::json, due_at = $4, watch = $5 WHERE task_id = $1 AND version = $2 - 1`,
            [row.task_id, row.version, row.state, row.due_at, row.watch],
          );
    return result.rowCount === 1;
  }

  async listA2ATasks(page: A2ATaskPage): Promise<A2ATaskRecord[]> {
    checkA2ATaskPage(page);
    const after = page.after;
    const result = after
      ? await this.query<A2ATaskRow>(
          'list of A2A tasks',
          `SELECT ${COLUMNS} FROM ${this.table} WHERE owner = $1
             AND (created_at COLLATE "C", task_id COLLATE "C") > ($2 COLLATE "C", $3 COLLATE "C")
           ORDER BY created_at COLLATE "C", task_id COLLATE "C" LIMIT $4::bigint`,
          [page.owner, after.createdAt, after.taskId, page.limit],
        )
      : await this.query<A2ATaskRow>(
          'list of A2A tasks',
          `SELECT ${COLUMNS} FROM ${this.table} WHERE owner = $1 ORDER BY created_at COLLATE "C", task_id COLLATE "C" LIMIT $2::bigint`,
          [page.owner, page.limit],
        );
    return result.rows.map(a2aTaskOf);
  }

  async listA2ADue(dueBefore: number, limit: number): Promise<A2ATaskRecord[]> {
    const result = await this.query<A2ATaskRow>(
      'list of due A2A notifications',
      `SELECT ${COLUMNS} FROM ${this.table} WHERE due_at IS NOT NULL AND due_at <= $1 ORDER BY due_at LIMIT $2::bigint`,
      [dueBefore, limit],
    );
    return result.rows.map(a2aTaskOf);
  }

  async listA2AMoved(limit: number, after = ''): Promise<A2ATaskRecord[]> {
    checkMovedLimit(limit, after);
    const columns = COLUMNS.split(', ')
      .map((column) => `a.${column}`)
      .join(', ');
    const result = await this.query<A2ATaskRow>(
      'list of moved A2A tasks',
      `SELECT ${columns} FROM ${this.table} a JOIN ${this.runs} r ON r.run_id = a.task_id
       WHERE a.watch IS NOT NULL AND r.version > a.watch AND a.task_id COLLATE "C" > $2 COLLATE "C"
       ORDER BY a.task_id COLLATE "C" LIMIT $1::bigint`,
      [limit, after],
    );
    return result.rows.map(a2aTaskOf);
  }
}
