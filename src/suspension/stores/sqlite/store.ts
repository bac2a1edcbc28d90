import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { DuplicateSuspensionError, PendingStoreError, ToolnexusError } from '../../errors';
import type { Answer, PendingRequest, ToolResult } from '../../results/wire';
import type { Claim, PendingStore, RunCheckpoint, SettledStatus, SuspendedCall, SuspensionFilter, SuspensionStatus } from '../store';
import { toJson } from './json';
import { checkInsertable } from './validate';
import { messageOf } from '../../errors/message';

/**
 * The native driver is loaded when a store is first built, not when the package is
 * imported: an application that never uses SQLite should not load an addon at startup.
 */
function loadBetterSqlite3(): typeof Database {
  return require('better-sqlite3') as typeof Database;
}

/** The schema this code reads and writes. Bump it with a migration in {@link migrate}. */
export const SQLITE_SCHEMA_VERSION = 1;

/** Options of a {@link SqlitePendingStore}. */
export interface SqlitePendingStoreOptions {
  /** The database file; created with its schema on first open. `:memory:` works for one process. */
  filename: string;
  /** How long a write waits for another process's lock before failing. Default 5000 ms. */
  busyTimeoutMs?: number;
  /**
   * `full` (default) syncs every commit to disk, so a suspension survives power loss;
   * `normal` survives any process crash but may lose the last commits on power loss, and is faster.
   */
  synchronous?: 'full' | 'normal';
}

interface SuspensionRow {
  id: string;
  tool: string;
  args: string;
  request: string;
  call_id: string | null;
  run_id: string | null;
  status: SuspensionStatus;
  created_at: string;
  updated_at: string | null;
  answer: string | null;
  outcome: string | null;
  lease_until: number | null;
  lease_token: string | null;
}

interface RunRow {
  run_id: string;
  version: number;
  state: string;
  updated_at: string;
}

/**
 * Keeps suspended calls in a SQLite file through better-sqlite3: the embedded store for
 * anything that must survive a restart, shared safely by every process on one machine.
 *
 * The file runs in WAL mode with a busy timeout; its schema is created on first open and
 * versioned in a `schema_version` table. `status`, `run_id` and `kind` are indexed
 * columns, so listing and claiming stay flat as the table grows. A claim is one
 * conditional UPDATE inside an IMMEDIATE transaction: the database, not this process,
 * decides the single winner.
 *
 * @example
 * ```ts
 * const store = new SqlitePendingStore({ filename: './suspensions.db' })
 * const coordinator = new ResumeCoordinator({ toolkit, store })
 * ```
 */
export class SqlitePendingStore implements PendingStore {
  /** The database file this store opened. */
  readonly filename: string;
  private readonly db: Database.Database;
  private readonly statements: ReturnType<typeof prepare>;
  private readonly claimTransaction: (params: ClaimParams) => SuspensionRow | undefined;
  private readonly listStatements = new Map<string, Database.Statement>();
  private closed = false;

  constructor(options: SqlitePendingStoreOptions | string) {
    const { filename, busyTimeoutMs = 5000, synchronous = 'full' } = typeof options === 'string' ? { filename: options } : options;
    if (typeof filename !== 'string' || filename === '') throw new PendingStoreError('SqlitePendingStore needs a filename');
    this.filename = filename;
    try {
      this.db = new (loadBetterSqlite3())(filename, { timeout: busyTimeoutMs });
    } catch (error) {
      throw new PendingStoreError(`cannot open SQLite file ${filename}: ${messageOf(error)}`, { cause: error });
    }
    try {
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
      migrate(this.db, filename);
      this.statements = prepare(this.db, synchronous);
    } catch (error) {
      this.db.close();
      if (error instanceof ToolnexusError) throw error;
      throw new PendingStoreError(`cannot use SQLite file ${filename} as a pending store: ${messageOf(error)}`, { cause: error });
    }
    const { claim, relaxSync, restoreSync } = this.statements;
    const claimOnce = this.db.transaction((params: ClaimParams) => claim.get(params) as SuspensionRow | undefined);
    // A claim need not survive power loss: losing it only lets the call be claimed again at
    // once instead of after the lease, and a machine that lost power lost every holder too.
    // The outcome's commit syncs the log, claim included. So the claim skips its own sync.
    this.claimTransaction = synchronous === 'full' && relaxSync && restoreSync
      ? (params) => {
          relaxSync.run();
          try {
            return claimOnce.immediate(params);
          } finally {
            restoreSync.run();
          }
        }
      : (params) => claimOnce.immediate(params);
  }

