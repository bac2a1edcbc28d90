import type { Pool, QueryResultRow } from 'pg';
import type { PrunableStore, PruneOptions, PruneReport } from '../../runner/durability/retention';
import { pruneInBatches } from '../retention';
import { postgresPruneTables } from './prune';
import { PreparedStatements } from './prepared';
import type { SessionStore } from '../../sessions/store';
import { DuplicateSuspensionError, StoreError, StoreUnavailableError } from '../../errors';
import type { Answer, ToolResult } from '../../results/wire';
import type { RunCheckpoint, RunListing, RunStore, StaleRunFilter } from '../../runner/core/store';
import { RUNNING_PHASE, staleRunLimit, versionCanFollow } from '../../runner/durability/store-checks';
import type { Audit, HistoryFilter, Principal } from '../../suspension/audit';
import { toJson } from '../../suspension/json';
import type { Claim, EarlyClaim, Settlement, SettledPage, SettledPageQuery } from '../../suspension/store';
import type { SuspendedCall, SuspensionFilter, SuspensionStore } from '../../suspension/store';
import { settledPageStatement } from './pages';
import type { Receipt } from '../../toolkit/context';
import type { KeyedCallStore, KeyedStart } from '../../suspension/keyed';
import { beginKeyed, finishKeyed, renewKeyed } from './keyed';
import type { Grant, GrantFilter } from '../../suspension/grants';
import { sleep } from '../../timing/sleep';
import { callOf, parseStored, rowOf, settledPageOf, type RunRow, type SuspensionRow } from '../rows';
import { insertGrant, listGrants, revokeGrant, type GrantsTable } from './grants';
import { isUniqueViolation, translate } from './errors';
import type { PostgresStoreOptions } from './options';
import { resolveOptions } from './resolve';
import { EarlyClaims } from './early';
import { Settles } from './settle';
import { prepareTables, tablesOf, type Tables } from './schema';
import { PostgresA2ATasks } from './a2a-tasks';
import { StoreWithMcpTasks } from '../mcp-tasks';
import { PostgresMcpTasks } from './mcp-tasks';
import { PostgresSessions } from './sessions';
import type { PostgresQuery } from './part';
import { PostgresDeliveries } from './deliveries';
import type { DeliveryStore } from '../../deliveries/store';
import { PostgresStreamLog, streamTables } from './streams';
import { PostgresSteers, steersTable } from './steers';
import type { StreamLogStore } from '../../sessions/stream-log';
import { CLOCK, INSERT_COLUMNS, SUSPENSION_COLUMNS, equalities, insertPlaceholders, insertValues } from './columns';

const FIRST_RETRY_PAUSE_MS = 50;
const MAX_RETRY_PAUSE_MS = 1_000;

/**
 * A {@link SuspensionStore} and {@link RunStore} in PostgreSQL (via `pg`), for a service that runs on several
 * processes or machines: every process that shares the database sees the same suspended
 * calls and run checkpoints, and a claim is one conditional `UPDATE … RETURNING`, so of
 * two workers racing for one call exactly one wins. Leases are granted and judged by the
 * database server's clock, so a worker whose own clock is off cannot take a live claim.
 *
 * Tables are created (and their layout versioned and upgraded) on first use. When the
 * database cannot be reached or drops the connection, methods reject with
 * {@link StoreUnavailableError}; what was already stored stays stored, so the caller
 * retries once the database is back.
 *
 * @example
 * const store = new PostgresStore({ connectionString: process.env.DATABASE_URL, schema: 'agents' });
 * const coordinator = new ResumeCoordinator({ toolkit, store });
 * // ... on shutdown:
 * await store.close();
 */
