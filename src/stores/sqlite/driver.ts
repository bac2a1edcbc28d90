import { closeSync, constants, openSync } from 'node:fs';
import { StoreError } from '../../errors';
import { loadOptionalPeer } from '../peer';

/**
 * The better-sqlite3 `Database` class (its module's default export), as much of it as the
 * store uses: `import Database from 'better-sqlite3'` fits this type.
 */
export interface BetterSqlite3Class {
  new (filename: string, options?: { timeout?: number; readonly?: boolean }): BetterSqlite3Database;
}

/** A better-sqlite3 connection, as much of it as the store uses. */
export interface BetterSqlite3Database {
  prepare(source: string): {
    run(...params: unknown[]): { changes: number | bigint };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
  exec(source: string): unknown;
  close(): unknown;
}

/**
 * Which SQLite driver a store opens its file with. `'node:sqlite'` is the one built into
 * Node.js 22.13 and later (nothing to install or compile); `'better-sqlite3'` is the optional
 * peer (`npm install better-sqlite3`); or better-sqlite3's `Database` class itself, for an
 * application whose bundler or package layout keeps toolnexus-ts from resolving it.
 */
export type SqliteDriver = 'node:sqlite' | 'better-sqlite3' | BetterSqlite3Class;

/** A bound parameter: one positional value or named values (`@name` in the SQL, `name` here). */
type Params = unknown;

/** What the store needs of a prepared statement, whichever driver prepared it. */
export interface SqliteStatement {
  run(params?: Params): { changes: number };
  get(params?: Params): unknown;
  all(params?: Params): unknown[];
}

/** What the store needs of a connection: the seam between the store and the two drivers. */
export interface SqliteConnection {
  readonly driver: 'node:sqlite' | 'better-sqlite3';
  prepare(sql: string): SqliteStatement;
  exec(sql: string): void;
  close(): void;
}

/**
 * Runs `work` inside `BEGIN IMMEDIATE … COMMIT`: the write lock is taken first, so two
 * processes never both read and then both write. A throw rolls everything back and is passed on.
 * Neither driver's own helper is used: node:sqlite has none, and one path is one behaviour.
 */
export function immediate<T>(connection: SqliteConnection, work: () => T): T {
  connection.exec('BEGIN IMMEDIATE');
  let result: T;
  try {
    result = work();
  } catch (error) {
    rollback(connection);
    throw error;
  }
  try {
    connection.exec('COMMIT');
  } catch (error) {
    rollback(connection);
    throw error;
  }
  return result;
}

/**
 * Whether a driver's error is SQLite refusing for another connection's lock (SQLITE_BUSY or
 * one of its extended codes): node:sqlite says so in `errcode`, better-sqlite3 in `code`.
 */
export function isBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { errcode, code } = error as { errcode?: unknown; code?: unknown };
  if (typeof errcode === 'number') return (errcode & 0xff) === SQLITE_BUSY;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

const SQLITE_BUSY = 5;

/** Blocks this thread for `ms`: for the few waits a synchronous constructor must make. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function rollback(connection: SqliteConnection): void {
  try {
    connection.exec('ROLLBACK');
  } catch {
    // SQLite already rolled back (some errors end the transaction themselves): nothing is left to undo.
  }
}

/** node:sqlite's `DatabaseSync`, as much of it as the store uses (@types/node 20 does not describe it): the same surface as better-sqlite3's. */
interface NodeSqliteModule {
  DatabaseSync: new (filename: string, options?: { readOnly?: boolean }) => BetterSqlite3Database;
}

/**
 * node:sqlite when this runtime has it (Node.js 22.13 and later; 22.5 to 22.12 behind
 * `--experimental-sqlite`), else undefined. `getBuiltinModule` answers without throwing
 * where the module is missing, and keeps bundlers from trying to resolve it.
 */
export function nodeSqlite(): NodeSqliteModule | undefined {
  const getBuiltinModule = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  return getBuiltinModule?.call(process, 'node:sqlite') as NodeSqliteModule | undefined;
}

/** The command that installs a better-sqlite3 this runtime can load: 13 needs Node.js 22 or later. */
function installCommand(): string {
  return Number(process.versions.node.split('.')[0]) < 22 ? 'npm install better-sqlite3@12' : 'npm install better-sqlite3';
}

function loadBetterSqlite3(): BetterSqlite3Class {
  const loaded = loadOptionalPeer<BetterSqlite3Class | { default: BetterSqlite3Class }>(
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required when a store is built, not at import
    () => require('better-sqlite3'),
    'better-sqlite3',
    installCommand(),
    'SqliteStore',
  );
  return typeof loaded === 'function' ? loaded : loaded.default;
}

/** Opens a file through one driver, already loaded. */
export type SqliteOpener = (filename: string, options?: { readonly?: boolean }) => SqliteConnection;

/**
 * Loads the chosen driver, or says why it cannot, before any file is touched. Without a
 * choice: node:sqlite where the runtime has it, else better-sqlite3, else an error naming
 * both ways out.
 */
export function sqliteOpener(driver: SqliteDriver | undefined): SqliteOpener {
  if (driver === undefined) {
    const builtIn = nodeSqlite();
    if (builtIn) return (filename, options = {}) => openNodeSqlite(builtIn, filename, options);
    let Database: BetterSqlite3Class;
    try {
      Database = loadBetterSqlite3();
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      throw new StoreError(
        `SqliteStore needs a SQLite driver: this Node.js (${process.version}) has no node:sqlite (built in from Node.js 22.13), ` +
          `and the optional peer dependency "better-sqlite3" is not installed: run \`${installCommand()}\`, or run on Node.js 22.13 or later`,
        { cause: error },
      );
    }
    return (filename, options = {}) => openBetterSqlite3(Database, filename, options);
  }
  if (driver === 'node:sqlite') {
    const builtIn = nodeSqlite();
    if (!builtIn) {
      throw new StoreError(
        `SqliteStore was asked for node:sqlite, which this Node.js (${process.version}) does not have: run on Node.js 22.13 or later, or choose driver 'better-sqlite3'`,
      );
    }
    return (filename, options = {}) => openNodeSqlite(builtIn, filename, options);
  }
  if (typeof driver === 'function') return (filename, options = {}) => openBetterSqlite3(driver, filename, options);
  if (driver === 'better-sqlite3') {
    const Database = loadBetterSqlite3();
    return (filename, options = {}) => openBetterSqlite3(Database, filename, options);
  }
  throw new StoreError(`SqliteStore's driver is 'node:sqlite', 'better-sqlite3' or better-sqlite3's Database class, not ${String(driver)}`);
}

function openBetterSqlite3(Database: BetterSqlite3Class, filename: string, options: { readonly?: boolean }): SqliteConnection {
  const db = new Database(filename, options.readonly ? { readonly: true } : {});
  return {
    driver: 'better-sqlite3',
    prepare(sql) {
      const statement = db.prepare(sql);
      return {
        run: (params) => ({ changes: Number(params === undefined ? statement.run().changes : statement.run(params).changes) }),
        get: (params) => (params === undefined ? statement.get() : statement.get(params)),
        all: (params) => (params === undefined ? statement.all() : statement.all(params)),
      };
    },
    exec: (sql) => void db.exec(sql),
    close: () => void db.close(),
  };
}

/** SQL parameter names (`@name`, `:name`, `$name`), which node:sqlite must be given and no others. */
const PARAMETER = /[@:$]([A-Za-z_][A-Za-z0-9_]*)/g;

function openNodeSqlite(module: NodeSqliteModule, filename: string, options: { readonly?: boolean }): SqliteConnection {
  const db = new module.DatabaseSync(filename, options.readonly ? { readOnly: true } : {});
  return {
    driver: 'node:sqlite',
    prepare(sql) {
      const statement = db.prepare(sql);
      const names = new Set(Array.from(sql.matchAll(PARAMETER), (match) => match[1]));
      // node:sqlite refuses a named value the SQL does not use (better-sqlite3 ignores it), and
      // the store passes whole rows; its rows have no prototype, so they are copied into plain objects.
      const bind = (params: Params): unknown[] => {
        if (params === undefined) return [];
        if (typeof params !== 'object' || params === null || params instanceof Uint8Array) return [params];
        return [Object.fromEntries(Object.entries(params).filter(([name]) => names.has(name)))];
      };
      return {
        run: (params) => ({ changes: Number(statement.run(...bind(params)).changes) }),
        get: (params) => {
          const row = statement.get(...bind(params));
          return row === undefined ? undefined : { ...(row as object) };
        },
        all: (params) => statement.all(...bind(params)).map((row) => ({ ...(row as object) })),
      };
    },
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  };
}

/**
 * Creates a database file that does not exist yet with mode 0600 (owner read/write only),
 * before SQLite opens it: the store keeps tool arguments, answers and results in plain text.
 * SQLite creates the `-wal` and `-shm` files with the database file's own mode, so they are
 * 0600 too. An existing file keeps its mode; `:memory:` and a file that cannot be created
 * here (a missing directory) are left to SQLite, which says what is wrong.
 */
export function createPrivately(filename: string): void {
  if (filename === ':memory:' || filename.startsWith('file:')) return;
  try {
    closeSync(openSync(filename, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch {
    // EEXIST: an existing database keeps its mode; anything else, SQLite reports on open.
  }
}