  async insert(call: SuspendedCall): Promise<void> {
    this.assertOpen();
    checkInsertable(call);
    const id = call.request.id;
    const row = {
      id,
      kind: String(call.request.kind),
      tool: call.tool,
      args: toJson(call.args ?? null, `the arguments of ${id}`),
      request: toJson(call.request, `the request ${id}`),
      call_id: call.callId ?? null,
      run_id: call.runId ?? null,
      status: call.status,
      created_at: call.createdAt,
      updated_at: call.updatedAt ?? null,
      answer: call.answer === undefined ? null : toJson(call.answer, `the answer to ${id}`),
      outcome: call.outcome === undefined ? null : toJson(call.outcome, `the outcome of ${id}`),
      lease_until: call.leaseUntil === undefined ? null : Date.parse(call.leaseUntil),
    };
    const changes = this.run(() => this.statements.insert.run(row).changes, `insert ${id}`);
    if (changes === 0) throw new DuplicateSuspensionError(id);
  }

  async get(id: string): Promise<SuspendedCall | undefined> {
    this.assertOpen();
    const row = this.run(() => this.statements.read.get(id) as SuspensionRow | undefined, `read ${id}`);
    return row ? toCall(row) : undefined;
  }

  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    this.assertOpen();
    const params = { status: filter.status, run_id: filter.runId, kind: filter.kind };
    const rows = this.run(() => this.listStatement(params).all(definedOnly(params)) as SuspensionRow[], 'list suspensions');
    return rows.map(toCall);
  }

  async claim(id: string, answer: Answer, leaseMs: number, now: Date): Promise<Claim | undefined> {
    this.assertOpen();
    const token = randomUUID();
    const params: ClaimParams = {
      id,
      answer: toJson(answer, `the answer to ${id}`),
      now: now.getTime(),
      lease_until: now.getTime() + leaseMs,
      token,
      updated_at: now.toISOString(),
    };
    const row = this.run(() => this.claimTransaction(params), `claim ${id}`);
    return row ? { id, token, call: toCall(row) } : undefined;
  }

  async complete(claim: Claim, status: SettledStatus, outcome: ToolResult, now: Date): Promise<boolean> {
    this.assertOpen();
    const params = { id: claim.id, token: claim.token, status, outcome: toJson(outcome, `the outcome of ${claim.id}`), updated_at: now.toISOString() };
    return this.run(() => this.statements.complete.run(params).changes === 1, `complete ${claim.id}`);
  }

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    this.assertOpen();
    const params = {
      run_id: checkpoint.runId,
      version: checkpoint.version,
      state: toJson(checkpoint.state, `the checkpoint of run ${checkpoint.runId}`),
      updated_at: checkpoint.updatedAt,
    };
    if (!Number.isInteger(checkpoint.version) || checkpoint.version < 1) return false;
    const statement = checkpoint.version === 1 ? this.statements.insertRun : this.statements.updateRun;
    return this.run(() => statement.run(params).changes === 1, `save run ${checkpoint.runId}`);
  }

  async loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    this.assertOpen();
    const row = this.run(() => this.statements.readRun.get(runId) as RunRow | undefined, `load run ${runId}`);
    if (!row) return undefined;
    return { runId: row.run_id, version: row.version, state: parseJson(row.state, `run ${runId}`), updatedAt: row.updated_at };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  /** One statement per combination of filters, so each can use its index (an `IS NULL OR` test would defeat them). */
  private listStatement(params: Record<'status' | 'run_id' | 'kind', string | undefined>): Database.Statement {
    const columns = (Object.keys(params) as Array<keyof typeof params>).filter((column) => params[column] !== undefined);
    const key = columns.join(',');
    let statement = this.listStatements.get(key);
    if (!statement) {
      const where = columns.length === 0 ? '' : `WHERE ${columns.map((column) => `${column} = @${column}`).join(' AND ')}`;
      statement = this.db.prepare(`SELECT * FROM suspensions ${where} ORDER BY created_at, seq`);
      this.listStatements.set(key, statement);
    }
    return statement;
  }

  private assertOpen(): void {
    if (this.closed) throw new PendingStoreError(`the SQLite pending store ${this.filename} is closed`);
  }

  private run<T>(work: () => T, what: string): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof ToolnexusError) throw error;
      throw new PendingStoreError(`SQLite pending store ${this.filename} could not ${what}: ${messageOf(error)}`, { cause: error });
    }
  }
}

