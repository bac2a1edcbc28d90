import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { DuplicateSuspensionError, InvalidArgumentError, PendingStoreError, StoreUnavailableError } from '../../errors';
import type { Answer, ToolResult } from '../../results/wire';
import { isSettled, isSuspensionStatus } from '../status';
import type {
  Claim,
  PendingStore,
  RunCheckpoint,
  SettledStatus,
  SuspendedCall,
  SuspensionFilter,
} from '../store';
import { toJson } from './json';
import { checkInsertable } from './validate';
import { messageOf } from '../../errors/message';

/**
 * `pg` is loaded when a store first builds its own pool, not when the package is imported:
 * it costs ~40 ms of CPU at startup (with `net`, `tls` and `crypto`), which an application
 * that never uses PostgreSQL, or hands in its own pool, should not pay.
 */
function loadPg(): typeof import('pg') {
  return require('pg') as typeof import('pg');
}

/** Where the store's tables live and how it rides out a database hiccup; shared by every connection variant. */
export interface PostgresStoreCommonOptions {
  /** Schema that holds the tables; created on first use when missing. Default `public`. */
  schema?: string;
  /**
   * Prefix of every table name, so several independent stores (or services) can share one
   * schema. Default `toolnexus_`, giving `toolnexus_suspensions`, `toolnexus_runs` and
   * `toolnexus_schema_version`.
   */
  tablePrefix?: string;
  /**
   * Create or upgrade the tables on first use (default `true`). Set `false` where the
   * service's database role may not run DDL: the tables must then be created beforehand
   * (by a privileged run of {@link PostgresPendingStore.ensureSchema}), and first use only
   * checks that their version is the one this library expects.
   */
  autoMigrate?: boolean;
  /**
   * How long `complete` keeps retrying when the database is unreachable (default 5000 ms;
   * 0 disables). A replay that ran while the database restarted then still stores its
   * outcome once the database is back, instead of failing and leaving the call to be
   * replayed again after its lease. Safe because completing is guarded by the claim token:
   * a retry after a lost reply, or after another process took the call over, changes nothing.
   */
  completeRetryMs?: number;
}

/** Let the store create and own its pool, from a connection string and/or `pg` pool settings. */
export interface PostgresStoreConnectionOptions extends PostgresStoreCommonOptions {
  /** `postgres://user:password@host:port/database`. Either this or `poolConfig` (or both). */
  connectionString?: string;
  /**
   * Settings of the pool the store creates (size, TLS, timeouts...). When it sets no
   * `connectionTimeoutMillis`, the store uses 10 s, so an unreachable server surfaces as
   * a {@link StoreUnavailableError} instead of a call that never settles.
   */
  poolConfig?: PoolConfig;
  pool?: undefined;
}

/** Share a pool the service already has (a NestJS provider, say). `close()` leaves it open. */
export interface PostgresStoreSharedPoolOptions extends PostgresStoreCommonOptions {
  pool: Pool;
  connectionString?: undefined;
  poolConfig?: undefined;
}

/** Options of {@link PostgresPendingStore}: a connection string / pool settings, or an existing `pg.Pool`. */
export type PostgresPendingStoreOptions = PostgresStoreConnectionOptions | PostgresStoreSharedPoolOptions;

/** The table layout version this code reads and writes. */
export const POSTGRES_STORE_SCHEMA_VERSION = 1;

const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;
const DEFAULT_COMPLETE_RETRY_MS = 5_000;
const FIRST_RETRY_PAUSE_MS = 50;
const MAX_RETRY_PAUSE_MS = 1_000;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL truncates longer identifiers silently; refusing them keeps table names predictable. */
const MAX_IDENTIFIER_BYTES = 63;
/** The longest name built from the prefix (an index), so no name the store creates is ever truncated. */
const LONGEST_NAME_SUFFIX = 'suspensions_status_idx';

