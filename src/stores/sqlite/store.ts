import type { SessionStore } from '../../sessions/store';
import type { PrunableStore, PruneOptions, PruneReport } from '../../runner/durability/retention';
import { pruneInBatches } from '../retention';
import { sqlitePruneTables } from './prune';
import { DuplicateSuspensionError, StoreError, ToolnexusError } from '../../errors';
import { messageOf } from '../../errors/message';
import type { Answer, ToolResult } from '../../results/wire';
import type { KeyedCallStore, KeyedStart } from '../../suspension/keyed';
import { beginKeyed, finishKeyed, renewKeyed } from './keyed';
import type { Receipt } from '../../toolkit/context';
import type { RunCheckpoint, RunListing, RunStore, StaleRunFilter } from '../../runner/core/store';
import { RUNNING_PHASE, staleRunLimit, versionCanFollow } from '../../runner/durability/store-checks';
import type { Audit, HistoryFilter, Principal } from '../../suspension/audit';
import { jsonCopy, toJson } from '../../suspension/json';
import type {
  Claim,
  Settlement,
  SettledPage,
  SettledPageQuery,
  SuspendedCall,
  SuspensionFilter,
  SuspensionStore,
} from '../../suspension/store';
import { pageStart } from '../../suspension/pages';
import type { Grant, GrantFilter } from '../../suspension/grants';
import { callOf, grantOf, parseStored, rowOf, settledPageOf, type RunRow, type SuspensionRow } from '../rows';
import { createPrivately, immediate, sqliteOpener, type SqliteConnection, type SqliteStatement } from './driver';
import type { SqliteStoreOptions } from './options';
import { prepare, setUp, SUSPENSION_COLUMNS } from './schema';
import { SqliteSessions } from './sessions';
import type { SqliteHost } from './part';
import { SqliteA2ATasks } from './a2a-tasks';
import { StoreWithMcpTasks } from '../mcp-tasks';
import { SqliteMcpTasks } from './mcp-tasks';
import { SqliteDeliveries } from './deliveries';
import type { DeliveryStore } from '../../deliveries/store';
import { SqliteStreamLog } from './streams';
import { SqliteSteers } from './steers';
import type { StreamLogStore } from '../../sessions/stream-log';

/**
 * Keeps suspended calls in a SQLite file: the embedded store for anything that must survive
 * a restart, shared safely by every process on one machine. The driver is node:sqlite where
 * the runtime has it (Node.js 22.13 and later), else the optional peer better-sqlite3; the
 * `driver` option chooses (docs/deploying.md, "Which SQLite driver").
 *
 * The file runs in WAL mode with a busy timeout; its schema is created on first open,
 * versioned in a `schema_version` table and upgraded in place. `status`, `run_id` and
 * `kind` are indexed columns, so listing and claiming stay flat as the table grows. A claim
 * is one conditional UPDATE inside an IMMEDIATE transaction: the database, not this process,
 * decides the single winner. Leases are judged by SQLite's clock (the machine's, read in the statement), which every process on
 * the one host shares.
 *
 * @example
 * ```ts
 * const store = new SqliteStore({ filename: './suspensions.db' })
 * const coordinator = new ResumeCoordinator({ toolkit, store })
 * ```
 */
export class SqliteStore extends StoreWithMcpTasks implements SuspensionStore, RunStore, PrunableStore, KeyedCallStore {
  /** The database file this store opened. */
  readonly filename: string;
  /** The driver that opened the file: node:sqlite or better-sqlite3. */
  readonly driver: 'node:sqlite' | 'better-sqlite3';
  private readonly db: SqliteConnection;
  private readonly statements: ReturnType<typeof prepare>;
  private readonly listStatements = new Map<string, SqliteStatement>();
  /** Sessions (docs/chat.md): in the same file; their SQL is ./sessions.ts. */
  protected readonly sessions: SessionStore;
  /** A2A task records (docs/a2a.md, "Listing and push"): their SQL is ./a2a-tasks.ts. */
  protected readonly a2aTasks: SqliteA2ATasks;
  /** The cards channels posted for pending calls (docs/channels.md), in the same file. */
  readonly deliveries: DeliveryStore;
  /** Stream logs (docs/chat.md, "Reconnecting"): in the same file; their SQL is ./streams.ts. */
  protected readonly streams: StreamLogStore;
  /** Messages steered into runs driven elsewhere (docs/agents.md, "Steering"): their SQL is ./steers.ts. */
  protected readonly steers: SqliteSteers;
  /** Tasks of served MCP calls (docs/mcp.md, "Tasks"): their SQL is ./mcp-tasks.ts. */
  protected readonly mcpTasks: SqliteMcpTasks;
  private closed = false;

