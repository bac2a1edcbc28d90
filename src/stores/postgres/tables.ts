import { DEFAULT_SCHEMA, DEFAULT_TABLE_PREFIX } from './resolve';

/**
 * Why the tables are not where the CLI is to look. `misplaced`: the schema (or the prefix)
 * holds no store's tables; the message says where they are, if anywhere. The CLI maps the
 * kind to its exit code.
 */
export interface TablesProblem {
  kind: 'misplaced';
  message: string;
}

/**
 * Checks, before the store is opened, that the schema the CLI is to read holds a store's
 * tables: a `--schema` typo (or a left-out `--schema` where the service uses another) would
 * otherwise list "(none)", exit 0 and create an empty schema with tables. With `--create`
 * the tables are made where asked. Returns the problem to report, if any. The catalog is read with a connection of its own, so the
 * store's own SQL is untouched.
 */
export async function checkPostgresTables(
  connectionString: string,
  shown: string,
  options: { schema?: string; tablePrefix?: string; create: boolean },
): Promise<TablesProblem | undefined> {
  if (options.create) return undefined;
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const prefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  const table = `${prefix}suspensions`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- pg is an optional peer, loaded only for a postgres:// store
  const { Client } = require('pg') as typeof import('pg');
  const client = new Client({ connectionString, connectionTimeoutMillis: 10_000 });
  let holders: string[];
  let schemaExists: boolean;
  try {
    await client.connect();
    const found = await client.query<{ table_schema: string }>(
      'SELECT table_schema FROM information_schema.tables WHERE table_name = $1 ORDER BY table_schema',
      [table],
    );
    holders = found.rows.map((row) => row.table_schema);
    schemaExists = ((await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount ?? 0) > 0;
  } catch {
    // Unreachable or refused: the store, opened next, reports it as it reports any outage.
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
  if (holders.includes(schema)) return undefined;
  const given = options.schema === undefined ? `schema ${schema} (the default: --schema was not given)` : `schema ${schema}`;
  const where = schemaExists ? `no table ${table} in ${given}` : `no ${given}`;
  const elsewhere =
    holders.length > 0
      ? `; ${table} is in ${holders.map((s) => `--schema ${s}`).join(', ')}`
      : `; no schema there has ${table}${options.tablePrefix === undefined ? '' : ' (check --table-prefix)'}`;
  return {
    kind: 'misplaced',
    message: `${where} at ${shown}${elsewhere}. Pass the --schema your service's store uses, or --create to create the tables in ${schema}`,
  };
}
