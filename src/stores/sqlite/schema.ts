import { StoreError } from '../../errors';
import { NOW_MS, NOW_TEXT } from './clock';
import { immediate, isBusy, sleepSync, type SqliteConnection, type SqliteStatement } from './driver';
import { DELIVERIES_SQLITE_DDL } from './deliveries';
import { SESSIONS_SQLITE_DDL } from './sessions';
import { A2A_TASKS_SQLITE_DDL, A2A_WATCH_SQLITE_DDL } from './a2a-tasks';
import { STREAMS_SQLITE_DDL } from './streams';
import { STEERS_SQLITE_DDL } from './steers';
import { MCP_TASKS_SQLITE_DDL } from './mcp-tasks';
import { SQLITE_SCHEMA_VERSION } from './version';

export { SQLITE_SCHEMA_VERSION };

/**
 * The DDL that brings a file from `version - 1` to `version`. Released steps are never
 * edited (files in the field ran them); a change is a new step.
 */
const STEPS: Record<number, string> = {
  1: `
    CREATE TABLE suspensions (
      seq         INTEGER PRIMARY KEY,
      id          TEXT NOT NULL UNIQUE,
      kind        TEXT NOT NULL,
      tool        TEXT NOT NULL,
      args        TEXT NOT NULL,
      request     TEXT NOT NULL,
      call_id     TEXT,
      run_id      TEXT,
      status      TEXT NOT NULL,
      created_at  TEXT NOT NULL,
      updated_at  TEXT,
      answer      TEXT,
      outcome     TEXT,
      lease_until INTEGER,
      lease_token TEXT
    );
    CREATE INDEX suspensions_status ON suspensions (status, created_at);
    CREATE INDEX suspensions_run ON suspensions (run_id, created_at) WHERE run_id IS NOT NULL;
    CREATE INDEX suspensions_kind ON suspensions (kind, created_at);
    CREATE TABLE runs (
      run_id     TEXT PRIMARY KEY,
      version    INTEGER NOT NULL,
      state      TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
  `,
  // Claims are fenced by a counter instead of a random token: a v1 call caught mid-claim
  // counts as claimed once, so whoever takes it over after its lease holds fence 2.
  2: `
    ALTER TABLE suspensions ADD COLUMN fence INTEGER;
    ALTER TABLE suspensions ADD COLUMN chain TEXT;
    ALTER TABLE suspensions ADD COLUMN next_id TEXT;
    ALTER TABLE suspensions ADD COLUMN binding TEXT;
    UPDATE suspensions SET fence = 1 WHERE status = 'resolving';
    ALTER TABLE suspensions DROP COLUMN lease_token;
  `,
  // The audit trail: who answered, when (by the store's clock), with which words. Rows
  // answered before it keep NULLs: nobody recorded who answered them. The partial index
  // serves history(), newest settlement first.
  3: `
    ALTER TABLE suspensions ADD COLUMN answered_by TEXT;
    ALTER TABLE suspensions ADD COLUMN answered_at TEXT;
    ALTER TABLE suspensions ADD COLUMN comment TEXT;
    CREATE INDEX suspensions_settled ON suspensions (updated_at, seq)
      WHERE status IN ('resolved', 'declined', 'expired', 'cancelled');
  `,
  // Step 4 (this release), one block per feature: trace context (a column) and sessions (a table).
  4: [
    // Traces: the W3C traceparent of the span that suspended a call, so the span that resolves
    // it (maybe in another process, days later) links back to it. Rows recorded before it keep
    // NULL: their resolutions start unlinked.
    'ALTER TABLE suspensions ADD COLUMN traceparent TEXT;',
    // Who may answer (docs/who-may-answer.md): on whose behalf a call was made, so separation
    // of duties can refuse their own approval. Rows recorded before it keep NULL.
    'ALTER TABLE suspensions ADD COLUMN requested_by TEXT;',
    // Quorum: the approvals recorded so far (JSON), one per principal, stamped by SQLite's clock.
    'ALTER TABLE suspensions ADD COLUMN signatures TEXT;',
    // Automatic answers: what the rule decided of an approval request (JSON), acted on or shadowed.
    'ALTER TABLE suspensions ADD COLUMN automatic TEXT;',
    // The chat session of the call's run: the conversation its resolution's span names.
    'ALTER TABLE suspensions ADD COLUMN session_id TEXT;',
    // Standing grants (docs/who-may-answer.md, "Grants"): each as JSON, revoked by SQLite's clock.
    'CREATE TABLE grants (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, tool TEXT NOT NULL, grant_json TEXT NOT NULL, revoked_at TEXT);',
    'CREATE INDEX grants_tool ON grants (tool, seq) WHERE revoked_at IS NULL;',
    // Retention and recovery (docs/deploying.md, "Retention"): runs by age, which a prune of
    // finished runs and the orphan scan (listStaleRuns) walk from the oldest.
    'CREATE INDEX runs_updated ON runs (updated_at);',
    // The orphan scan looks only at running runs, a few among millions: a partial index holds just those.
    "CREATE INDEX runs_running ON runs (updated_at) WHERE json_extract(state, '$.phase') = 'running';",
    // Sessions (chat, docs/chat.md): conversations kept by id, saved by version compare-and-set.
    SESSIONS_SQLITE_DDL,
    // A2A tasks (docs/a2a.md, "Listing and push"): whose each task is, its push configs and outbox.
    A2A_TASKS_SQLITE_DDL,
    // Deliveries (docs/channels.md, "What is stored"): the cards a channel posted for pending calls.
    DELIVERIES_SQLITE_DDL,
    // Receipts (docs/tools.md, "Idempotency keys and receipts"): what downstream systems answered
    // a call's attempts (JSON), appended to the claimed row as recorded and kept with the outcome.
    'ALTER TABLE suspensions ADD COLUMN receipts TEXT;',
    // Served calls' idempotency keys (src/suspension/keyed.ts): the holder's fence and lease
    // (SQLite's clock, ms), then the first outcome (JSON) and when it was kept.
    'CREATE TABLE keyed_calls (key TEXT PRIMARY KEY, fence INTEGER NOT NULL, lease_until INTEGER, outcome TEXT, finished_at INTEGER);',
    // Stream logs (docs/chat.md, "Reconnecting"): every chat response's parts, per run, by cursor.
    STREAMS_SQLITE_DDL,
    // Retention of served and delivered work (docs/deploying.md, "Retention"): what a prune of
    // A2A tasks, keyed calls and deliveries walks from the oldest, only the rows it may delete.
    'CREATE INDEX a2a_tasks_idle ON a2a_tasks (created_at, task_id) WHERE due_at IS NULL;',
    'CREATE INDEX keyed_calls_done ON keyed_calls (finished_at) WHERE outcome IS NOT NULL;',
    'CREATE INDEX deliveries_done ON deliveries (due_at) WHERE done = 1;',
    // Steering (docs/agents.md, "Steering"): messages steered into a run another process drives, until its driver takes them.
    STEERS_SQLITE_DDL,
    // MCP tasks (docs/mcp.md, "Tasks"): the tasks of served calls that did not suspend, with the
    // lease of the process running each, so every server process on the file answers for them.
    MCP_TASKS_SQLITE_DDL,
    // A2A push for a task continued elsewhere (docs/a2a.md, "Listing and push"):
    // the run checkpoint version each watched task was last told of.
    A2A_WATCH_SQLITE_DDL,
  ].join('\n'),
};