  constructor(options: SqliteStoreOptions | string) {
    super();
    const { filename, busyTimeoutMs = 5000, synchronous = 'full', driver } = typeof options === 'string' ? { filename: options } : options;
    if (typeof filename !== 'string' || filename === '') throw new StoreError('SqliteStore needs a filename');
    this.filename = filename;
    // The driver first: a store that cannot be built leaves no empty file behind.
    const open = sqliteOpener(driver);
    createPrivately(filename);
    try {
      this.db = open(filename);
    } catch (error) {
      if (error instanceof ToolnexusError) throw error;
      throw new StoreError(`cannot open SQLite file ${filename}: ${messageOf(error)}`, { cause: error });
    }
    this.driver = this.db.driver;
    try {
      setUp(this.db, filename, Math.max(0, Math.floor(busyTimeoutMs)), synchronous);
      this.statements = prepare(this.db, synchronous);
      const host: SqliteHost = { db: this.db, run: (work, what) => this.run(work, what), assertOpen: () => this.assertOpen() };
      this.deliveries = new SqliteDeliveries(host);
      this.sessions = new SqliteSessions(host);
      this.a2aTasks = new SqliteA2ATasks(host);
      // A stream log's commits are not synced to disk: a part lost to a power cut costs a
      // reconnecting page its last parts, which the session has once the run ends.
      this.streams = new SqliteStreamLog(this.db, (work, what) => this.run(() => this.relaxedSync(work), what), host.assertOpen);
      this.steers = new SqliteSteers(this.db, host.run, host.assertOpen);
      this.mcpTasks = new SqliteMcpTasks(host);
    } catch (error) {
      this.db.close();
      if (error instanceof ToolnexusError) throw error;
      throw new StoreError(`cannot use SQLite file ${filename} as a store: ${messageOf(error)}`, { cause: error });
    }
  }

  async insert(call: SuspendedCall): Promise<void> {
    this.assertOpen();
    const row = rowOf(call);
    if (!this.run(() => this.insertRow(row), `insert ${row.id}`)) throw new DuplicateSuspensionError(row.id);
  }