export class PostgresStore extends StoreWithMcpTasks implements SuspensionStore, RunStore, PrunableStore, KeyedCallStore {
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly autoMigrate: boolean;
  private readonly completeRetryMs: number;
  /** Names of the statements prepared on each connection, when `preparedStatements` is on. */
  private readonly statements: PreparedStatements | undefined;
  private readonly tables: Tables;
  /** The answer path's statements (./early.ts, ./settle.ts), their texts built once. */
  private readonly early: EarlyClaims;
  private readonly settles: Settles;
  private readyPromise: Promise<void> | undefined;
  /** Sessions (docs/chat.md): in the same schema; their SQL is ./sessions.ts. */
  protected readonly sessions: SessionStore;
  /** A2A task records (docs/a2a.md, "Listing and push"): their SQL is ./a2a-tasks.ts. */
  protected readonly a2aTasks: PostgresA2ATasks;
  /** The cards channels posted for pending calls (docs/channels.md), in the same schema. */
  readonly deliveries: DeliveryStore;
  /** Stream logs (docs/chat.md, "Reconnecting"): in the same schema; their SQL is ./streams.ts. */
  protected readonly streams: StreamLogStore;
  /** Messages steered into runs driven elsewhere (docs/agents.md, "Steering"): their SQL is ./steers.ts. */
  protected readonly steers: PostgresSteers;
  /** Tasks of served MCP calls (docs/mcp.md, "Tasks"): their SQL is ./mcp-tasks.ts. */
  protected readonly mcpTasks: PostgresMcpTasks;
  private closed = false;
  /** {@link query} as a value, for the parts of this store kept in files of their own. */
  private readonly queries: PostgresQuery = (operation, text, values) => this.query(operation, text, values);

  constructor(options: PostgresStoreOptions) {
    super();
    const resolved = resolveOptions(options);
    this.pool = resolved.pool;
    this.ownsPool = resolved.ownsPool;
    this.autoMigrate = resolved.autoMigrate;
    this.completeRetryMs = resolved.completeRetryMs;
    this.statements = resolved.preparedStatements ? new PreparedStatements() : undefined;
    this.tables = tablesOf(resolved.schema, resolved.tablePrefix);
    this.early = new EarlyClaims(this.tables.suspensions);
    this.settles = new Settles(this.tables.suspensions);
    const query = this.queries;
    this.sessions = new PostgresSessions(this.tables.sessions, query);
    this.a2aTasks = new PostgresA2ATasks(this.tables.a2aTasks, query, this.tables.runs);
    this.deliveries = new PostgresDeliveries(this.tables.deliveries, query);
    this.streams = new PostgresStreamLog(streamTables(resolved.schema, resolved.tablePrefix), query);
    this.steers = new PostgresSteers(steersTable(resolved.schema, resolved.tablePrefix), this.tables.runs, query);
    this.mcpTasks = new PostgresMcpTasks(this.tables.mcpTasks, query);
  }

  /**
   * Creates or upgrades the tables (whatever `autoMigrate` says), once per store: later
   * calls reuse the first result, and a failed attempt is retried on the next call. With
   * `autoMigrate` on, every method calls it first, so calling it yourself only makes a
   * service fail fast at boot (e.g. in a NestJS `onModuleInit`). Concurrent processes
   * serialise on a PostgreSQL advisory lock, so eight workers starting at once migrate once.
   */
  ensureSchema(): Promise<void> {
    return this.ready(true);
  }

  async insert(call: SuspendedCall): Promise<void> {
    const row = rowOf(call);
    const result = await this.query(
      `insert of suspension ${row.id}`,
      `INSERT INTO ${this.tables.suspensions} (${INSERT_COLUMNS}) VALUES (${insertPlaceholders(1)}) ON CONFLICT (id) DO NOTHING`,
      insertValues(row),
    );
    if (result.rowCount === 0) throw new DuplicateSuspensionError(row.id);
  }