/**
 * Creates the schema on a new file, or upgrades an older one in place (its rows kept), or
 * refuses one newer than this code reads. One IMMEDIATE transaction: two processes opening
 * a file at once upgrade it once, and a failed step leaves the file as it was.
 */
export function migrate(db: SqliteConnection, filename: string): void {
  immediate(db, () => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const row = db.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null };
    const current = row.version ?? 0;
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new StoreError(
        `SQLite file ${filename} has pending-store schema version ${current}; this library reads up to ${SQLITE_SCHEMA_VERSION}`,
      );
    }
    for (let version = current + 1; version <= SQLITE_SCHEMA_VERSION; version++) {
      const step = STEPS[version];
      if (step === undefined) throw new StoreError(`SQLite store: no migration to schema version ${version}`);
      db.exec(step);
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(version);
    }
  });
}

/**
 * Puts a connection in the store's modes and brings the file's schema up to date.
 *
 * Two processes opening a brand-new file at the same instant can be refused "database is
 * locked" without SQLite's busy handler ever waiting: the WAL switch needs the file to
 * itself, and SQLite refuses at once where waiting could deadlock two connections that both
 * read it. Every step here may be repeated (the pragmas set what is already set; the schema
 * step is one IMMEDIATE transaction that rolls back whole), so such a refusal is retried,
 * after a short sleep, for about the busy timeout more (each attempt may itself wait that long
 * inside SQLite's busy handler, so a first open waits at most about twice the busy timeout).
 */