  async get(id: string): Promise<SuspendedCall | undefined> {
    this.assertOpen();
    const row = this.run(() => this.statements.read.get(id) as SuspensionRow | undefined, `read ${id}`);
    return row ? callOf(row) : undefined;
  }

  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    this.assertOpen();
    const params = { status: filter.status, run_id: filter.runId, kind: filter.kind };
    const rows = this.run(() => this.listStatement(params).all(definedOnly(params)) as SuspensionRow[], 'list suspensions');
    return rows.map(callOf);
  }

  async history(filter: HistoryFilter = {}): Promise<SuspendedCall[]> {
    this.assertOpen();
    const params = { status: filter.status, kind: filter.kind, run_id: filter.runId, tool: filter.tool };
    const statement = this.historyStatement(params);
    const rows = this.run(
      () => statement.all({ ...definedOnly(params), limit: filter.limit ?? -1 }) as SuspensionRow[],
      'read the suspension history',
    );
    return rows.map(callOf);
  }

  async settledPage(query: SettledPageQuery): Promise<SettledPage> {
    this.assertOpen();
    const start = pageStart(query);
    const params = {
      since: query.since,
      until: query.until ?? null,
      at: start.at,
      seq: start.seq,
      tools: query.tools === undefined ? null : JSON.stringify(query.tools),
      // One more than asked: whether it comes back says whether there is a next page.
      limit: query.limit + 1,
    };
    const rows = this.run(() => this.statements.settledPage.all(params) as Array<SuspensionRow & { seq: number }>, 'read settled calls');
    return settledPageOf(rows, query.limit);
  }

  async claim(id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<Claim | undefined> {
    this.assertOpen();
    const answerJson = toJson(answer, `the answer to ${id}`);
    // A claim need not survive power loss: losing it only lets the call be claimed again at
    // once instead of after the lease, and a machine that lost power lost every holder too.
    // The outcome's commit syncs the log, claim included. So the claim skips its own sync.
    const params: ClaimParams = {
      id,
      answer: answerJson,
      lease_ms: Math.ceil(leaseMs),
      answered_by: audit?.by === undefined ? null : toJson(audit.by, `the principal who answered ${id}`),
      comment: audit?.comment ?? null,
    };
    // The clock is SQLite's, read by the claiming statement once the write lock is held, so a
    // wait for another writer neither shortens the lease granted nor judges the old one by a
    // stale now, and a process whose own clock is off judges nothing.
    const claimed = this.run(
      () => this.relaxedSync(() => immediate(this.db, () => this.statements.claim.get(params) as SuspensionRow | undefined)),
      `claim ${id}`,
    );
    if (!claimed) return undefined;
    const call = callOf(claimed);
    return { id, fence: call.fence as number, call, at: claimed.answered_at as string };
  }

  async sign(id: string, by: Principal, comment?: string, declined?: boolean): Promise<SuspendedCall | undefined> {
    this.assertOpen();
    const signer = jsonCopy(by, `the principal signing ${id}`);
    return this.run(() => immediate(this.db, () => this.signInTransaction(id, signer, comment, declined === true)), `sign ${id}`);
  }

  /** Read, add, write under SQLite's write lock: signers in other processes wait their turn. */
  private signInTransaction(id: string, by: Principal, comment: string | undefined, declined: boolean): SuspendedCall | undefined {
    const row = this.statements.read.get(id) as SuspensionRow | undefined;
    if (row === undefined) return undefined;
    const call = callOf(row);
    const signatures = call.signatures ?? [];
    if (call.status !== 'pending' || signatures.some((s) => s.by.id === by.id)) return call;
    const at = (this.statements.now.get() as { now: string }).now;
    const next = [
      ...signatures,
      { by, at, ...(comment === undefined ? {} : { comment }), ...(declined ? { declined: true as const } : {}) },
    ];
    this.statements.sign.run({ id, at, signatures: toJson(next, `the signatures of ${id}`) });
    return { ...call, signatures: next, updatedAt: at };
  }

  async now(): Promise<number> {
    this.assertOpen();
    return Date.parse(this.run(() => (this.statements.now.get() as { now: string }).now, 'read the clock'));
  }

  async insertGrant(grant: Grant): Promise<void> {
    this.assertOpen();
    const params = { id: grant.id, tool: grant.tool, grant_json: toJson(grant, `grant ${grant.id}`) };
    const inserted = this.run(() => this.statements.insertGrant.run(params).changes === 1, `insert grant ${grant.id}`);
    if (!inserted) throw new StoreError(`grant ${grant.id} is already recorded`);
  }

  async revokeGrant(id: string): Promise<Grant | undefined> {
    this.assertOpen();
    const row = this.run(
      () => this.statements.revokeGrant.get(id) as { grant_json: string; revoked_at: string | null } | undefined,
      `revoke grant ${id}`,
    );
    return row === undefined ? undefined : grantOf(row.grant_json, row.revoked_at);
  }

  async listGrants(filter?: GrantFilter): Promise<Grant[]> {
    this.assertOpen();
    const { listGrants, listToolGrants } = this.statements;
    const rows = this.run(
      () => (filter ? listToolGrants.all(filter.tool) : listGrants.all()) as Array<{ grant_json: string; revoked_at: string | null }>,
      'list grants',
    );
    return rows.map((row) => grantOf(row.grant_json, row.revoked_at));
  }

  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    this.assertOpen();
    const params = { id: claim.id, fence: claim.fence, lease_ms: Math.ceil(leaseMs) };
    // Like a claim, a renewal lost to power loss loses nothing a live holder needs.
    return this.run(() => this.relaxedSync(() => this.statements.renew.run(params).changes === 1), `renew ${claim.id}`);
  }

  async complete(claim: Claim, settlement: Settlement): Promise<boolean> {
    this.assertOpen();
    const { status, next } = settlement;
    const outcome = toJson(settlement.outcome, `the outcome of ${claim.id}`);
    const nextRow = next === undefined ? undefined : rowOf(next);
    const receipts = settlement.receipts === undefined ? null : toJson(settlement.receipts, `the receipts of ${claim.id}`);
    const params = { id: claim.id, fence: claim.fence, status, outcome, next_id: nextRow?.id ?? null, receipts };
    // One UPDATE commits atomically on its own; only a next link needs the surrounding transaction.
    if (!nextRow) return this.run(() => this.statements.complete.run(params).changes === 1, `complete ${claim.id}`);
    const settleAndLink = (): boolean => {
      if (this.statements.complete.run(params).changes !== 1) return false;
      // Throwing rolls the settlement back with it: the call stays claimed, nothing is inserted.
      if (!this.insertRow(nextRow)) throw new DuplicateSuspensionError(nextRow.id);
      return true;
    };
    return this.run(() => immediate(this.db, settleAndLink), `complete ${claim.id}`);
  }

  async recordReceipt(claim: Claim, receipt: Receipt): Promise<boolean> {
    this.assertOpen();
    const params = { id: claim.id, fence: claim.fence, receipt: toJson(receipt, `a receipt of ${claim.id}`) };
    return this.run(() => this.statements.receipt.run(params).changes === 1, `record a receipt of ${claim.id}`);
  }

  async beginKeyed(key: string, leaseMs: number, retentionMs: number): Promise<KeyedStart> {
    this.assertOpen();
    return this.run(() => beginKeyed(this.db, key, leaseMs, retentionMs), 'begin a keyed call');
  }

  async finishKeyed(key: string, fence: number, outcome: ToolResult): Promise<boolean> {
    this.assertOpen();
    return this.run(() => finishKeyed(this.db, key, fence, outcome), 'finish a keyed call');
  }

  async renewKeyed(key: string, fence: number, leaseMs: number): Promise<boolean> {
    this.assertOpen();
    // Like a claim's renewal, one lost to power loss loses nothing a live holder needs.
    return this.run(() => this.relaxedSync(() => renewKeyed(this.db, key, fence, leaseMs)), 'renew a keyed call');
  }

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    this.assertOpen();
    const params = {
      run_id: checkpoint.runId,
      version: checkpoint.version,
      state: toJson(checkpoint.state, `the checkpoint of run ${checkpoint.runId}`),
      updated_at: checkpoint.updatedAt,
    };
    if (!versionCanFollow(checkpoint.version)) return false;
    const statement = checkpoint.version === 1 ? this.statements.insertRun : this.statements.updateRun;
    return this.run(() => statement.run(params).changes === 1, `save run ${checkpoint.runId}`);
  }

  async loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    this.assertOpen();
    const row = this.run(() => this.statements.readRun.get(runId) as RunRow | undefined, `load run ${runId}`);
    if (!row) return undefined;
    return { runId: row.run_id, version: row.version, state: parseStored(row.state, `run ${runId}`), updatedAt: row.updated_at };
  }

  /**
   * Deletes settled suspensions, finished runs and idle sessions older than the cut-offs
   * given, a batch at a time, each batch one short statement (docs/deploying.md, "Retention").
   */
  async prune(options: PruneOptions): Promise<PruneReport> {
    this.assertOpen();
    return pruneInBatches(options, (checked) => sqlitePruneTables(this.db, (work, what) => this.run(work, what), checked));
  }

  async listStaleRuns(filter: StaleRunFilter): Promise<RunListing[]> {
    this.assertOpen();
    const limit = staleRunLimit(filter);
    // The phase is read from the state's JSON, written as a literal so the partial index
    // runs_running (which holds only running runs) serves the scan.
    const rows = this.run(
      () =>
        this.db
          .prepare(
            `SELECT run_id, version, updated_at FROM runs
             WHERE updated_at < @before AND json_extract(state, '$.phase') = '${RUNNING_PHASE}'
             ORDER BY updated_at LIMIT @limit`,
          )
          .all({ before: filter.updatedBefore, limit }) as Array<Omit<RunRow, 'state'>>,
      'list stale runs',
    );
    return rows.map((row) => ({ runId: row.run_id, version: row.version, updatedAt: row.updated_at }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  /** Inserts a row unless its id is taken; false when it is. The `args` column predates optional args: it holds `null` for none. */
  private insertRow(row: SuspensionRow): boolean {
    return this.statements.insert.run({ ...row, args: row.args ?? 'null' }).changes === 1;
  }

  /** Runs `work` (one autocommit statement or transaction) without syncing its commit to disk. */
  private relaxedSync<T>(work: () => T): T {
    const { relaxSync, restoreSync } = this.statements;
    if (!relaxSync || !restoreSync) return work();
    relaxSync.run();
    try {
      return work();
    } finally {
      restoreSync.run();
    }
  }

  /** One statement per combination of filters, so each can use its index (an `IS NULL OR` test would defeat them). */
  private listStatement(params: Record<'status' | 'run_id' | 'kind', string | undefined>): SqliteStatement {
    const columns = (Object.keys(params) as Array<keyof typeof params>).filter((column) => params[column] !== undefined);
    const key = columns.join(',');
    let statement = this.listStatements.get(key);
    if (!statement) {
      const where = columns.length === 0 ? '' : `WHERE ${columns.map((column) => `${column} = @${column}`).join(' AND ')}`;
      // A run's calls are few; without statistics the planner may scan a kind or status
      // instead (it did once the audit columns widened the row), so a run filter names its index.
      const index = columns.includes('run_id') ? 'INDEXED BY suspensions_run' : '';
      statement = this.db.prepare(`SELECT ${SUSPENSION_COLUMNS} FROM suspensions ${index} ${where} ORDER BY created_at, seq`);
      this.listStatements.set(key, statement);
    }
    return statement;
  }

  /** Like {@link listStatement}: one statement per combination of filters, newest settlement first over the settled index. */
  private historyStatement(params: Record<'status' | 'kind' | 'run_id' | 'tool', string | undefined>): SqliteStatement {
    const columns = (Object.keys(params) as Array<keyof typeof params>).filter((column) => params[column] !== undefined);
    const key = `history:${columns.join(',')}`;
    let statement = this.listStatements.get(key);
    if (!statement) {
      const where = [SETTLED, ...columns.map((column) => `${column} = @${column}`)].join(' AND ');
      // Without statistics the planner prefers the status index and sorts every settled row;
      // walking the settled index newest first stops after `limit` rows instead.
      const index = columns.every((column) => column === 'status') ? 'INDEXED BY suspensions_settled' : '';
      statement = this.db.prepare(
        `SELECT ${SUSPENSION_COLUMNS} FROM suspensions ${index} WHERE ${where} ORDER BY updated_at DESC, seq DESC LIMIT @limit`,
      );
      this.listStatements.set(key, statement);
    }
    return statement;
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError(`the SQLite store ${this.filename} is closed`);
  }

  private run<T>(work: () => T, what: string): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof ToolnexusError) throw error;
      throw new StoreError(`SQLite store ${this.filename} could not ${what}: ${messageOf(error)}`, { cause: error });
    }
  }
}

interface ClaimParams {
  id: string;
  answer: string;
  lease_ms: number;
  answered_by: string | null;
  comment: string | null;
}

/** The settled statuses, written as the partial index `suspensions_settled` names them, so the planner uses it. */
const SETTLED = "status IN ('resolved', 'declined', 'expired', 'cancelled')";

function definedOnly(params: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined));
}
