import type { Pool, PoolConfig } from 'pg';
import { InvalidArgumentError } from '../../errors';
import { loadOptionalPeer } from '../peer';
import type { PostgresStoreOptions } from './options';

/**
 * `pg` is loaded when a store first builds its own pool, not when the package is imported:
 * it costs ~40 ms of CPU at startup (with `net`, `tls` and `crypto`), which an application
 * that never uses PostgreSQL, or hands in its own pool, should not pay. It is an optional
 * peer dependency: an application that never builds its own pool need not install it.
 */
function loadPg(): typeof import('pg') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required when a store is built, not at import
  return loadOptionalPeer<typeof import('pg')>(() => require('pg'), 'pg', 'npm install pg', 'PostgresStore');
}

/** The options checked, with their defaults, and the pool the store uses. */
export interface ResolvedOptions {
  pool: Pool;
  /** True when the store created the pool, and so ends it on close. */
  ownsPool: boolean;
  schema: string;
  tablePrefix: string;
  autoMigrate: boolean;
  completeRetryMs: number;
  preparedStatements: boolean;
}

/** Where the tables are when the options say nothing; the CLI's table check (./tables.ts) looks there too. */
export const DEFAULT_SCHEMA = 'public';
export const DEFAULT_TABLE_PREFIX = 'toolnexus_';
const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;
/** The URL schemes pg's connection strings mean PostgreSQL by. */
const POSTGRES_SCHEMES: readonly string[] = ['postgres', 'postgresql', 'socket'];
const DEFAULT_COMPLETE_RETRY_MS = 5_000;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** PostgreSQL truncates longer identifiers silently; refusing them keeps table names predictable. */
const MAX_IDENTIFIER_BYTES = 63;
/** The longest name built from the prefix (an index), so no name the store creates is ever truncated. */
const LONGEST_NAME_SUFFIX = 'suspensions_status_idx';

/**
 * Checks the options (throwing InvalidArgumentError before anything touches the database)
 * and creates the pool unless one is shared.
 */
export function resolveOptions(options: PostgresStoreOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('PostgresStore needs options: { connectionString } or { poolConfig } or { pool }');
  }
  const schema = checkIdentifier(options.schema ?? DEFAULT_SCHEMA, 'schema', '');
  const tablePrefix = checkIdentifier(options.tablePrefix ?? DEFAULT_TABLE_PREFIX, 'tablePrefix', LONGEST_NAME_SUFFIX);
  const autoMigrate = options.autoMigrate ?? true;
  const completeRetryMs = options.completeRetryMs ?? DEFAULT_COMPLETE_RETRY_MS;
  if (typeof completeRetryMs !== 'number' || !Number.isFinite(completeRetryMs) || completeRetryMs < 0) {
    throw new InvalidArgumentError(
      `PostgresStore: completeRetryMs must be a non-negative number of milliseconds, got ${String(options.completeRetryMs)}`,
    );
  }
  const preparedStatements = options.preparedStatements ?? true;
  if (typeof preparedStatements !== 'boolean') {
    throw new InvalidArgumentError(`PostgresStore: preparedStatements must be true or false, got ${String(options.preparedStatements)}`);
  }
  const common = { schema, tablePrefix, autoMigrate, completeRetryMs, preparedStatements };

  if (options.pool !== undefined) {
    if (options.connectionString !== undefined || options.poolConfig !== undefined) {
      throw new InvalidArgumentError('PostgresStore: give either an existing pool or connection settings, not both');
    }
    // Duck-typed: a service may load its own copy of `pg`, whose Pool is another class.
    const pool = options.pool as unknown as Partial<Pool>;
    if (typeof pool !== 'object' || pool === null || typeof pool.query !== 'function' || typeof pool.connect !== 'function') {
      throw new InvalidArgumentError('PostgresStore: options.pool must be a pg.Pool (with query() and connect())');
    }
    return { ...common, pool: pool as Pool, ownsPool: false };
  }
  const { connectionString, poolConfig } = options;
  if (connectionString === undefined && poolConfig === undefined) {
    throw new InvalidArgumentError('PostgresStore needs options: { connectionString } or { poolConfig } or { pool }');
  }
  if (connectionString !== undefined && (typeof connectionString !== 'string' || connectionString.trim() === '')) {
    throw new InvalidArgumentError('PostgresStore: connectionString must be a non-empty postgres:// URL');
  }
  // pg reads any URL's host and port and ignores its scheme: a mysql:// URL would be tried as
  // PostgreSQL and reported as unavailable, so a scheme that is not PostgreSQL's is refused here.
  const scheme = connectionString === undefined ? undefined : /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(connectionString.trim())?.[1];
  if (scheme !== undefined && !POSTGRES_SCHEMES.includes(scheme.toLowerCase())) {
    throw new InvalidArgumentError(
      `PostgresStore: connectionString has the scheme ${JSON.stringify(`${scheme}:`)}, which is not PostgreSQL: ` +
        'give a postgres:// or postgresql:// URL (or socket:/path for a Unix socket)',
    );
  }
  const pool = new (loadPg().Pool)({
    connectionTimeoutMillis: DEFAULT_CONNECTION_TIMEOUT_MS,
    // PostgresPoolConfig names pg.PoolConfig's fields without pg's types: pg checks the values.
    ...(poolConfig as PoolConfig | undefined),
    ...(connectionString !== undefined ? { connectionString } : {}),
  });
  // An idle pooled connection that the server drops (a restart, a failover) is reported
  // on the pool; unheard, Node would crash the process. The next query gets a fresh
  // connection, or a StoreUnavailableError if the server is still away.
  pool.on('error', () => undefined);
  return { ...common, pool, ownsPool: true };
}

function checkIdentifier(value: unknown, option: string, longestSuffix: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidArgumentError(
      `PostgresStore: ${option} must be letters, digits and underscores, not starting with a digit; got ${JSON.stringify(value)}`,
    );
  }
  if (value.length + longestSuffix.length > MAX_IDENTIFIER_BYTES) {
    throw new InvalidArgumentError(
      `PostgresStore: ${option} ${JSON.stringify(value)} is too long: at most ${MAX_IDENTIFIER_BYTES - longestSuffix.length} characters (PostgreSQL names are limited to ${MAX_IDENTIFIER_BYTES} bytes)`,
    );
  }
  return value;
}

/** Identifiers are checked against {@link IDENTIFIER} first, so quoting never needs escaping. */
export function quoteIdentifier(name: string): string {
  return `"${name}"`;
}

/** The qualified, quoted name of a store's table `name`: in `schema`, after the store's `prefix`. */
export function qualifiedTable(schema: string, prefix: string, name: string): string {
  return `${quoteIdentifier(schema)}.${quoteIdentifier(`${prefix}${name}`)}`;
}