export function setUp(db: SqliteConnection, filename: string, busyTimeoutMs: number, synchronous: 'full' | 'normal'): void {
  // Set first: the WAL switch and the schema step may wait for another process's lock.
  db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  const giveUpAt = performance.now() + busyTimeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      db.exec('PRAGMA journal_mode = WAL');
      db.exec(`PRAGMA synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
      migrate(db, filename);
      return;
    } catch (error) {
      if (!isBusy(error) || performance.now() >= giveUpAt) throw error;
      // Spread out, so the processes that collided do not collide again.
      sleepSync(Math.min(5 * attempt, 50) + Math.random() * 10);
    }
  }
}

/** The columns of a suspension, named as `SuspensionRow` (../rows) names them. */
export const SUSPENSION_COLUMNS = `id, kind, tool, status, request, args, answer, outcome, call_id, run_id, created_at, updated_at,
  lease_until AS lease_until_ms, fence, chain, next_id, binding, answered_by, answered_at, comment, traceparent, requested_by, signatures,
  automatic, session_id, receipts`;

/** The statements {@link prepare} returns; named, so the declaration emit can name them too. */
export interface SqliteStatements {
  relaxSync: SqliteStatement | undefined;
  restoreSync: SqliteStatement | undefined;
  insert: SqliteStatement;
  read: SqliteStatement;
  claim: SqliteStatement;
  renew: SqliteStatement;
  complete: SqliteStatement;
  receipt: SqliteStatement;
  insertRun: SqliteStatement;
  updateRun: SqliteStatement;
  readRun: SqliteStatement;
  sign: SqliteStatement;
  now: SqliteStatement;
  insertGrant: SqliteStatement;
  revokeGrant: SqliteStatement;
  listGrants: SqliteStatement;
  listToolGrants: SqliteStatement;
  settledPage: SqliteStatement;
}

/** Every statement the store runs but `list`'s, which depend on the filter. */
export function prepare(db: SqliteConnection, synchronous: 'full' | 'normal'): SqliteStatements {
  return {
    relaxSync: synchronous === 'full' ? db.prepare('PRAGMA synchronous = NORMAL') : undefined,
    restoreSync: synchronous === 'full' ? db.prepare('PRAGMA synchronous = FULL') : undefined,
    insert: db.prepare(`
      INSERT INTO suspensions (id, kind, tool, args, request, call_id, run_id, status, created_at, updated_at, answer, outcome,
                               lease_until, fence, chain, next_id, binding, answered_by, answered_at, comment, traceparent,
                               requested_by, signatures, automatic, session_id, receipts)
      VALUES (@id, @kind, @tool, @args, @request, @call_id, @run_id, @status, @created_at, @updated_at, @answer, @outcome,
              @lease_until_ms, @fence, @chain, @next_id, @binding, @answered_by, @answered_at, @comment, @traceparent,
              @requested_by, @signatures, @automatic, @session_id, @receipts)
      ON CONFLICT (id) DO NOTHING`),
    read: db.prepare(`SELECT ${SUSPENSION_COLUMNS} FROM suspensions WHERE id = ?`),
    // The approvals with one more, computed after reading the row in the same IMMEDIATE transaction.
    sign: db.prepare(`UPDATE suspensions SET signatures = @signatures, updated_at = @at WHERE id = @id AND status = 'pending'`),
    now: db.prepare(`SELECT ${NOW_TEXT} AS now`),
    insertGrant: db.prepare('INSERT INTO grants (id, tool, grant_json) VALUES (@id, @tool, @grant_json) ON CONFLICT (id) DO NOTHING'),
    revokeGrant: db.prepare(
      `UPDATE grants SET revoked_at = ${NOW_TEXT} WHERE id = ? AND revoked_at IS NULL RETURNING grant_json, revoked_at`,
    ),
    listGrants: db.prepare('SELECT grant_json, revoked_at FROM grants ORDER BY seq'),
    listToolGrants: db.prepare('SELECT grant_json, revoked_at FROM grants WHERE tool = ? AND revoked_at IS NULL ORDER BY seq'),
    // Leases and the claim's instant are judged by SQLite's clock, read in the statement that
    // uses them ('now' is one instant for a whole statement), not by each process's Date:
    // a process whose clock is off cannot take over a lease that is still held.
    claim: db.prepare(`
      UPDATE suspensions
      SET status = 'resolving', answer = @answer, lease_until = ${NOW_MS} + @lease_ms, fence = COALESCE(fence, 0) + 1,
          updated_at = ${NOW_TEXT}, answered_at = ${NOW_TEXT}, answered_by = @answered_by, comment = @comment
      WHERE id = @id AND (status = 'pending' OR (status = 'resolving' AND lease_until < ${NOW_MS}))
      RETURNING ${SUSPENSION_COLUMNS}`),
    renew: db.prepare(`
      UPDATE suspensions SET lease_until = ${NOW_MS} + @lease_ms
      WHERE id = @id AND status = 'resolving' AND fence = @fence`),
    complete: db.prepare(`
      UPDATE suspensions
      SET status = @status, outcome = @outcome, lease_until = NULL, updated_at = ${NOW_TEXT}, next_id = COALESCE(@next_id, next_id),
          receipts = COALESCE(@receipts, receipts)
      WHERE id = @id AND status = 'resolving' AND fence = @fence`),
    // One statement appends under the claim's fence: a displaced holder's receipt changes nothing.
    receipt: db.prepare(`
      UPDATE suspensions SET receipts = json_insert(COALESCE(receipts, '[]'), '$[#]', json(@receipt))
      WHERE id = @id AND status = 'resolving' AND fence = @fence`),
    insertRun: db.prepare(`
      INSERT INTO runs (run_id, version, state, updated_at) VALUES (@run_id, @version, @state, @updated_at)
      ON CONFLICT (run_id) DO NOTHING`),
    updateRun: db.prepare(`
      UPDATE runs SET version = @version, state = @state, updated_at = @updated_at
      WHERE run_id = @run_id AND version = @version - 1`),
    readRun: db.prepare('SELECT * FROM runs WHERE run_id = ?'),
    // A page of settled calls oldest first, walked along the settled index from the cursor
    // (docs/operating.md, "Decisions as evaluation data"): each page one bounded statement, its
    // range starting at the cursor (`>= @at`), so a late page does not walk the earlier ones again.
    settledPage: db.prepare(`
      SELECT ${SUSPENSION_COLUMNS}, seq FROM suspensions INDEXED BY suspensions_settled
      WHERE status IN ('resolved', 'declined', 'expired', 'cancelled')
        AND updated_at >= @since AND (@until IS NULL OR updated_at < @until)
        AND updated_at >= @at AND (updated_at > @at OR (updated_at = @at AND seq > @seq))
        AND (@tools IS NULL OR tool IN (SELECT value FROM json_each(@tools)))
      ORDER BY updated_at, seq LIMIT @limit`),
  };
}