/** Errors that mean "the database could not be reached or dropped the connection", not "the request was wrong". */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
]);
/** SQLSTATEs of a server that is shutting down, starting up, or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57P05']);
const DISCONNECT_MESSAGE = /connection terminated|timeout exceeded when trying to connect|connection error|not queryable|client was closed|server closed the connection/i;

interface SuspensionRow {
  id: string;
  tool: string;
  status: string;
  request: string;
  args: string | null;
  answer: string | null;
  outcome: string | null;
  call_id: string | null;
  run_id: string | null;
  created_at: string;
  updated_at: string | null;
  lease_until_ms: string | number | null;
}

interface RunRow {
  run_id: string;
  version: number;
  state: string;
  updated_at: string;
}

/**
 * A {@link PendingStore} in PostgreSQL (via `pg`), for a service that runs on several
 * processes or machines: every process that shares the database sees the same suspended
 * calls and run checkpoints, and a claim is one conditional `UPDATE … RETURNING`, so of
 * two workers racing for one call exactly one wins.
 *
 * Tables are created (and their layout versioned) on first use. When the database cannot
 * be reached or drops the connection, methods reject with {@link StoreUnavailableError};
 * what was already stored stays stored, so the caller retries once the database is back.
 *
 * @example
 * const store = new PostgresPendingStore({ connectionString: process.env.DATABASE_URL, schema: 'agents' });
 * const coordinator = new ResumeCoordinator({ toolkit, store });
 * // ... on shutdown:
 * await store.close();
 */
export class PostgresPendingStore implements PendingStore {
  private readonly pool: Pool;
  private readonly ownsPool: boolean;
  private readonly autoMigrate: boolean;
  private readonly completeRetryMs: number;
  private readonly schemaName: string;
  private readonly prefix: string;
  private readonly suspensions: string;
  private readonly runs: string;
  private readonly versions: string;
  private readyPromise: Promise<void> | undefined;
  private closed = false;

  constructor(options: PostgresPendingStoreOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError('PostgresPendingStore needs options: { connectionString } or { poolConfig } or { pool }');
    }
    this.schemaName = checkIdentifier(options.schema ?? 'public', 'schema', '');
    this.prefix = checkIdentifier(options.tablePrefix ?? 'toolnexus_', 'tablePrefix', LONGEST_NAME_SUFFIX);
    this.autoMigrate = options.autoMigrate ?? true;
    this.completeRetryMs = options.completeRetryMs ?? DEFAULT_COMPLETE_RETRY_MS;
    if (typeof this.completeRetryMs !== 'number' || !Number.isFinite(this.completeRetryMs) || this.completeRetryMs < 0) {
      throw new InvalidArgumentError(`PostgresPendingStore: completeRetryMs must be a non-negative number of milliseconds, got ${String(options.completeRetryMs)}`);
    }
    this.suspensions = this.table('suspensions');
    this.runs = this.table('runs');
    this.versions = this.table('schema_version');

