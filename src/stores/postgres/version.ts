/** The table layout version this code reads and writes. */
export const POSTGRES_STORE_SCHEMA_VERSION = 4;
