/**
 * Inbox sessions across two replicas on one PostgreSQL database, through the session store of
 * docs/operating.md ("Sessions", "Replicas"): signed in on one replica, used on the other,
 * signed out there, and the copied cookie refused by both.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'pg';
import { bearerTokens, createInbox, CSRF_COOKIE, SESSION_COOKIE } from 'toolnexus-ts/inbox';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { pgSessions, SESSIONS_TABLE } from '../fixtures/inbox/pg-sessions';
import { inboxRunner, TOKENS } from '../fixtures/inbox/tools';
import { dropSchema, postgresUrl, sql, uniqueSchema } from '../fixtures/pg/server';

let url: string;
let schema: string;
beforeAll(async () => {
  url = await postgresUrl();
  schema = uniqueSchema('inbox_sessions');
  await sql(url, `CREATE SCHEMA "${schema}"`);
  await sql(url, SESSIONS_TABLE.replace('inbox_sessions', `"${schema}".inbox_sessions`));
});
afterAll(() => dropSchema(url, schema));

/** One replica: its own pool, store and inbox, as another process would have. */
async function replica() {
  const pool = new Pool({ connectionString: url, options: `-c search_path="${schema}"`, max: 2 });
  const store = new PostgresStore({ connectionString: url, schema });
  const inbox = createInbox({
    runner: inboxRunner(store),
    basePath: '/inbox',
    authorize: bearerTokens([{ token: TOKENS.alice, principal: { id: 'alice' } }]),
    signIns: { store: pgSessions(pool) },
  });
  const server = createServer(inbox);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/inbox`,
    async close() {
      inbox.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await store.close();
      await pool.end();
    },
  };
}

const cookieOf = (setCookie: string | null, name: string) => new RegExp(`(?:^|, )${name}=([^;]*)`).exec(setCookie ?? '')?.[1];

it('a session signed in on one replica is used and revoked on the other', async () => {
  const [one, two] = [await replica(), await replica()];
  try {
    const csrf = cookieOf((await fetch(`${one.base}/`)).headers.get('set-cookie'), CSRF_COOKIE) as string;
    const form = { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CSRF_COOKIE}=${csrf}` };
    const signIn = await fetch(`${one.base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: form,
      body: new URLSearchParams({ _csrf: csrf, token: TOKENS.alice }).toString(),
    });
    const session = cookieOf(signIn.headers.get('set-cookie'), SESSION_COOKIE) as string;
    const me = async (base: string) => (await fetch(`${base}/api/me`, { headers: { cookie: `${SESSION_COOKIE}=${session}` } })).status;
    expect([await me(one.base), await me(two.base)]).toEqual([200, 200]);
    // The table holds the id's digest, never the cookie.
    const rows = await sql<{ key: string }>(url, `SELECT key FROM "${schema}".inbox_sessions`);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.key).not.toBe(session);

    const signOut = await fetch(`${two.base}/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...form, cookie: `${SESSION_COOKIE}=${session}; ${CSRF_COOKIE}=${csrf}` },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
    });
    expect(signOut.status).toBe(303);
    expect([await me(one.base), await me(two.base)]).toEqual([401, 401]);
  } finally {
    await one.close();
    await two.close();
  }
});
