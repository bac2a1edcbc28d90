import type { A2ATaskPage, A2ATaskRecord, A2ATaskStore, A2ATaskRow } from '../a2a-tasks';
import { a2aTaskOf, a2aTaskRowOf, checkA2ATaskPage, checkA2ATaskRecord, checkMovedLimit } from '../a2a-tasks';
import { SqlitePart } from './part';

/**
 * Schema step 4 of the SQLite store, A2A tasks' block (docs/a2a.md, "Listing and push"): one
 * row per task the A2A server saw, its owner indexed for `tasks/list`, the earliest due push
 * notification indexed for the outbox.
 */
export const A2A_TASKS_SQLITE_DDL = `
    CREATE TABLE a2a_tasks (
      task_id    TEXT PRIMARY KEY,
      owner      TEXT NOT NULL,
      context_id TEXT NOT NULL,
      created_at TEXT NOT NULL,
      version    INTEGER NOT NULL,
      state      TEXT NOT NULL,
      due_at     INTEGER
    );
    CREATE INDEX a2a_tasks_owner ON a2a_tasks (owner, created_at, task_id);
    CREATE INDEX a2a_tasks_due ON a2a_tasks (due_at) WHERE due_at IS NOT NULL;
`;

/**
 * Schema step 4 of the SQLite store, A2A push watch's block (issue 49, docs/a2a.md "Listing and
 * push"): the run checkpoint version a task with push configs was last told of, so a sweep finds
 * the tasks another process continued (a join on `runs`); only the watched rows are indexed.
 */
export const A2A_WATCH_SQLITE_DDL = `
    ALTER TABLE a2a_tasks ADD COLUMN watch INTEGER;
    CREATE INDEX a2a_tasks_watched ON a2a_tasks (task_id) WHERE watch IS NOT NULL;
`;

/** The A2A task records of a `SqliteStore`, in the same file. */
export class SqliteA2ATasks extends SqlitePart implements A2ATaskStore {
  private readonly insert = this.db.prepare(`INSERT INTO a2a_tasks (task_id, owner, context_id, created_at, version, state, due_at, watch)
      VALUES (@task_id, @owner, @context_id, @created_at, 1, @state, @due_at, @watch) ON CONFLICT (task_id) DO NOTHING`);
  private readonly update = this.db.prepare(`UPDATE a2a_tasks SET version = @version, state = @state, due_at = @due_at, watch = @watch
      WHERE task_id = @task_id AND version = @version - 1`);
  private readonly read = this.db.prepare('SELECT * FROM a2a_tasks WHERE task_id = ?');
  private readonly first = this.db.prepare('SELECT * FROM a2a_tasks WHERE owner = @owner ORDER BY created_at, task_id LIMIT @limit');
  private readonly next = this.db
    .prepare(`SELECT * FROM a2a_tasks WHERE owner = @owner AND (created_at > @at OR (created_at = @at AND task_id > @id))
      ORDER BY created_at, task_id LIMIT @limit`);
  private readonly due = this.db.prepare(
    'SELECT * FROM a2a_tasks WHERE due_at IS NOT NULL AND due_at <= @due ORDER BY due_at LIMIT @limit',
  );
  // The watched rows only (a2a_tasks_watched), each against its run's row by primary key.
  private readonly moved = this.db.prepare(`SELECT a.* FROM a2a_tasks a JOIN runs r ON r.run_id = a.task_id
      WHERE a.watch IS NOT NULL AND r.version > a.watch AND a.task_id > @after ORDER BY a.task_id LIMIT @limit`);

  async loadA2ATask(taskId: string): Promise<A2ATaskRecord | undefined> {
    this.assertOpen();
    const row = this.run(() => this.read.get(taskId) as A2ATaskRow | undefined, `load A2A task ${taskId}`);
    return row ? a2aTaskOf(row) : undefined;
  }

  async saveA2ATask(record: A2ATaskRecord): Promise<boolean> {
    this.assertOpen();
    checkA2ATaskRecord(record);
    const row = a2aTaskRowOf(record);
    const statement = record.version === 1 ? this.insert : this.update;
    return this.run(() => statement.run(row).changes === 1, `save A2A task ${record.taskId}`);
  }

  async listA2ATasks(page: A2ATaskPage): Promise<A2ATaskRecord[]> {
    this.assertOpen();
    checkA2ATaskPage(page);
    const after = page.after;
    const rows = this.run(
      () =>
        (after
          ? this.next.all({ owner: page.owner, at: after.createdAt, id: after.taskId, limit: page.limit })
          : this.first.all({ owner: page.owner, limit: page.limit })) as A2ATaskRow[],
      'list A2A tasks',
    );
    return rows.map(a2aTaskOf);
  }

  async listA2ADue(dueBefore: number, limit: number): Promise<A2ATaskRecord[]> {
    this.assertOpen();
    const rows = this.run(() => this.due.all({ due: dueBefore, limit }) as A2ATaskRow[], 'list due A2A notifications');
    return rows.map(a2aTaskOf);
  }

  async listA2AMoved(limit: number, after = ''): Promise<A2ATaskRecord[]> {
    this.assertOpen();
    checkMovedLimit(limit, after);
    const rows = this.run(() => this.moved.all({ limit, after }) as A2ATaskRow[], 'list moved A2A tasks');
    return rows.map(a2aTaskOf);
  }
}