  async get(id: string): Promise<SuspendedCall | undefined> {
    const result = await this.query<SuspensionRow>(
      `get of suspension ${id}`,
      `SELECT ${SUSPENSION_COLUMNS} FROM ${this.tables.suspensions} WHERE id = $1`,
      [id],
    );
    return result.rows[0] ? callOf(result.rows[0]) : undefined;
  }

  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    const values: unknown[] = [];
    const conditions = equalities(
      [
        ['status', filter.status],
        ['run_id', filter.runId],
        ['kind', filter.kind],
      ],
      values,
    );
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const result = await this.query<SuspensionRow>(
      'list of suspensions',
      `SELECT ${SUSPENSION_COLUMNS} FROM ${this.tables.suspensions} ${where} ORDER BY created_at COLLATE "C", seq`,
      values,
    );
    return result.rows.map(callOf);
  }

  async history(filter: HistoryFilter = {}): Promise<SuspendedCall[]> {
    const values: unknown[] = [];
    const conditions = [
      "status IN ('resolved', 'declined', 'expired', 'cancelled')",
      ...equalities(
        [
          ['status', filter.status],
          ['kind', filter.kind],
          ['run_id', filter.runId],
          ['tool', filter.tool],
        ],
        values,
      ),
    ];
    values.push(filter.limit ?? null);
    const result = await this.query<SuspensionRow>(
      'history of suspensions',
      `SELECT ${SUSPENSION_COLUMNS} FROM ${this.tables.suspensions} WHERE ${conditions.join(' AND ')}
        ORDER BY updated_at COLLATE "C" DESC NULLS LAST, seq DESC LIMIT $${values.length}::bigint`,
      values,
    );
    return result.rows.map(callOf);
  }

  async settledPage(query: SettledPageQuery): Promise<SettledPage> {
    const { text, values } = settledPageStatement(this.tables.suspensions, query);
    const result = await this.query<SuspensionRow & { seq: string }>('page of settled suspensions', text, values);
    return settledPageOf(result.rows, query.limit);
  }

  async claim(id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<Claim | undefined> {
    const answerJson = toJson(answer, `the answer to ${id}`);
    const byJson = audit?.by === undefined ? null : toJson(audit.by, `the principal who answered ${id}`);
    // One statement: under READ COMMITTED a second concurrent UPDATE of the row waits for the
    // first to commit, then re-checks the WHERE clause against the new row and matches nothing.
    const result = await this.query<SuspensionRow & { claimed_at: string }>(
      `claim of suspension ${id}`,
      `WITH ${CLOCK}
       UPDATE ${this.tables.suspensions}
          SET status = 'resolving', answer = $2::json, fence = COALESCE(fence, 0) + 1,
              lease_until_ms = clock.ms + $3::bigint, updated_at = clock.iso,
              answered_at = clock.iso, answered_by = $4::json, comment = $5::text
         FROM clock
        WHERE id = $1 AND (status = 'pending' OR (status = 'resolving' AND lease_until_ms < clock.ms))
        RETURNING ${SUSPENSION_COLUMNS}, clock.iso AS claimed_at`,
      [id, answerJson, Math.ceil(leaseMs), byJson, audit?.comment ?? null],
    );
    const row = result.rows[0];
    if (!row) return undefined;
    const call = callOf(row);
    return { id, fence: call.fence as number, call, at: row.claimed_at };
  }

  async sign(id: string, by: Principal, comment?: string, declined?: boolean): Promise<SuspendedCall | undefined> {
    const byJson = toJson(by, `the principal signing ${id}`);
    // One statement, as a claim: a concurrent signer's UPDATE waits for this one to commit, then
    // re-checks the WHERE clause against the row with this signature in it.
    const result = await this.query<SuspensionRow>(
      `signature of suspension ${id}`,
      `WITH ${CLOCK}
       UPDATE ${this.tables.suspensions}
          SET signatures = (COALESCE(signatures::jsonb, '[]'::jsonb)
                || jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('by', $2::jsonb, 'at', clock.iso, 'comment', $3::text, 'declined', $5::boolean))))::json,
              updated_at = clock.iso
         FROM clock
        WHERE id = $1 AND status = 'pending'
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(COALESCE(signatures::jsonb, '[]'::jsonb)) AS s WHERE s->'by'->>'id' = $4)
        RETURNING ${SUSPENSION_COLUMNS}`,
      // A decline is marked `declined: true`; an approval carries no such key (null is stripped).
      [id, byJson, comment ?? null, by.id, declined === true ? true : null],
    );
    const row = result.rows[0];
    if (row) return callOf(row);
    return this.get(id);
  }

  async now(): Promise<number> {
    const result = await this.query<{ ms: string }>('read of the clock', `WITH ${CLOCK} SELECT ms::text AS ms FROM clock`, []);
    return Number(result.rows[0]?.ms);
  }

  insertGrant(grant: Grant): Promise<void> {
    return insertGrant(this.grantsTable(), grant);
  }

  revokeGrant(id: string): Promise<Grant | undefined> {
    return revokeGrant(this.grantsTable(), id);
  }

  listGrants(filter?: GrantFilter): Promise<Grant[]> {
    return listGrants(this.grantsTable(), filter);
  }

  async renew(claim: Claim, leaseMs: number): Promise<boolean> {
    const result = await this.query(
      `renewal of suspension ${claim.id}`,
      `WITH ${CLOCK}
       UPDATE ${this.tables.suspensions} SET lease_until_ms = clock.ms + $3::bigint
         FROM clock
        WHERE id = $1 AND status = 'resolving' AND fence = $2`,
      [claim.id, claim.fence, Math.ceil(leaseMs)],
    );
    return result.rowCount === 1;
  }

  /** One plain `UPDATE` under the claim's fence, or with the next link inserted in the same statement (./settle.ts). */
  async complete(claim: Claim, settlement: Settlement): Promise<boolean> {
    const { text, values, next, counted } = this.settles.query(claim, settlement);
    try {
      const result = await this.retrying<{ settled: number }>(`completion of suspension ${claim.id}`, text, values);
      return counted === 'rowCount' ? result.rowCount === 1 : result.rows[0]?.settled === 1;
    } catch (error) {
      if (next && isUniqueViolation(error instanceof StoreError ? error.cause : error)) throw new DuplicateSuspensionError(next.id);
      throw error;
    }
  }

  /** Appended in one statement under the claim's fence, retried as a settle is: it must outlive a dropped connection. */
  async recordReceipt(claim: Claim, receipt: Receipt): Promise<boolean> {
    const result = await this.retrying(
      `receipt of suspension ${claim.id}`,
      `UPDATE ${this.tables.suspensions} SET receipts = (COALESCE(receipts::jsonb, '[]'::jsonb) || jsonb_build_array($3::jsonb))::json
        WHERE id = $1 AND status = 'resolving' AND fence = $2`,
      [claim.id, claim.fence, toJson(receipt, `a receipt of ${claim.id}`)],
    );
    return result.rowCount === 1;
  }

  beginKeyed(key: string, leaseMs: number, retentionMs: number): Promise<KeyedStart> {
    return beginKeyed(this.tables.keyed, this.queries, key, leaseMs, retentionMs);
  }

  /** Retried as a settle is: the outcome a repeated key gets must outlive a dropped connection. */
  finishKeyed(key: string, fence: number, outcome: ToolResult): Promise<boolean> {
    return finishKeyed(this.tables.keyed, (operation, text, values) => this.retrying(operation, text, values), key, fence, outcome);
  }

  /** One statement, not retried (as a claim's renewal): the keeper renews again well within the lease. */
  renewKeyed(key: string, fence: number, leaseMs: number): Promise<boolean> {
    return renewKeyed(this.tables.keyed, this.queries, key, fence, leaseMs);
  }

  /** The read and the claim of an answer in one statement (./early.ts): two round trips per resolve, not three. */
  claimEarly(id: string, answer: Answer, leaseMs: number, audit?: Audit): Promise<EarlyClaim | undefined> {
    return this.early.claim(this.queries, id, answer, leaseMs, audit);
  }

  /** Retried as a settle is: a refused answer must not stay claimed because of one dropped connection. */
  async restoreClaim(claim: Claim, read: SuspendedCall): Promise<boolean> {
    const { text, values } = this.early.restore(claim, read);
    const result = await this.retrying(`restore of suspension ${claim.id}`, text, values);
    return result.rowCount === 1;
  }

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    const { runId, version, state, updatedAt } = checkpoint;
    const stateJson = toJson(state, `the checkpoint of run ${runId}`);
    // Like the other stores: a version that cannot follow the stored one is a conflict.
    if (!versionCanFollow(version)) return false;
    const result =
      version === 1
        ? await this.query(
            `save of run ${runId}`,
            `INSERT INTO ${this.tables.runs} (run_id, version, state, updated_at) VALUES ($1, 1, $2::json, $3)
             ON CONFLICT (run_id) DO NOTHING`,
            [runId, stateJson, updatedAt],
          )
        : await this.query(
            `save of run ${runId}`,
            `UPDATE ${this.tables.runs} SET version = $2, state = $3::json, updated_at = $4
              WHERE run_id = $1 AND version = $2 - 1`,
            [runId, version, stateJson, updatedAt],
          );
    return result.rowCount === 1;
  }

  async loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    const result = await this.query<RunRow>(
      `load of run ${runId}`,
      `SELECT run_id, version, state::text AS state, updated_at FROM ${this.tables.runs} WHERE run_id = $1`,
      [runId],
    );
    const row = result.rows[0];
    if (!row) return undefined;
    return {
      runId: row.run_id,
      version: Number(row.version),
      state: parseStored<Record<string, unknown>>(row.state, `run ${runId}`),
      updatedAt: row.updated_at,
    };
  }

  async listStaleRuns(filter: StaleRunFilter): Promise<RunListing[]> {
    const limit = staleRunLimit(filter);
    // The phase is read from the state's JSON, written as a literal so the partial index
    // runs_running_idx (which holds only running runs) serves the scan.
    const result = await this.query<Omit<RunRow, 'state'>>(
      'listing of stale runs',
      `SELECT run_id, version, updated_at FROM ${this.tables.runs}
        WHERE updated_at COLLATE "C" < $1 AND (state->>'phase') = '${RUNNING_PHASE}'
        ORDER BY updated_at COLLATE "C" LIMIT $2`,
      [filter.updatedBefore, limit],
    );
    return result.rows.map((row) => ({ runId: row.run_id, version: Number(row.version), updatedAt: row.updated_at }));
  }

  /**
   * Deletes settled suspensions, finished runs and idle sessions older than the cut-offs
   * given, a batch at a time, each batch one short statement (docs/deploying.md, "Retention").
   */
  prune(options: PruneOptions): Promise<PruneReport> {
    return pruneInBatches(options, (checked) =>
      postgresPruneTables(
        this.tables,
        streamTables(this.tables.schema, this.tables.prefix),
        (operation, text, values) => this.query(operation, text, values),
        checked,
      ),
    );
  }

  /** Ends the pool if this store created it (a shared `pool` stays open for its owner). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }

  private grantsTable(): GrantsTable {
    return { name: this.tables.grants, query: this.queries };
  }

  private ready(mayMigrate: boolean): Promise<void> {
    if (this.closed) return Promise.reject(closedError());
    if (!this.readyPromise) {
      this.readyPromise = prepareTables(this.pool, this.tables, mayMigrate).catch((error: unknown) => {
        this.readyPromise = undefined;
        throw error;
      });
    }
    return this.readyPromise;
  }

  /** One statement, tried again while the database is unavailable, for up to `completeRetryMs`. */
  private async retrying<Row extends object = Record<string, unknown>>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<{ rows: Row[]; rowCount: number | null }> {
    const giveUpAt = Date.now() + this.completeRetryMs;
    for (let pause = FIRST_RETRY_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS)) {
      try {
        return await this.query<Row>(operation, text, values);
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || this.closed || Date.now() + pause > giveUpAt) throw error;
        await sleep(pause);
      }
    }
  }

  private async query<Row extends object = Record<string, unknown>>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<{ rows: Row[]; rowCount: number | null }> {
    await this.ready(this.autoMigrate);
    if (this.closed) throw closedError();
    try {
      const result = await this.pool.query<QueryResultRow>(this.statements ? this.statements.config(text, values) : { text, values });
      return { rows: result.rows as Row[], rowCount: result.rowCount };
    } catch (error) {
      throw translate(error, operation);
    }
  }
}

function closedError(): StoreError {
  return new StoreError('PostgresStore is closed');
}