interface ClaimParams {
  id: string;
  answer: string;
  now: number;
  lease_until: number;
  token: string;
  updated_at: string;
}

/** Creates the schema on a new file, or checks that an existing one is a version this code reads. */
function migrate(db: Database.Database, filename: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
    const row = db.prepare('SELECT MAX(version) AS version FROM schema_version').get() as { version: number | null };
    const current = row.version ?? 0;
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new PendingStoreError(`SQLite file ${filename} has pending-store schema version ${current}; this library reads up to ${SQLITE_SCHEMA_VERSION}`);
    }
    if (current < 1) {
      db.exec(`
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
        INSERT INTO schema_version (version) VALUES (1);
      `);
    }
  }).immediate();
}

function prepare(db: Database.Database, synchronous: 'full' | 'normal') {
  return {
    relaxSync: synchronous === 'full' ? db.prepare('PRAGMA synchronous = NORMAL') : undefined,
    restoreSync: synchronous === 'full' ? db.prepare('PRAGMA synchronous = FULL') : undefined,
    insert: db.prepare(`
      INSERT INTO suspensions (id, kind, tool, args, request, call_id, run_id, status, created_at, updated_at, answer, outcome, lease_until)
      VALUES (@id, @kind, @tool, @args, @request, @call_id, @run_id, @status, @created_at, @updated_at, @answer, @outcome, @lease_until)
      ON CONFLICT (id) DO NOTHING`),
    read: db.prepare('SELECT * FROM suspensions WHERE id = ?'),
    claim: db.prepare(`
      UPDATE suspensions
      SET status = 'resolving', answer = @answer, lease_until = @lease_until, lease_token = @token, updated_at = @updated_at
      WHERE id = @id AND (status = 'pending' OR (status = 'resolving' AND lease_until < @now))
      RETURNING *`),
    complete: db.prepare(`
      UPDATE suspensions
      SET status = @status, outcome = @outcome, lease_until = NULL, lease_token = NULL, updated_at = @updated_at
      WHERE id = @id AND status = 'resolving' AND lease_token = @token`),
    insertRun: db.prepare(`
      INSERT INTO runs (run_id, version, state, updated_at) VALUES (@run_id, @version, @state, @updated_at)
      ON CONFLICT (run_id) DO NOTHING`),
    updateRun: db.prepare(`
      UPDATE runs SET version = @version, state = @state, updated_at = @updated_at
      WHERE run_id = @run_id AND version = @version - 1`),
    readRun: db.prepare('SELECT * FROM runs WHERE run_id = ?'),
  };
}

function toCall(row: SuspensionRow): SuspendedCall {
  const call: SuspendedCall = {
    request: parseJson<PendingRequest>(row.request, `the request ${row.id}`),
    tool: row.tool,
    args: parseJson<unknown>(row.args, `the arguments of ${row.id}`),
    status: row.status,
    createdAt: row.created_at,
  };
  if (row.call_id !== null) call.callId = row.call_id;
  if (row.run_id !== null) call.runId = row.run_id;
  if (row.updated_at !== null) call.updatedAt = row.updated_at;
  if (row.answer !== null) call.answer = parseJson<Answer>(row.answer, `the answer to ${row.id}`);
  if (row.outcome !== null) call.outcome = parseJson<ToolResult>(row.outcome, `the outcome of ${row.id}`);
  if (row.lease_until !== null && row.status === 'resolving') call.leaseUntil = new Date(row.lease_until).toISOString();
  return call;
}

function definedOnly(params: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function parseJson<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new PendingStoreError(`the stored JSON of ${what} is corrupt: ${messageOf(error)}`, { cause: error });
  }
}
