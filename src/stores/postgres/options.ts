/*
 * The public option types of PostgresStore. They name no type of `pg`, so that the
 * package's declarations type-check without `@types/pg` (with `skipLibCheck: false` too),
 * whether the store is imported from the root or from `toolnexus-ts/postgres`; a real
 * `pg.Pool` and `pg.PoolConfig` are assignable to them.
 */

/**
 * Settings of the `pg.Pool` the store creates: the fields of `pg.PoolConfig` (and of its
 * client config) by name, typed loosely where `pg`'s own types would be needed. A value typed
 * `pg.PoolConfig` is assignable; see the `pg` documentation for what each one does.
 */
export interface PostgresPoolConfig {
  user?: string | undefined;
  database?: string | undefined;
  password?: string | (() => string | Promise<string>) | undefined;
  port?: number | undefined;
  host?: string | undefined;
  connectionString?: string | undefined;
  keepAlive?: boolean | undefined;
  keepAliveInitialDelayMillis?: number | undefined;
  stream?: unknown;
  statement_timeout?: false | number | undefined;
  ssl?: boolean | object | undefined;
  enableChannelBinding?: boolean | undefined;
  sslnegotiation?: 'postgres' | 'direct' | undefined;
  query_timeout?: number | undefined;
  lock_timeout?: number | undefined;
  idle_in_transaction_session_timeout?: number | undefined;
  application_name?: string | undefined;
  fallback_application_name?: string | undefined;
  connectionTimeoutMillis?: number | undefined;
  types?: unknown;
  options?: string | undefined;
  client_encoding?: string | undefined;
  pipeline?: boolean | undefined;
  max?: number | undefined;
  min?: number | undefined;
  idleTimeoutMillis?: number | undefined | null;
  log?: unknown;
  Promise?: unknown;
  allowExitOnIdle?: boolean | undefined;
  maxUses?: number | undefined;
  maxLifetimeSeconds?: number | undefined;
  Client?: unknown;
  onConnect?: unknown;
  verify?: unknown;
}

/**
 * A pool the service already has: a `pg.Pool` (any copy of `pg`). Only its shape is named
 * here, so these declarations need no `@types/pg`.
 */
export interface PostgresPoolLike {
  query(...args: never[]): unknown;
  connect(...args: never[]): unknown;
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
   * (by a privileged run of {@link PostgresStore.ensureSchema}), and first use only
   * checks that their version is the one this library expects.
   */
  autoMigrate?: boolean;
  /**
   * How long `complete` keeps retrying when the database is unreachable (default 5000 ms;
   * 0 disables). A replay that ran while the database restarted then still stores its
   * outcome once the database is back, instead of failing and leaving the call to be
   * replayed again after its lease. Safe because completing is guarded by the claim's fence:
   * a retry after a lost reply, or after another process took the call over, changes nothing.
   */
  completeRetryMs?: number;
  /**
   * Runs its statements as named prepared statements (default `true`): PostgreSQL parses and
   * plans each once per connection instead of on every call, which took a resolve's database
   * CPU from 0.87 ms to 0.31 ms (docs/performance.md, "A fleet on one PostgreSQL"). Turn it off
   * behind a pooler that cannot keep prepared statements (PgBouncer in transaction mode before
   * 1.21, or with `max_prepared_statements = 0`).
   */
  preparedStatements?: boolean;
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
  poolConfig?: PostgresPoolConfig;
  pool?: undefined;
}

/** Share a pool the service already has (a NestJS provider, say). `close()` leaves it open. */
export interface PostgresStoreSharedPoolOptions extends PostgresStoreCommonOptions {
  pool: PostgresPoolLike;
  connectionString?: undefined;
  poolConfig?: undefined;
}

/** Options of {@link PostgresStore}: a connection string / pool settings, or an existing `pg.Pool`. */
export type PostgresStoreOptions = PostgresStoreConnectionOptions | PostgresStoreSharedPoolOptions;
