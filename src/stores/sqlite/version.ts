/** The schema this code reads and writes. Bump it with a step in migrate (schema.ts). */
export const SQLITE_SCHEMA_VERSION = 4;
