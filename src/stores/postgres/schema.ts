import { A2A_TASKS_POSTGRES, a2aWatchPostgresDdl } from './a2a-tasks';
import type { Pool, PoolClient } from 'pg';
import { StoreError } from '../../errors';
import { isUnavailable, translate } from './errors';
import { qualifiedTable, quoteIdentifier } from './resolve';
import { DELIVERIES_POSTGRES } from './deliveries';
import { SESSIONS_POSTGRES } from './sessions';
import { streamsPostgresDdl } from './streams';
import { steersPostgresDdl } from './steers';
import { MCP_TASKS_POSTGRES } from './mcp-tasks';
import { tableDdl } from './part';
import { POSTGRES_STORE_SCHEMA_VERSION } from './version';

export { POSTGRES_STORE_SCHEMA_VERSION };

/** The qualified, quoted names of one store's tables. */
export interface Tables {
  schema: string;
  prefix: string;
  suspensions: string;
  runs: string;
  versions: string;
  grants: string;
  /** Served calls' incoming idempotency keys (src/suspension/keyed.ts). */
  keyed: string;
  /** Sessions (./sessions.ts). */
  sessions: string;
  /** A2A task records (./a2a-tasks.ts). */
  a2aTasks: string;
  /** The cards channels posted (./deliveries.ts). */
  deliveries: string;
  /** Tasks of served MCP calls (./mcp-tasks.ts). */
  mcpTasks: string;
}

export function tablesOf(schema: string, prefix: string): Tables {
  const table = (name: string) => qualifiedTable(schema, prefix, name);
  return {
    schema,
    prefix,
    suspensions: table('suspensions'),
    runs: table('runs'),
    versions: table('schema_version'),
    grants: table('grants'),
    keyed: table('keyed_calls'),
    sessions: table('sessions'),
    a2aTasks: table('a2a_tasks'),
    deliveries: table('deliveries'),
    mcpTasks: table('mcp_tasks'),
  };
}

/**
 * Brings the tables to {@link POSTGRES_STORE_SCHEMA_VERSION} (or, with `mayMigrate` off,
 * only checks that they are there already), in one transaction. Concurrent processes
 * serialise on an advisory lock, so eight workers starting at once migrate once.
 */
export async function prepareTables(pool: Pool, tables: Tables, mayMigrate: boolean): Promise<void> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw translate(error, 'schema check');
  }
  let broken = false;
  try {
    if (!mayMigrate) {
      const version = await storedVersion(client, tables);
      if (version !== POSTGRES_STORE_SCHEMA_VERSION) {
        throw new StoreError(
          version === undefined
            ? `PostgresStore: no tables under ${tables.versions} and autoMigrate is off; create them with ensureSchema() from a role allowed to run DDL`
            : `PostgresStore: tables under ${tables.schema} are at layout version ${version}, this library needs ${POSTGRES_STORE_SCHEMA_VERSION}`,
        );
      }
      return;
    }
    await client.query('BEGIN');
    try {
      await migrate(client, tables);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw error;
    }
  } catch (error) {
    if (isUnavailable(error)) broken = true;
    throw translate(error, 'schema migration');
  } finally {
    client.release(broken);
  }
}

async function migrate(client: PoolClient, tables: Tables): Promise<void> {
  // Serialises migrators across processes: concurrent CREATE TABLE IF NOT EXISTS can
  // still collide on the catalog's unique index.
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`toolnexus-ts:${tables.schema}.${tables.prefix}`]);
  const schemaExists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [tables.schema]);
  if (schemaExists.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(tables.schema)}`);
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${tables.versions} (
       singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
       version integer NOT NULL,
       migrated_at timestamptz NOT NULL DEFAULT now())`,
  );
  const current = (await storedVersion(client, tables)) ?? 0;
  if (current > POSTGRES_STORE_SCHEMA_VERSION) {
    throw new StoreError(
      `PostgresStore: tables under ${tables.schema} are at layout version ${current}, written by a newer toolnexus-ts; ` +
        `this one knows up to ${POSTGRES_STORE_SCHEMA_VERSION} and will not touch them`,
    );
  }
  for (let version = current + 1; version <= POSTGRES_STORE_SCHEMA_VERSION; version++) {
    for (const statement of migrationTo(version, tables)) await client.query(statement);
  }
  if (current < POSTGRES_STORE_SCHEMA_VERSION) {
    await client.query(
      `INSERT INTO ${tables.versions} (singleton, version) VALUES (true, $1)
       ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version, migrated_at = now()`,
      [POSTGRES_STORE_SCHEMA_VERSION],
    );
  }
}

