/**
 * Finds the PostgreSQL server the Postgres tests run against.
 *
 * - `TOOLNEXUS_PG_URL` set: that server (it must answer; an unreachable one fails the tests).
 * - Not set, and `CI` set: the tests FAIL. `.ci/run` starts the server and exports the URL;
 *   a CI run that silently tested nothing on PostgreSQL would be a lie.
 * - Not set, locally: `scripts/pg-test-server.sh start` is run (idempotent, serialised by a
 *   lock, so parallel test files share one throwaway cluster), and its URL is used. Needs the
 *   PostgreSQL 15 server binaries (or root to apt-get them).
 *
 * Never skips: a test that cannot reach PostgreSQL fails with the reason.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';

const execFileAsync = promisify(execFile);

export const SCRIPT = join(__dirname, '..', '..', '..', 'scripts', 'pg-test-server.sh');

let shared: Promise<string> | undefined;

/** The connection string of the shared test server, checked to answer. */
export function postgresUrl(): Promise<string> {
  shared ??= locate();
  return shared;
}

async function locate(): Promise<string> {
  const fromEnv = process.env.TOOLNEXUS_PG_URL;
  if (fromEnv) {
    await checkReachable(fromEnv, 'TOOLNEXUS_PG_URL');
    return fromEnv;
  }
  if (process.env.CI) {
    throw new Error(
      'CI is set but TOOLNEXUS_PG_URL is not: the PostgreSQL tests must run in CI. ' +
        'Start the server in .ci/run (`export TOOLNEXUS_PG_URL="$(bash scripts/pg-test-server.sh start)"`).',
    );
  }
  const url = await startScriptServer({});
  await checkReachable(url, 'scripts/pg-test-server.sh');
  return url;
}

/** Runs the test-server script with extra environment (its own dir and port, say) and returns what it prints. */
export async function runScript(subcommand: 'start' | 'stop' | 'restart' | 'destroy', env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [SCRIPT, subcommand], { env: { ...process.env, ...env }, timeout: 180_000 });
    return stdout.trim();
  } catch (error) {
    const detail = error as { stderr?: string; message: string };
    throw new Error(`scripts/pg-test-server.sh ${subcommand} failed: ${detail.stderr?.trim() || detail.message}`);
  }
}

async function startScriptServer(env: Record<string, string>): Promise<string> {
  const url = await runScript('start', env);
  if (!url.startsWith('postgres://')) throw new Error(`scripts/pg-test-server.sh printed no connection string: ${JSON.stringify(url)}`);
  return url;
}

async function checkReachable(url: string, source: string): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(`PostgreSQL from ${source} (${url}) does not answer: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A schema name no other test file or run uses. */
export function uniqueSchema(label: string): string {
  return `tnx_${label}_${process.pid}_${randomBytes(3).toString('hex')}`;
}

/** Runs SQL on a short-lived connection (setup, inspection, cleanup). */
export async function sql<Row extends Record<string, unknown> = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  await sql(url, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
