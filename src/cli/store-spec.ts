import { isAbsolute, resolve } from 'node:path';
import { InvalidArgumentError } from '../errors';
import type { SuspensionStore } from '../suspension/store';
import type { RunStore } from '../runner/core/store';
import { PostgresStore } from '../stores/postgres/index';
import { SqliteStore } from '../stores/sqlite/index';
import type { TablesProblem } from '../stores/postgres/tables';
import { EXIT, type ExitCode } from './exit-codes';

/** Where `--store` (or `TOOLNEXUS_STORE`) points: `sqlite:./file.db` or `postgres://…`. */
export type StoreSpec = { kind: 'sqlite'; filename: string } | { kind: 'postgres'; connectionString: string };

/** Parses a store spec; relative SQLite paths are resolved from `cwd`. */
export function parseStoreSpec(spec: string, cwd: string): StoreSpec {
  if (spec.startsWith('sqlite:')) {
    const path = spec.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '' || path === ':memory:') throw new InvalidArgumentError('--store sqlite: needs a file, e.g. sqlite:./suspensions.db');
    return { kind: 'sqlite', filename: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  if (/^postgres(ql)?:\/\//.test(spec)) return { kind: 'postgres', connectionString: spec };
  throw new InvalidArgumentError(`--store must be sqlite:PATH or postgres://…, got ${JSON.stringify(shownSpec(spec))}`);
}

/** Opens the store a spec names; a SQLite file must exist already (a typo must not create an empty store). */
export function openStore(spec: StoreSpec, postgres: { schema?: string; tablePrefix?: string }): SuspensionStore & RunStore {
  if (spec.kind === 'sqlite') return new SqliteStore({ filename: spec.filename });
  return new PostgresStore({ connectionString: spec.connectionString, ...postgres });
}

/** A spec as messages may show it: a connection string's password redacted. */
export function shownSpec(spec: string): string {
  return spec.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

/** The exit code of each problem `checkPostgresTables` finds: a misplaced schema is a command line to fix. */
export const TABLES_EXIT: Record<TablesProblem['kind'], ExitCode> = { misplaced: EXIT.usage };