async function storedVersion(client: PoolClient, tables: Tables): Promise<number | undefined> {
  const exists = await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [tables.versions]);
  if (!exists.rows[0]?.present) return undefined;
  const result = await client.query<{ version: number }>(`SELECT version FROM ${tables.versions} WHERE singleton`);
  return result.rows[0] ? Number(result.rows[0].version) : undefined;
}

/** The DDL that brings the tables from `version - 1` to `version`. Never edit a released step; add one. */
function migrationTo(version: number, tables: Tables): string[] {
  const { schema, prefix, suspensions, runs, grants, keyed } = tables;
  const index = (name: string): string => quoteIdentifier(`${prefix}${name}`);
  switch (version) {
    case 1:
      return [
        // JSON columns are `json`, not `jsonb`: json keeps the text as written, so what a
        // caller stored comes back byte for byte (key order, duplicate keys, \u0000).
        `CREATE TABLE ${suspensions} (
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
        `CREATE INDEX ${index('suspensions_status_idx')} ON ${suspensions} (status, created_at COLLATE "C", seq)`,
        `CREATE INDEX ${index('suspensions_run_idx')} ON ${suspensions} (run_id, created_at COLLATE "C", seq) WHERE run_id IS NOT NULL`,
        `CREATE INDEX ${index('suspensions_kind_idx')} ON ${suspensions} (kind, created_at COLLATE "C", seq)`,
        `CREATE TABLE ${runs} (
           run_id      text PRIMARY KEY,
           version     integer NOT NULL CHECK (version >= 1),
           state       json NOT NULL,
           updated_at  text NOT NULL)`,
      ];
    case 2:
      return [
        // Claims are fenced by a counter instead of a random token: a v1 call caught
        // mid-claim counts as claimed once, so whoever takes it over after its lease holds
        // fence 2. The lease stays in epoch ms, now by the server's clock.
        `ALTER TABLE ${suspensions}
           ADD COLUMN fence   integer CHECK (fence >= 1),
           ADD COLUMN chain   json,
           ADD COLUMN next_id text,
           ADD COLUMN binding text`,
        `UPDATE ${suspensions} SET fence = 1 WHERE status = 'resolving'`,
        `ALTER TABLE ${suspensions} DROP COLUMN claim_token`,
      ];
    case 3:
      return [
        // The audit trail: who answered, when (by the server's clock), with which words. Rows
        // answered before it keep NULLs: nobody recorded who answered them.
        `ALTER TABLE ${suspensions}
           ADD COLUMN answered_by json,
           ADD COLUMN answered_at text,
           ADD COLUMN comment     text`,
        `CREATE INDEX ${index('suspensions_hist_idx')} ON ${suspensions} (updated_at COLLATE "C" DESC NULLS LAST, seq DESC)
           WHERE status IN ('resolved', 'declined', 'expired', 'cancelled')`,
      ];
    case 4:
      // Step 4 (this release), one block per feature: trace context (a column) and sessions (tables).
      return [
        // Traces: the W3C traceparent of the span that suspended a call, so the span that
        // resolves it (maybe in another process, days later) links back to it. Rows recorded
        // before it keep NULL: their resolutions start unlinked.
        `ALTER TABLE ${suspensions} ADD COLUMN traceparent text`,
        // Who may answer (docs/who-may-answer.md): on whose behalf a call was made, so
        // separation of duties can refuse their own approval. Rows before it keep NULL.
        `ALTER TABLE ${suspensions} ADD COLUMN requested_by json`,
        // Quorum: the approvals recorded so far, one per principal, stamped by the server's clock.
        `ALTER TABLE ${suspensions} ADD COLUMN signatures json`,
        // Automatic answers: what the rule decided of an approval request, acted on or shadowed.
        `ALTER TABLE ${suspensions} ADD COLUMN automatic json`,
        // The chat session of the call's run: the conversation its resolution's span names.
        `ALTER TABLE ${suspensions} ADD COLUMN session_id text`,
        // Standing grants (docs/who-may-answer.md, "Grants"): each as JSON, revoked by the server's clock.
        `CREATE TABLE ${grants} (
           seq        bigserial PRIMARY KEY,
           id         text NOT NULL UNIQUE,
           tool       text NOT NULL,
           grant_json json NOT NULL,
           revoked_at text)`,
        `CREATE INDEX ${index('grants_tool_idx')} ON ${grants} (tool, seq) WHERE revoked_at IS NULL`,
        // Retention and recovery (docs/deploying.md, "Retention"): runs by age, which a prune of
        // finished runs and the orphan scan (listStaleRuns) walk from the oldest.
        `CREATE INDEX ${index('runs_upd_idx')} ON ${runs} (updated_at COLLATE "C")`,
        // The orphan scan looks only at running runs, a few among millions: a partial index
        // holds just those (listStaleRuns names the phase as a literal, so the planner can use it).
        `CREATE INDEX ${index('runs_running_idx')} ON ${runs} (updated_at COLLATE "C") WHERE (state->>'phase') = 'running'`,
        // Sessions (chat, docs/chat.md): conversations kept by id, saved by version compare-and-set.
        ...tableDdl(tables.sessions, prefix, SESSIONS_POSTGRES),
        // A2A tasks (docs/a2a.md, "Listing and push"): whose each task is, its push configs and outbox.
        ...tableDdl(tables.a2aTasks, prefix, A2A_TASKS_POSTGRES),
        // Deliveries (docs/channels.md, "What is stored"): the cards a channel posted for pending calls.
        ...tableDdl(tables.deliveries, prefix, DELIVERIES_POSTGRES),
        // Receipts (docs/tools.md, "Idempotency keys and receipts"): what downstream systems
        // answered a call's attempts, appended to the claimed row as recorded, kept with the outcome.
        `ALTER TABLE ${suspensions} ADD COLUMN receipts json`,
        // Served calls' idempotency keys (src/suspension/keyed.ts): the holder's fence and lease
        // (the server's clock, ms), then the first outcome and when it was kept.
        `CREATE TABLE ${keyed} (
           key            text PRIMARY KEY,
           fence          integer NOT NULL,
           lease_until_ms bigint,
           outcome        json,
           finished_ms    bigint)`,
        // Stream logs (docs/chat.md, "Reconnecting"): every chat response's parts, per run, by cursor.
        ...streamsPostgresDdl(schema, prefix),
        // Retention of served and delivered work (docs/deploying.md, "Retention"): what a prune of
        // A2A tasks, keyed calls and deliveries walks from the oldest, only the rows it may delete.
        `CREATE INDEX ${index('a2a_tasks_idle_idx')} ON ${tables.a2aTasks} (created_at COLLATE "C", task_id COLLATE "C") WHERE due_at IS NULL`,
        `CREATE INDEX ${index('keyed_calls_done_idx')} ON ${keyed} (finished_ms) WHERE outcome IS NOT NULL`,
        `CREATE INDEX ${index('deliveries_done_idx')} ON ${tables.deliveries} (due_at) WHERE done`,
        // Steering (docs/agents.md, "Steering"): messages steered into a run another process drives, until its driver takes them.
        ...steersPostgresDdl(schema, prefix, runs),
        // MCP tasks (docs/mcp.md, "Tasks"): the tasks of served calls that did not suspend, with the
        // lease of the process running each, so every server process on the schema answers for them.
        ...tableDdl(tables.mcpTasks, prefix, MCP_TASKS_POSTGRES),
        // A2A push for a task continued elsewhere (docs/a2a.md, "Listing and push"):
        // the run checkpoint version each watched task was last told of.
        ...a2aWatchPostgresDdl(tables.a2aTasks, prefix),
      ];
    default:
      throw new StoreError(`PostgresStore: no migration to layout version ${version}`);
  }
}
