import { quoteIdentifier } from './resolve';

/** Runs one query of the store (after its schema is ready), translating driver errors. */
export type PostgresQuery = <Row extends object = Record<string, unknown>>(
  operation: string,
  text: string,
  values: unknown[],
) => Promise<{ rows: Row[]; rowCount: number | null }>;

/**
 * A part of a `PostgresStore` kept in a file of its own (its sessions, A2A tasks, MCP tasks,
 * deliveries): the table it keeps, and the store's query runner. The runner refuses once the
 * store is closed and translates driver errors, so a part checks neither itself.
 */
export abstract class PostgresPart {
  constructor(
    /** The qualified, quoted name of the table this part keeps. */
    protected readonly table: string,
    /** The store's query runner. */
    protected readonly query: PostgresQuery,
  ) {}
}

/** A table of a store as its layout step creates it, apart from its qualified name. */
export interface TableLayout {
  /** The body of its CREATE TABLE. */
  readonly columns: string;
  /** Each index's name (the store's prefix goes before it) and what follows `ON <table>`. */
  readonly indexes: Readonly<Record<string, string>>;
}

/** The statements that create `table` (qualified, quoted) and its indexes as `layout` says. */
export function tableDdl(table: string, prefix: string, { columns, indexes }: TableLayout): string[] {
  return [
    `CREATE TABLE ${table} (${columns})`,
    ...Object.entries(indexes).map(([name, on]) => `CREATE INDEX ${quoteIdentifier(`${prefix}${name}`)} ON ${table} ${on}`),
  ];
}