    if (options.pool !== undefined) {
      if (options.connectionString !== undefined || options.poolConfig !== undefined) {
        throw new InvalidArgumentError('PostgresPendingStore: give either an existing pool or connection settings, not both');
      }
      // Duck-typed: a service may load its own copy of `pg`, whose Pool is another class.
      const { pool } = options as { pool: Partial<Pool> };
      if (typeof pool !== 'object' || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
        throw new InvalidArgumentError('PostgresPendingStore: options.pool must be a pg.Pool (with query() and connect())');
      }
      this.pool = options.pool;
      this.ownsPool = false;
    } else {
      const { connectionString, poolConfig } = options;
      if (connectionString === undefined && poolConfig === undefined) {
        throw new InvalidArgumentError('PostgresPendingStore needs options: { connectionString } or { poolConfig } or { pool }');
      }
      if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString.trim() === '')) {
        throw new InvalidArgumentError('PostgresPendingStore: connectionString must be a non-empty postgres:// URL');
      }
      this.pool = new (loadPg().Pool)({
        connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
        ...poolConfig,
        ...(connectionString !== undefined ? { connectionString } : {}),
      });
      // An idle pooled connection that the server drops (a restart, a failover) is reported
      // on the pool; unheard, Node would crash the process. The next query gets a fresh
      // connection, or a StoreUnavailableError if the server is still away.
      this.pool.on('error', () => undefined);
      this.ownsPool = true;
    }
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
    const row = this.rowOf(call);
    const result = await this.query(
      `insert of suspension ${describeId(call)}`,
      `INSERT INTO ${this.suspensions}
         (id, tool, kind, status, request, args, answer, outcome, call_id, run_id, created_at, updated_at, lease_until_ms)
       VALUES ($1, $2, $3, $4, $5::json, $6::json, $7::json, $8::json, $9, $10, $11, $12, $13)
       ON CONFLICT (id) DO NOTHING`,
      row,
    );
    if (result.rowCount === 0) throw new DuplicateSuspensionError(call.request.id);
  }

  async get(id: string): Promise<SuspendedCall | undefined> {
    checkId(id, 'get');
    const result = await this.query<SuspensionRow>(
      `get of suspension ${id}`,
      `SELECT ${SUSPENSION_COLUMNS} FROM ${this.suspensions} WHERE id = $1`,
      [id],
    );
    return result.rows[0] ? callOf(result.rows[0]) : undefined;
  }

  async list(filter: SuspensionFilter = {}): Promise<SuspendedCall[]> {
    if (filter === null || typeof filter !== 'object') throw new InvalidArgumentError('list: the filter must be an object');
    const conditions: string[] = [];
    const values: unknown[] = [];
    if (filter.status !== undefined) {
      if (!isSuspensionStatus(filter.status)) throw new InvalidArgumentError(`list: unknown status filter ${JSON.stringify(filter.status)}`);
      values.push(filter.status);
      conditions.push(`status = $${values.length}`);
    }
    if (filter.runId !== undefined) {
      if (typeof filter.runId !== 'string') throw new InvalidArgumentError('list: runId filter must be a string');
      values.push(filter.runId);
      conditions.push(`run_id = $${values.length}`);
    }
    if (filter.kind !== undefined) {
      if (typeof filter.kind !== 'string') throw new InvalidArgumentError('list: kind filter must be a string');
      values.push(filter.kind);
      conditions.push(`kind = $${values.length}`);
    }
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const result = await this.query<SuspensionRow>(
      'list of suspensions',
      `SELECT ${SUSPENSION_COLUMNS} FROM ${this.suspensions} ${where} ORDER BY created_at COLLATE "C", seq`,
      values,
    );
    return result.rows.map(callOf);
  }

  async claim(id: string, answer: Answer, leaseMs: number, now: Date): Promise<Claim | undefined> {
    checkId(id, 'claim');
    const nowMs = checkNow(now, 'claim');
    if (typeof leaseMs !== 'number' || !Number.isFinite(leaseMs) || leaseMs < 0) {
      throw new InvalidArgumentError(`claim: leaseMs must be a non-negative number of milliseconds, got ${String(leaseMs)}`);
    }
    const answerJson = toJson(answer, `the answer to ${id}`);
    const token = randomUUID();
    // One statement: under READ COMMITTED a second concurrent UPDATE of the row waits for the
    // first to commit, then re-checks the WHERE clause against the new row and matches nothing.
    const result = await this.query<SuspensionRow>(
      `claim of suspension ${id}`,
      `UPDATE ${this.suspensions}
          SET status = 'resolving', answer = $2::json, claim_token = $3, lease_until_ms = $4, updated_at = $5
        WHERE id = $1
          AND (status = 'pending' OR (status = 'resolving' AND lease_until_ms < $6))
        RETURNING ${SUSPENSION_COLUMNS}`,
      [id, answerJson, token, Math.ceil(nowMs + leaseMs), now.toISOString(), nowMs],
    );
    const row = result.rows[0];
    return row ? { id, token, call: callOf(row) } : undefined;
  }

  async complete(claim: Claim, status: SettledStatus, outcome: ToolResult, now: Date): Promise<boolean> {
    if (claim === null || typeof claim !== 'object' || typeof claim.id !== 'string' || typeof claim.token !== 'string') {
      throw new InvalidArgumentError('complete: the claim must be one returned by claim()');
    }
    if (!isSuspensionStatus(status) || !isSettled(status)) {
      throw new InvalidArgumentError(`complete: ${JSON.stringify(status)} is not a settled status (resolved, declined, expired or cancelled)`);
    }
    checkNow(now, 'complete');
    const outcomeJson = toJson(outcome, `the outcome of ${claim.id}`);
    const giveUpAt = Date.now() + this.completeRetryMs;
    for (let pause = FIRST_RETRY_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS)) {
      try {
        const result = await this.query(
          `completion of suspension ${claim.id}`,
          `UPDATE ${this.suspensions}
              SET status = $3, outcome = $4::json, updated_at = $5, claim_token = NULL, lease_until_ms = NULL
            WHERE id = $1 AND status = 'resolving' AND claim_token = $2`,
          [claim.id, claim.token, status, outcomeJson, now.toISOString()],
        );
        return result.rowCount === 1;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || this.closed || Date.now() + pause > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  async saveRun(checkpoint: RunCheckpoint): Promise<boolean> {
    if (checkpoint === null || typeof checkpoint !== 'object') throw new InvalidArgumentError('saveRun: the checkpoint must be an object');
    const { runId, version, state, updatedAt } = checkpoint;
    if (typeof runId !== 'string' || runId === '') throw new InvalidArgumentError('saveRun: runId must be a non-empty string');
    // Like the other stores: a version that cannot follow the stored one is a conflict.
    if (!Number.isSafeInteger(version) || version < 1) return false;
    if (typeof updatedAt !== 'string') throw new InvalidArgumentError('saveRun: updatedAt must be an RFC 3339 string');
    if (state === null || typeof state !== 'object' || Array.isArray(state)) {
      throw new InvalidArgumentError('saveRun: state must be an object');
    }
    const stateJson = toJson(state, `the checkpoint of run ${runId}`);
    const result =
      version === 1
        ? await this.query(
            `save of run ${runId}`,
            `INSERT INTO ${this.runs} (run_id, version, state, updated_at) VALUES ($1, 1, $2::json, $3)
             ON CONFLICT (run_id) DO NOTHING`,
            [runId, stateJson, updatedAt],
          )
        : await this.query(
            `save of run ${runId}`,
            `UPDATE ${this.runs} SET version = $2, state = $3::json, updated_at = $4
              WHERE run_id = $1 AND version = $2 - 1`,
            [runId, version, stateJson, updatedAt],
          );
    return result.rowCount === 1;
  }

  async loadRun(runId: string): Promise<RunCheckpoint | undefined> {
    if (typeof runId !== 'string') throw new InvalidArgumentError('loadRun: runId must be a string');
    const result = await this.query<RunRow>(
      `load of run ${runId}`,
      `SELECT run_id, version, state::text AS state, updated_at FROM ${this.runs} WHERE run_id = $1`,
      [runId],
    );
    const row = result.rows[0];
    if (!row) return undefined;
    return { runId: row.run_id, version: Number(row.version), state: parseStored(row.state, `run ${runId}`) as Record<string, unknown>, updatedAt: row.updated_at };
  }

  /** Ends the pool if this store created it (a shared `pool` stays open for its owner). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsPool) await this.pool.end();
  }

  private ready(mayMigrate: boolean): Promise<void> {
    if (this.closed) return Promise.reject(this.closedError());
    if (!this.readyPromise) {
      this.readyPromise = this.prepareTables(mayMigrate).catch((error: unknown) => {
        this.readyPromise = undefined;
        throw error;
      });
    }
    return this.readyPromise;
  }

  private table(suffix: string): string {
    return `${quoteIdentifier(this.schemaName)}.${quoteIdentifier(this.prefix + suffix)}`;
  }

  private closedError(): PendingStoreError {
    return new PendingStoreError('PostgresPendingStore is closed');
  }

  private async query<Row extends object = Record<string, unknown>>(
    operation: string,
    text: string,
    values: unknown[],
  ): Promise<{ rows: Row[]; rowCount: number | null }> {
    await this.ready(this.autoMigrate);
    if (this.closed) throw this.closedError();
    try {
      const result = await this.pool.query<QueryResultRow>(text, values);
      return { rows: result.rows as Row[], rowCount: result.rowCount };
    } catch (error) {
      throw this.translate(error, operation);
    }
  }

  private translate(error: unknown, operation: string): Error {
    if (error instanceof PendingStoreError) return error;
    if (isUnavailable(error)) {
      return new StoreUnavailableError(
        `PostgreSQL was unavailable during the ${operation} (${messageOf(error)}). ` +
          'Suspensions already stored are kept; retry once the database is reachable.',
        { cause: error },
      );
    }
    return new PendingStoreError(`PostgreSQL rejected the ${operation}: ${messageOf(error)}`, { cause: error });
  }

  private async prepareTables(mayMigrate: boolean): Promise<void> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.translate(error, 'schema check');
    }
    let broken = false;
    try {
      if (!mayMigrate) {
        const version = await this.storedVersion(client);
        if (version !== POSTGRES_STORE_SCHEMA_VERSION) {
          throw new PendingStoreError(
            version === undefined
              ? `PostgresPendingStore: no tables under ${this.versions} and autoMigrate is off; create them with ensureSchema() from a role allowed to run DDL`
              : `PostgresPendingStore: tables under ${this.schemaName} are at layout version ${version}, this library needs ${POSTGRES_STORE_SCHEMA_VERSION}`,
          );
        }
        return;
      }
      await client.query('BEGIN');
      try {
        // Serialises migrators across processes: concurrent CREATE TABLE IF NOT EXISTS can
        // still collide on the catalog's unique index.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`toolnexus-ts:${this.schemaName}.${this.prefix}`]);
        const schemaExists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schemaName]);
        if (schemaExists.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(this.schemaName)}`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${this.versions} (
             singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
             version integer NOT NULL,
             migrated_at timestamptz NOT NULL DEFAULT now())`,
        );
        const current = (await this.storedVersion(client)) ?? 0;
        if (current > POSTGRES_STORE_SCHEMA_VERSION) {
          throw new PendingStoreError(
            `PostgresPendingStore: tables under ${this.schemaName} are at layout version ${current}, written by a newer toolnexus-ts; ` +
              `this one knows up to ${POSTGRES_STORE_SCHEMA_VERSION} and will not touch them`,
          );
        }
        for (let version = current + 1; version <= POSTGRES_STORE_SCHEMA_VERSION; version++) {
          for (const statement of this.migrationTo(version)) await client.query(statement);
        }
        if (current < POSTGRES_STORE_SCHEMA_VERSION) {
          await client.query(
            `INSERT INTO ${this.versions} (singleton, version) VALUES (true, $1)
             ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version, migrated_at = now()`,
            [POSTGRES_STORE_SCHEMA_VERSION],
          );
        }
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      }
    } catch (error) {
      if (isUnavailable(error)) broken = true;
      throw this.translate(error, 'schema migration');
    } finally {
      client.release(broken);
    }
  }

  private async storedVersion(client: PoolClient): Promise<number | undefined> {
    const exists = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [this.versions]);
    if (!exists.rows[0]?.present) return undefined;
    const result = await client.query<{ version: number }>(`SELECT version FROM ${this.versions} WHERE singleton`);
    return result.rows[0] ? Number(result.rows[0].version) : undefined;
  }

  /** The DDL that brings the tables from `version - 1` to `version`. Never edit a released step; add one. */
  private migrationTo(version: number): string[] {
    const index = (name: string): string => quoteIdentifier(`${this.prefix}${name}`);
    switch (version) {
      case 1:
        return [
          // JSON columns are `json`, not `jsonb`: json keeps the text as written, so what a
          // caller stored comes back byte for byte (key order, duplicate keys, \u0000).
          `CREATE TABLE ${this.suspensions} (
             id              text PRIMARY KEY,
             seq             bigint GENERATED ALWAYS AS IDENTITY,
             tool            text NOT NULL,
             kind            text NOT NULL,
             status          text NOT NULL CHECK (status IN ('pending', 'resolving', 'resolved', 'declined', 'expired', 'cancelled')),
             request         json NOT NULL,
             args            json,
             answer          json,
             outcome         json,
             call_id         text,
             run_id          text,
             created_at      text NOT NULL,
             updated_at      text,
             lease_until_ms  bigint,
             claim_token     text)`,
          `CREATE INDEX ${index('suspensions_status_idx')} ON ${this.suspensions} (status, created_at COLLATE "C", seq)`,
          `CREATE INDEX ${index('suspensions_run_idx')} ON ${this.suspensions} (run_id, created_at COLLATE "C", seq) WHERE run_id IS NOT NULL`,
          `CREATE INDEX ${index('suspensions_kind_idx')} ON ${this.suspensions} (kind, created_at COLLATE "C", seq)`,
          `CREATE TABLE ${this.runs} (
             run_id      text PRIMARY KEY,
             version     integer NOT NULL CHECK (version >= 1),
             state       json NOT NULL,
             updated_at  text NOT NULL)`,
        ];
      default:
        throw new PendingStoreError(`PostgresPendingStore: no migration to layout version ${version}`);
    }
  }

  private rowOf(call: SuspendedCall): unknown[] {
    checkInsertable(call);
    const { request } = call;
    const what = `suspension ${request.id}`;
    const leaseUntilMs = call.leaseUntil === undefined ? null : Date.parse(call.leaseUntil);
    return [
      request.id,
      call.tool,
      request.kind,
      call.status,
      toJson(request, `the request of ${what}`),
      call.args === undefined ? null : toJson(call.args, `the args of ${what}`),
      call.answer === undefined ? null : toJson(call.answer, `the answer of ${what}`),
      call.outcome === undefined ? null : toJson(call.outcome, `the outcome of ${what}`),
      call.callId ?? null,
      call.runId ?? null,
      call.createdAt,
      call.updatedAt ?? null,
      leaseUntilMs,
    ];
  }
}

/** JSON columns are read as text and parsed here, so a pool's own type parsers cannot change what comes back. */
const SUSPENSION_COLUMNS = `id, tool, status, request::text AS request, args::text AS args, answer::text AS answer,
  outcome::text AS outcome, call_id, run_id, created_at, updated_at, lease_until_ms`;

function callOf(row: SuspensionRow): SuspendedCall {
  const what = `suspension ${row.id}`;
  const status = row.status;
  if (!isSuspensionStatus(status)) throw new PendingStoreError(`stored ${what} has unknown status ${JSON.stringify(status)}`);
  const call: SuspendedCall = {
    request: parseStored(row.request, what) as SuspendedCall['request'],
    tool: row.tool,
    args: row.args === null ? undefined : parseStored(row.args, what),
    status,
    createdAt: row.created_at,
  };
  if (row.call_id !== null) call.callId = row.call_id;
  if (row.run_id !== null) call.runId = row.run_id;
  if (row.updated_at !== null) call.updatedAt = row.updated_at;
  if (row.answer !== null) call.answer = parseStored(row.answer, what) as Answer;
  if (row.outcome !== null) call.outcome = parseStored(row.outcome, what) as ToolResult;
  if (row.lease_until_ms !== null) call.leaseUntil = new Date(Number(row.lease_until_ms)).toISOString();
  return call;
}

function parseStored(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new PendingStoreError(`stored ${what} holds JSON this store cannot read: ${messageOf(error)}`, { cause: error });
  }
}

