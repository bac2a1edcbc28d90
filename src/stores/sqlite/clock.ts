/**
 * SQLite's clock in SQL, one place for every file of the store: a file whose DDL ./schema.ts
 * imports cannot import these from the schema without a cycle.
 */

/** SQLite's clock in milliseconds since the epoch (`julianday('now')` keeps milliseconds). */
export const NOW_MS = `CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER)`;
/** SQLite's clock as RFC 3339 with milliseconds, as `Date.toISOString` writes it. */
export const NOW_TEXT = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