function checkIdentifier(value: unknown, option: string, longestSuffix: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidArgumentError(`PostgresPendingStore: ${option} must be letters, digits and underscores, not starting with a digit; got ${JSON.stringify(value)}`);
  }
  if (value.length + longestSuffix.length > MAX_IDENTIFIER_BYTES) {
    throw new InvalidArgumentError(
      `PostgresPendingStore: ${option} ${JSON.stringify(value)} is too long: at most ${MAX_IDENTIFIER_BYTES - longestSuffix.length} characters (PostgreSQL names are limited to ${MAX_IDENTIFIER_BYTES} bytes)`,
    );
  }
  return value;
}

function quoteIdentifier(name: string): string {
  return `"${name}"`;
}

function checkId(id: unknown, operation: string): void {
  if (typeof id !== 'string') throw new InvalidArgumentError(`${operation}: the suspension id must be a string`);
}

function checkNow(now: unknown, operation: string): number {
  const ms = now instanceof Date ? now.getTime() : Number.NaN;
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`${operation}: now must be a valid Date`);
  return ms;
}

function describeId(call: SuspendedCall): string {
  const id = (call as Partial<SuspendedCall> | null)?.request?.id;
  return typeof id === 'string' ? id : '(no id)';
}

/** Error-like, whatever realm made it (Node's own socket errors fail `instanceof Error` inside a vm or jest). */
function errorLike(value: unknown): value is { message: string; code?: unknown; errors?: unknown } {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}

function nestedErrors(error: { errors?: unknown }): unknown[] {
  return Array.isArray(error.errors) ? error.errors : [];
}

function isUnavailable(error: unknown): boolean {
  if (!errorLike(error)) return false;
  const { code } = error;
  if (typeof code === 'string') {
    if (NETWORK_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  if (nestedErrors(error).some(isUnavailable)) return true;
  return DISCONNECT_MESSAGE.test(error.message);
}
