/**
 * PostgresStore on a real PostgreSQL server (see test/fixtures/pg/server.ts for which one:
 * TOOLNEXUS_PG_URL, by default the embedded server jest's global setup starts; never skipped).
 */
import { Pool } from 'pg';
import { InvalidArgumentError, Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { StoreError, ResumeCoordinator, StoreUnavailableError, type SuspendedCall, type Claim } from 'toolnexus-ts/suspension';
import { POSTGRES_STORE_SCHEMA_VERSION, PostgresStore } from 'toolnexus-ts/postgres';
import { runStoreConformance, sampleCall } from 'toolnexus-ts/testing';
import { dropSchema, postgresUrl, sql, sqlRow, uniqueSchema } from '../fixtures/pg/server';

const schema = uniqueSchema('store');
let url: string;

beforeAll(async () => {
  url = await postgresUrl();
});
afterAll(async () => {
  await dropSchema(url, schema);
});

// Every conformance test gets its own table prefix, so it starts from empty tables (and
// exercises table creation on first use).
let tables = 0;
runStoreConformance(
  'PostgresStore',
  async () => new PostgresStore({ connectionString: await postgresUrl(), schema, tablePrefix: `c${++tables}_` }),
);

/** The tables of layout version 1, as released: databases in the field look like this. */
const V1_DDL = (t: (name: string) => string) => [
  `CREATE TABLE ${t('schema_version')} (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), version integer NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE ${t('suspensions')} (
     id text PRIMARY KEY, seq bigint GENERATED ALWAYS AS IDENTITY, tool text NOT NULL, kind text NOT NULL,
     status text NOT NULL CHECK (status IN ('pending', 'resolving', 'resolved', 'declined', 'expired', 'cancelled')),
     request json NOT NULL, args json, answer json, outcome json, call_id text, run_id text, created_at text NOT NULL,
     updated_at text, lease_until_ms bigint, claim_token text)`,
  `CREATE TABLE ${t('runs')} (run_id text PRIMARY KEY, version integer NOT NULL CHECK (version >= 1), state json NOT NULL, updated_at text NOT NULL)`,
  `INSERT INTO ${t('schema_version')} (singleton, version) VALUES (true, 1)`,
];

function call(id: string, over: Partial<SuspendedCall> = {}): SuspendedCall {
  return {
    request: { id, kind: 'approval', prompt: `Approve ${id}?` },
    tool: 'transfer',
    args: { amount: 5 },
    status: 'pending',
    createdAt: '2030-01-01T00:00:00.000Z',
    ...over,
  };
}

describe('PostgresStore specifics', () => {
  const stores: PostgresStore[] = [];
  const open = (over: { tablePrefix: string; autoMigrate?: boolean; schema?: string }) => {
    const store = new PostgresStore({ connectionString: url, schema, ...over });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  const tableNames = async (prefix: string, inSchema = schema) =>
    (
      await sql<{ table_name: string }>(
        url,
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE $2 ORDER BY 1',
        [inSchema, `${prefix}%`],
      )
    ).map((r) => r.table_name);

  it('creates and versions its tables on first use, not in the constructor', async () => {
    const store = open({ tablePrefix: 'lazy_' });
    expect(await tableNames('lazy_')).toEqual([]);
    expect(await store.get('pnd-x')).toBeUndefined();
    expect(await tableNames('lazy_')).toEqual([
      'lazy_a2a_tasks',
      'lazy_deliveries',
      'lazy_grants',
      'lazy_keyed_calls',
      'lazy_mcp_tasks',
      'lazy_run_steers',
      'lazy_runs',
      'lazy_schema_version',
      'lazy_sessions',
      'lazy_stream_logs',
      'lazy_stream_parts',
      'lazy_suspensions',
    ]);
    expect(await sql(url, `SELECT version FROM "${schema}".lazy_schema_version`)).toEqual([{ version: POSTGRES_STORE_SCHEMA_VERSION }]);
  });

  it('creates a schema that does not exist yet', async () => {
    const ownSchema = uniqueSchema('fresh');
    try {
      const store = open({ tablePrefix: 'app_', schema: ownSchema });
      await store.insert(call('pnd-s'));
      expect(await tableNames('app_', ownSchema)).toEqual([
        'app_a2a_tasks',
        'app_deliveries',
        'app_grants',
        'app_keyed_calls',
        'app_mcp_tasks',
        'app_run_steers',
        'app_runs',
        'app_schema_version',
        'app_sessions',
        'app_stream_logs',
        'app_stream_parts',
        'app_suspensions',
      ]);
    } finally {
      await dropSchema(url, ownSchema);
    }
  });

  it('migrates once when eight stores (eight pools) start on fresh tables at the same moment', async () => {
    const many = Array.from({ length: 8 }, () => open({ tablePrefix: 'herd_' }));
    await Promise.all(many.map((s, i) => s.insert(call(`pnd-herd-${i}`))));
    expect(await sql(url, `SELECT version FROM "${schema}".herd_schema_version`)).toEqual([{ version: POSTGRES_STORE_SCHEMA_VERSION }]);
    expect(await many[0]!.list()).toHaveLength(8);
  });

  it('refuses tables written by a newer layout version, and leaves them untouched', async () => {
    await sql(url, `CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await sql(url, `CREATE TABLE "${schema}".future_schema_version (singleton boolean PRIMARY KEY, version integer NOT NULL)`);
    await sql(url, `INSERT INTO "${schema}".future_schema_version VALUES (true, 99)`);
    const store = open({ tablePrefix: 'future_' });
    await expect(store.get('pnd-x')).rejects.toThrow(StoreError);
    await expect(store.insert(call('pnd-x'))).rejects.toThrow(
      new RegExp(
        `layout version 99, written by a newer toolnexus-ts; this one knows up to ${POSTGRES_STORE_SCHEMA_VERSION} and will not touch them`,
      ),
    );
    expect(await tableNames('future_')).toEqual(['future_schema_version']);
  });

  it('with autoMigrate off, refuses missing tables with a clear error until ensureSchema() creates them', async () => {
    const store = open({ tablePrefix: 'manual_', autoMigrate: false });
    await expect(store.list()).rejects.toThrow(
      /no tables under .*manual_schema_version.* autoMigrate is off; create them with ensureSchema\(\)/,
    );
    expect(await tableNames('manual_')).toEqual([]);
    await store.ensureSchema();
    await store.insert(call('pnd-m'));
    const verifying = open({ tablePrefix: 'manual_', autoMigrate: false });
    expect((await verifying.get('pnd-m'))?.status).toBe('pending');
  });

  it('accepts the longest prefix it allows, and no table or index name is truncated', async () => {
    const prefix = `l${'x'.repeat(39)}_`;
    const store = open({ tablePrefix: prefix });
    await store.insert(call('pnd-long'));
    const names = await sql<{ relname: string }>(
      url,
      "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND relname LIKE $2 || '%' ORDER BY 1",
      [schema, prefix],
    );
    expect(names.map((n) => n.relname.slice(prefix.length))).toEqual([
      'a2a_tasks',
      'a2a_tasks_due_idx',
      'a2a_tasks_idle_idx',
      'a2a_tasks_owner_idx',
      'a2a_tasks_pkey',
      'a2a_tasks_watched_idx',
      'deliveries',
      'deliveries_call_idx',
      'deliveries_done_idx',
      'deliveries_due_idx',
      'deliveries_pkey',
      'grants',
      'grants_id_key',
      'grants_pkey',
      'grants_seq_seq',
      'grants_tool_idx',
      'keyed_calls',
      'keyed_calls_done_idx',
      'keyed_calls_pkey',
      'mcp_tasks',
      'mcp_tasks_pkey',
      'mcp_tasks_upd_idx',
      'run_steers',
      'run_steers_id_key',
      'run_steers_pkey',
      'run_steers_seq_seq',
      'runs',
      'runs_pkey',
      'runs_running_idx',
      'runs_upd_idx',
      'schema_version',
      'schema_version_pkey',
      'sessions',
      'sessions_pkey',
      'sessions_run_idx',
      'sessions_upd_idx',
      'stream_logs',
      'stream_logs_closed_idx',
      'stream_logs_pkey',
      'stream_parts',
      'stream_parts_pkey',
      'suspensions',
      'suspensions_hist_idx',
      'suspensions_kind_idx',
      'suspensions_pkey',
      'suspensions_run_idx',
      'suspensions_seq_seq',
      'suspensions_status_idx',
    ]);
  });

  it('keeps stores with different table prefixes apart in one schema', async () => {
    const billing = open({ tablePrefix: 'billing_' });
    const support = open({ tablePrefix: 'support_' });
    await billing.insert(call('pnd-same-id', { tool: 'refund' }));
    await support.insert(call('pnd-same-id', { tool: 'reply' }));
    expect((await billing.get('pnd-same-id'))?.tool).toBe('refund');
    expect((await support.get('pnd-same-id'))?.tool).toBe('reply');
    expect(await billing.claim('pnd-same-id', { id: 'pnd-same-id', ok: true }, 60_000)).toBeDefined();
    expect((await support.get('pnd-same-id'))?.status).toBe('pending');
  });

  it('gives JSON back exactly as written: key order, duplicate-free text, \\u0000, astral characters, big numbers', async () => {
    const store = open({ tablePrefix: 'json_' });
    // eslint-disable-next-line no-loss-of-precision -- deliberately more digits than a double keeps: the store must round-trip the number JavaScript made of it
    const args = { zebra: 1, apple: { y: [3, 2, 1], x: null }, nul: 'a\u0000b', emoji: '🦄 ünï', big: 12345678901234567890, tiny: 1e-7 };
    await store.insert(call('pnd-json', { args }));
    const read = (await store.get('pnd-json'))!;
    expect(JSON.stringify(read.args)).toBe(JSON.stringify(args));
    const row = await sqlRow<{ type: string }>(
      url,
      `SELECT pg_typeof(args)::text AS type FROM "${schema}".json_suspensions WHERE id = 'pnd-json'`,
    );
    expect(row.type).toBe('json');
  });

  it('lets exactly one of eight stores (separate pools, separate connections) win a claim', async () => {
    const racers = Array.from({ length: 8 }, () => open({ tablePrefix: 'race_' }));
    await racers[0]!.insert(call('pnd-race'));
    const claims = await Promise.all(
      racers.flatMap((s) => [
        s.claim('pnd-race', { id: 'pnd-race', ok: true }, 60_000),
        s.claim('pnd-race', { id: 'pnd-race', ok: true }, 60_000),
      ]),
    );
    const winners = claims.filter((c) => c !== undefined);
    expect(winners).toHaveLength(1);
    expect(await racers[3]!.complete(winners[0]!, { status: 'resolved', outcome: success('once') })).toBe(true);
  });

  it('refuses bad options with InvalidArgumentError before touching the database', () => {
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /needs options/],
      [{}, /needs options: \{ connectionString \} or \{ poolConfig \} or \{ pool \}/],
      [{ connectionString: '  ' }, /connectionString must be a non-empty postgres:\/\/ URL/],
      [{ connectionString: url, schema: 'app; DROP TABLE users' }, /schema must be letters, digits and underscores/],
      [{ connectionString: url, schema: '1st' }, /schema must be letters/],
      [{ connectionString: url, tablePrefix: 'my-prefix' }, /tablePrefix must be letters/],
      [
        { connectionString: url, tablePrefix: 'p'.repeat(42) },
        /tablePrefix "p{42}" is too long: at most 41 characters \(PostgreSQL names are limited to 63 bytes\)/,
      ],
      [{ pool: { query: () => undefined } }, /options.pool must be a pg.Pool/],
      [{ connectionString: url, completeRetryMs: -1 }, /completeRetryMs must be a non-negative number of milliseconds, got -1/],
    ];
    for (const [options, message] of bad) {
      expect(() => new PostgresStore(options as never)).toThrow(InvalidArgumentError);
      expect(() => new PostgresStore(options as never)).toThrow(message);
    }
    expect(() => new PostgresStore({ connectionString: url, tablePrefix: 'p'.repeat(41) })).not.toThrow();
    const pool = new Pool({ connectionString: url });
    expect(() => new PostgresStore({ pool, connectionString: url } as never)).toThrow(
      /either an existing pool or connection settings, not both/,
    );
    return pool.end();
  });

  it('refuses an outcome JSON cannot carry with StoreError and keeps the claim', async () => {
    const store = open({ tablePrefix: 'args_' });
    await store.insert(call('pnd-a'));
    const claim = (await store.claim('pnd-a', { id: 'pnd-a', ok: true }, 60_000))!;
    await expect(
      store.complete(claim, { status: 'resolved', outcome: { output: 'x', isError: false, metadata: { n: 1n } } }),
    ).rejects.toThrow(StoreError);
    expect(await store.get('pnd-a')).toMatchObject({ status: 'resolving', fence: 1 });
    expect(await store.complete(claim, { status: 'resolved', outcome: success('fine') })).toBe(true);
  });

  it('judges leases by the database clock: a process whose clock runs 90 s ahead cannot take a live claim', async () => {
    const holder = open({ tablePrefix: 'clock_' });
    const skewed = open({ tablePrefix: 'clock_' });
    await holder.insert(call('pnd-clock'));
    const claim = (await holder.claim('pnd-clock', { id: 'pnd-clock', ok: true }, 60_000))!;
    const { db_ms } = await sqlRow<{ db_ms: string }>(url, 'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS db_ms');
    // The lease was granted from the server's now, not this process's.
    expect(Math.abs(Date.parse(claim.call.leaseUntil!) - 60_000 - Number(db_ms))).toBeLessThan(2_000);
    const realNow = Date.now.bind(Date);
    const ahead = jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 90_000);
    try {
      expect(await skewed.claim('pnd-clock', { id: 'pnd-clock', ok: true }, 60_000)).toBeUndefined();
      expect(await skewed.get('pnd-clock')).toMatchObject({ status: 'resolving', fence: 1 });
    } finally {
      ahead.mockRestore();
    }
    expect(await holder.complete(claim, { status: 'resolved', outcome: success('mine') })).toBe(true);
  });

  it("lets a lapsed lease be taken over whatever the taker's own clock says (90 s behind here)", async () => {
    const holder = open({ tablePrefix: 'lapse_' });
    const skewed = open({ tablePrefix: 'lapse_' });
    await holder.insert(call('pnd-lapse'));
    const first = (await holder.claim('pnd-lapse', { id: 'pnd-lapse', ok: true }, 40))!;
    await new Promise((r) => setTimeout(r, 100));
    const realNow = Date.now.bind(Date);
    const behind = jest.spyOn(Date, 'now').mockImplementation(() => realNow() - 90_000);
    let second: Claim | undefined;
    try {
      second = await skewed.claim('pnd-lapse', { id: 'pnd-lapse', ok: true }, 60_000);
    } finally {
      behind.mockRestore();
    }
    expect(second?.fence).toBe(2);
    expect(await holder.complete(first, { status: 'resolved', outcome: success('stale') })).toBe(false);
    expect(await skewed.complete(second!, { status: 'resolved', outcome: success('taken over') })).toBe(true);
  });

  it('upgrades layout version 1 tables in place: rows kept, a call caught mid-claim counted as claimed once', async () => {
    const t = (name: string) => `"${schema}".v1_${name}`;
    await sql(url, `CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    for (const statement of V1_DDL(t)) await sql(url, statement);
    const insert = `INSERT INTO ${t('suspensions')} (id, tool, kind, status, request, args, answer, outcome, call_id, run_id, created_at, updated_at, lease_until_ms, claim_token)
      VALUES ($1, 'transfer', 'approval', $2, $3::json, '{"amount":5}', $4::json, $5::json, 'call_1', NULL, '2030-01-01T00:00:00.000Z', $6, $7, $8)`;
    const request = (id: string) => JSON.stringify({ id, kind: 'approval', prompt: `Approve ${id}?` });
    await sql(url, insert, ['pnd-waiting', 'pending', request('pnd-waiting'), null, null, null, null, null]);
    await sql(url, insert, [
      'pnd-held',
      'resolving',
      request('pnd-held'),
      '{"id":"pnd-held","ok":true}',
      null,
      '2030-01-01T00:00:01.000Z',
      Date.parse('2020-01-01T00:00:00.000Z'),
      '1b4e28ba-2fa1',
    ]);
    await sql(url, insert, [
      'pnd-done',
      'resolved',
      request('pnd-done'),
      '{"id":"pnd-done","ok":true}',
      '{"output":"ok","isError":false}',
      '2030-01-01T00:00:02.000Z',
      null,
      null,
    ]);
    await sql(url, `INSERT INTO ${t('runs')} VALUES ('run-1', 2, '{"turns":2}', '2030-01-01T00:00:03.000Z')`);

    const strict = open({ tablePrefix: 'v1_', autoMigrate: false });
    await expect(strict.list()).rejects.toThrow(`at layout version 1, this library needs ${POSTGRES_STORE_SCHEMA_VERSION}`);

    const store = open({ tablePrefix: 'v1_' });
    const base = { tool: 'transfer', args: { amount: 5 }, callId: 'call_1', createdAt: '2030-01-01T00:00:00.000Z' };
    expect(await store.list()).toEqual([
      { ...base, request: JSON.parse(request('pnd-waiting')) as unknown, status: 'pending' },
      {
        ...base,
        request: JSON.parse(request('pnd-held')) as unknown,
        status: 'resolving',
        updatedAt: '2030-01-01T00:00:01.000Z',
        answer: { id: 'pnd-held', ok: true },
        leaseUntil: '2020-01-01T00:00:00.000Z',
        fence: 1,
      },
      {
        ...base,
        request: JSON.parse(request('pnd-done')) as unknown,
        status: 'resolved',
        updatedAt: '2030-01-01T00:00:02.000Z',
        answer: { id: 'pnd-done', ok: true },
        outcome: { output: 'ok', isError: false },
      },
    ]);
    expect(await store.loadRun('run-1')).toEqual({
      runId: 'run-1',
      version: 2,
      state: { turns: 2 },
      updatedAt: '2030-01-01T00:00:03.000Z',
    });
    expect(await sql(url, `SELECT version FROM ${t('schema_version')}`)).toEqual([{ version: POSTGRES_STORE_SCHEMA_VERSION }]);
    const columns = (
      await sql<{ column_name: string }>(
        url,
        'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
        [schema, 'v1_suspensions'],
      )
    ).map((c) => c.column_name);
    expect(columns).toEqual(expect.arrayContaining(['fence', 'chain', 'next_id', 'binding']));
    expect(columns).not.toContain('claim_token');
    expect((await store.claim('pnd-held', { id: 'pnd-held', ok: true }, 60_000))?.fence).toBe(2);
    expect((await store.claim('pnd-waiting', { id: 'pnd-waiting', ok: true }, 60_000))?.fence).toBe(1);
    expect((await open({ tablePrefix: 'v1_', autoMigrate: false }).get('pnd-done'))?.status).toBe('resolved');
  });

  it('upgrades layout version 2 tables in place to the audit trail: rows kept without audit, new answers audited', async () => {
    const t = (name: string) => `"${schema}".v2_${name}`;
    await sql(url, `CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    for (const statement of V1_DDL(t)) await sql(url, statement);
    // Step 2 as released.
    await sql(
      url,
      `ALTER TABLE ${t('suspensions')} ADD COLUMN fence integer CHECK (fence >= 1), ADD COLUMN chain json, ADD COLUMN next_id text, ADD COLUMN binding text`,
    );
    await sql(url, `ALTER TABLE ${t('suspensions')} DROP COLUMN claim_token`);
    await sql(url, `UPDATE ${t('schema_version')} SET version = 2`);
    const insert = `INSERT INTO ${t('suspensions')} (id, tool, kind, status, request, args, answer, outcome, run_id, created_at, updated_at, fence)
      VALUES ($1, 'transfer', 'approval', $2, $3::json, '{"amount":5}', $4::json, $5::json, 'run-2', '2020-01-01T00:00:00.000Z', $6, $7)`;
    const request = (id: string) => JSON.stringify({ id, kind: 'approval', prompt: `Approve ${id}?` });
    await sql(url, insert, ['pnd-open', 'pending', request('pnd-open'), null, null, null, null]);
    await sql(url, insert, [
      'pnd-old',
      'declined',
      request('pnd-old'),
      '{"id":"pnd-old","ok":false}',
      '{"output":"declined/expired: no","isError":true}',
      '2020-01-01T00:00:02.000Z',
      1,
    ]);

    await expect(open({ tablePrefix: 'v2_', autoMigrate: false }).list()).rejects.toThrow(
      `at layout version 2, this library needs ${POSTGRES_STORE_SCHEMA_VERSION}`,
    );
    const store = open({ tablePrefix: 'v2_' });
    const old = (await store.get('pnd-old'))!;
    expect(old).toMatchObject({ status: 'declined', fence: 1, runId: 'run-2' });
    expect([old.answeredBy, old.answeredAt, old.comment]).toEqual([undefined, undefined, undefined]);
    const claim = (await store.claim('pnd-open', { id: 'pnd-open', ok: true }, 60_000, { by: { id: 'cli:ops' }, comment: 'go' }))!;
    expect(await store.complete(claim, { status: 'resolved', outcome: { output: 'done', isError: false } })).toBe(true);
    expect((await store.history()).map((c) => [c.request.id, c.answeredBy?.id, c.comment, c.answeredAt === claim.at])).toEqual([
      ['pnd-open', 'cli:ops', 'go', true],
      ['pnd-old', undefined, undefined, false],
    ]);
    expect(await sql(url, `SELECT version FROM ${t('schema_version')}`)).toEqual([{ version: POSTGRES_STORE_SCHEMA_VERSION }]);
    const indexes = await sql<{ indexname: string }>(url, 'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2', [
      schema,
      'v2_suspensions',
    ]);
    expect(indexes.map((i) => i.indexname)).toContain('v2_suspensions_hist_idx');
  });

  it('upgrades layout version 3 tables in place to trace context (step 4): rows kept without it, new calls keep their traceparent', async () => {
    const t = (name: string) => `"${schema}".v3_${name}`;
    await sql(url, `CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    for (const statement of V1_DDL(t)) await sql(url, statement);
    // Steps 2 and 3 as released.
    await sql(
      url,
      `ALTER TABLE ${t('suspensions')} ADD COLUMN fence integer CHECK (fence >= 1), ADD COLUMN chain json, ADD COLUMN next_id text, ADD COLUMN binding text`,
    );
    await sql(url, `ALTER TABLE ${t('suspensions')} DROP COLUMN claim_token`);
    await sql(url, `ALTER TABLE ${t('suspensions')} ADD COLUMN answered_by json, ADD COLUMN answered_at text, ADD COLUMN comment text`);
    await sql(url, `UPDATE ${t('schema_version')} SET version = 3`);
    await sql(
      url,
      `INSERT INTO ${t('suspensions')} (id, tool, kind, status, request, args, run_id, created_at)
       VALUES ('pnd-v3', 'transfer', 'approval', 'pending', $1::json, '{"amount":5}', 'run-3', '2030-01-01T00:00:00.000Z')`,
      [JSON.stringify({ id: 'pnd-v3', kind: 'approval', prompt: 'Approve?' })],
    );

    await expect(open({ tablePrefix: 'v3_', autoMigrate: false }).list()).rejects.toThrow(
      `at layout version 3, this library needs ${POSTGRES_STORE_SCHEMA_VERSION}`,
    );
    const store = open({ tablePrefix: 'v3_' });
    const old = (await store.get('pnd-v3'))!;
    expect(old).toMatchObject({ status: 'pending', runId: 'run-3' });
    expect('traceparent' in old).toBe(false);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await store.insert({ ...call('pnd-v4'), traceparent });
    expect((await store.get('pnd-v4'))?.traceparent).toBe(traceparent);
    const claim = (await store.claim('pnd-v3', { id: 'pnd-v3', ok: true }, 60_000))!;
    expect(await store.complete(claim, { status: 'resolved', outcome: { output: 'done', isError: false } })).toBe(true);
    expect(await sql(url, `SELECT version FROM ${t('schema_version')}`)).toEqual([{ version: 4 }]);
    expect(await sql(url, `SELECT id, traceparent FROM ${t('suspensions')} ORDER BY id`)).toEqual([
      { id: 'pnd-v3', traceparent: null },
      { id: 'pnd-v4', traceparent },
    ]);
  });

  it('shares an existing pool and leaves it open on close()', async () => {
    const pool = new Pool({ connectionString: url, max: 2 });
    try {
      const store = new PostgresStore({ pool, schema, tablePrefix: 'shared_' });
      await store.insert(call('pnd-shared'));
      await store.close();
      await expect(store.get('pnd-shared')).rejects.toThrow(new StoreError('PostgresStore is closed'));
      const { rows } = await pool.query(`SELECT status FROM "${schema}".shared_suspensions WHERE id = 'pnd-shared'`);
      expect(rows).toEqual([{ status: 'pending' }]);
      const again = new PostgresStore({ pool, schema, tablePrefix: 'shared_' });
      expect((await again.get('pnd-shared'))?.status).toBe('pending');
      await again.close();
    } finally {
      await pool.end();
    }
  });

  it('ends the pool it created on close(): its connections leave the server', async () => {
    const store = new PostgresStore({
      connectionString: url,
      schema,
      tablePrefix: 'own_',
      poolConfig: { application_name: 'tnx-own-pool' },
    });
    await store.insert(call('pnd-own'));
    const connections = async () =>
      (await sqlRow<{ n: string }>(url, "SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'tnx-own-pool'")).n;
    expect(Number(await connections())).toBeGreaterThan(0);
    await store.close();
    for (let i = 0; i < 50 && Number(await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(Number(await connections())).toBe(0);
  });

  it('reports an unreachable server as StoreUnavailableError; the coordinator does not pretend a call is pending', async () => {
    const store = new PostgresStore({
      connectionString: 'postgres://postgres@127.0.0.1:1/nowhere',
      poolConfig: { connectionTimeoutMillis: 2000 },
    });
    stores.push(store);
    await expect(store.get('pnd-x')).rejects.toThrow(StoreUnavailableError);
    await expect(store.get('pnd-x')).rejects.toThrow(
      /^PostgreSQL was unavailable during the schema check \(connect ECONNREFUSED 127\.0\.0\.1:1\)\. Suspensions already stored are kept; retry once the database is reachable\.$/,
    );
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'approve',
        description: 'Needs approval',
        run: (_a, ctx) => (ctx?.answer ? 'ok' : pending({ kind: 'approval', prompt: 'Approve?' })),
      }),
    );
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const rejected = await coordinator.execute('approve', {}).catch((e: unknown) => e);
    expect(rejected).toBeInstanceOf(StoreUnavailableError);
    expect(rejected).toBeInstanceOf(StoreError);
  });

  it('turns a connection killed mid-claim into StoreUnavailableError; the call is still pending and a retry claims it', async () => {
    const store = new PostgresStore({
      connectionString: url,
      schema,
      tablePrefix: 'kill_',
      poolConfig: { application_name: 'tnx-killed' },
    });
    stores.push(store);
    await store.insert(call('pnd-kill'));
    // Another session holds the row, so the store's claim waits inside its UPDATE...
    const blocker = new Pool({ connectionString: url, max: 1 });
    const held = await blocker.connect();
    try {
      await held.query('BEGIN');
      await held.query(`SELECT id FROM "${schema}".kill_suspensions WHERE id = 'pnd-kill' FOR UPDATE`);
      const claiming = store.claim('pnd-kill', { id: 'pnd-kill', ok: true }, 60_000).catch((e: unknown) => e);
      let waiting: Array<{ pid: number }> = [];
      for (let i = 0; i < 100 && waiting.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        waiting = await sql<{ pid: number }>(
          url,
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'tnx-killed' AND wait_event_type = 'Lock'",
        );
      }
      expect(waiting).toHaveLength(1);
      // ...and its connection is cut under it, as a failover or an admin would.
      await sql(url, 'SELECT pg_terminate_backend($1)', [waiting[0]!.pid]);
      const error = await claiming;
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(
        /^PostgreSQL was unavailable during the claim of suspension pnd-kill \(terminating connection due to administrator command\)/,
      );
    } finally {
      await held.query('ROLLBACK');
      held.release();
      await blocker.end();
    }
    expect(await store.get('pnd-kill')).toMatchObject({ status: 'pending' });
    expect(await store.claim('pnd-kill', { id: 'pnd-kill', ok: true }, 60_000)).toBeDefined();
  });

  it('survives the server dropping its idle connections: no crash, the next call reconnects', async () => {
    const store = new PostgresStore({
      connectionString: url,
      schema,
      tablePrefix: 'idle_',
      poolConfig: { application_name: 'tnx-idle' },
    });
    stores.push(store);
    await Promise.all([store.insert(call('pnd-i1')), store.insert(call('pnd-i2'))]);
    const { n } = await sqlRow<{ n: string }>(
      url,
      "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = 'tnx-idle'",
    );
    expect(Number(n)).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    // Inserted at once on two connections: which commits first is the server's business, so compare as sets.
    expect((await store.list()).map((c) => c.request.id).sort()).toEqual(['pnd-i1', 'pnd-i2']);
  });
});

describe('PostgresStore prepared statements', () => {
  /** The statements prepared on the one connection of `pool`, after a read through a store on it. */
  async function preparedAfterRead(preparedStatements: boolean | undefined): Promise<string[]> {
    const pool = new Pool({ connectionString: url, max: 1 });
    const store = new PostgresStore({ pool, schema, tablePrefix: `prep${String(preparedStatements)}_`, preparedStatements });
    try {
      await store.get('pnd-none');
      await store.get('pnd-none');
      const { rows } = await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name');
      return rows.map((row) => row.name);
    } finally {
      await store.close();
      await pool.end();
    }
  }

  it('names its statements, so PostgreSQL parses and plans each once per connection (docs/performance.md)', async () => {
    expect(await preparedAfterRead(undefined)).toEqual([expect.stringMatching(/^toolnexus_[0-9a-f]{32}$/)]);
  });

  it('runs them unnamed with preparedStatements: false, for a pooler that cannot keep them', async () => {
    expect(await preparedAfterRead(false)).toEqual([]);
  });

  it('refuses a preparedStatements that is not a boolean', () => {
    expect(() => new PostgresStore({ connectionString: url, preparedStatements: 'yes' as unknown as boolean })).toThrow(
      'PostgresStore: preparedStatements must be true or false, got yes',
    );
  });
});

describe('PostgresStore early claim (docs/performance.md, "A fleet on one PostgreSQL")', () => {
  const approve = defineTool({
    name: 'approve',
    description: 'Runs once approved',
    run: (_args, ctx) => (ctx?.answer ? success('approved') : pending({ kind: 'approval', prompt: 'Approve?' })),
  });

  it('settles an answer in two statements, each prepared: the read with the claim, then the settlement', async () => {
    const pool = new Pool({ connectionString: url, max: 1 });
    const store = new PostgresStore({ pool, schema, tablePrefix: 'early2_' });
    try {
      const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(approve), store });
      const id = pendingOf(await coordinator.execute('approve', {}))!.id;
      const queries = jest.spyOn(pool, 'query');
      expect(await coordinator.resolve({ id, ok: true })).toEqual({ output: 'approved', isError: false });
      const sent = queries.mock.calls.map(([config]) => config as unknown as { name?: string; text: string });
      queries.mockRestore();
      expect(sent).toHaveLength(2);
      expect(sent.map((config) => config.name)).toEqual([expect.stringMatching(/^toolnexus_/), expect.stringMatching(/^toolnexus_/)]);
      expect(sent[0]!.text).toMatch(/FOR UPDATE/);
      expect(await store.get(id)).toMatchObject({ status: 'resolved', fence: 1 });
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it('leaves the row of a refused answer as it was, column for column: status, fence, lease, updated_at and the audit', async () => {
    const store = new PostgresStore({ connectionString: url, schema, tablePrefix: 'early3_' });
    const policy = ({ principal }: { principal: { id: string } }) =>
      principal.id.startsWith('ops:') ? ('allow' as const) : { deny: 'ops only' };
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(approve), store, policy });
    const elsewhere = new ResumeCoordinator({ toolkit: new Toolkit(), store, policy });
    const rowText = async (id: string) =>
      (await sqlRow<{ row: string }>(url, `SELECT row_to_json(t)::text AS row FROM "${schema}".early3_suspensions t WHERE id = $1`, [id]))
        .row;
    try {
      const id = pendingOf(await coordinator.execute('approve', {}, undefined, { principal: { id: 'ops:ann' } }))!.id;
      const before = await rowText(id);
      expect(JSON.parse(before)).toMatchObject({ status: 'pending', fence: null, lease_until_ms: null, answered_by: null });
      await expect(coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'dev:eve' }, comment: 'me' })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
      });
      expect(await rowText(id)).toBe(before);
      // Separation of duties: the principal the call was requested for.
      await expect(coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'ops:ann' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
      });
      expect(await rowText(id)).toBe(before);
      // Allowed, but this process lacks the tool.
      await expect(elsewhere.resolve({ id, ok: true }, undefined, { by: { id: 'ops:bob' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_UNREGISTERED_TOOL',
      });
      expect(await rowText(id)).toBe(before);
      expect(await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'ops:bob' } })).toEqual({
        output: 'approved',
        isError: false,
      });
      expect(JSON.parse(await rowText(id))).toMatchObject({ status: 'resolved', fence: 1, answered_by: { id: 'ops:bob' } });
    } finally {
      await store.close();
    }
  });

  it('reads a call through the early claim exactly as get reads it: every column, JSON null arguments apart from none', async () => {
    const store = new PostgresStore({ connectionString: url, schema, tablePrefix: 'early4_' });
    const createdAt = '2026-01-01T00:00:00.000Z';
    const rich: SuspendedCall = {
      request: {
        id: 'pnd-rich',
        kind: 'approval',
        prompt: 'Pay 🦄 ünï?',
        // eslint-disable-next-line no-loss-of-precision -- more digits than a double keeps: read back as JavaScript made it
        data: { big: 12345678901234567890, z: 1, a: [3, null] },
      },
      tool: 'approve',
      args: { zebra: 1, apple: { y: [3, 2, 1], x: null }, nul: 'a\u0000b', tiny: 1e-7 },
      status: 'pending',
      createdAt,
      callId: 'call-1',
      runId: 'run-1',
      chain: [{ request: { id: 'pnd-first', kind: 'approval', prompt: 'First?' }, answer: { id: 'pnd-first', ok: true, data: { n: 1 } } }],
      requestedBy: { id: 'ops:ann' },
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      session: 'sess-1',
    };
    try {
      await store.insert(rich);
      // JSON null arguments and none at all: the row-as-JSON must keep them apart.
      await store.insert(sampleCall('pnd-null', { tool: 'approve', args: null, createdAt }));
      await store.insert(sampleCall('pnd-none', { tool: 'approve', args: undefined, createdAt }));
      for (const id of ['pnd-rich', 'pnd-null', 'pnd-none']) {
        const before = await store.get(id);
        const early = (await store.claimEarly(id, { id, ok: true, data: { note: 'é' } }, 60_000, {
          by: { id: 'ops:bob' },
          comment: 'ok',
        }))!;
        expect(early.read).toEqual(before);
        expect(early.claim!.call).toEqual(await store.get(id));
        expect(early.claim!.call.request).not.toBe(early.read.request);
      }
      expect((await store.get('pnd-null'))!.args).toBeNull();
      expect((await store.get('pnd-none'))!.args).toBeUndefined();
      // A request holding \u0000 (which PostgreSQL's JSON path operators refuse) is read, not claimed early; its answer goes the read-first way.
      await store.insert({
        ...rich,
        request: { id: 'pnd-nul', kind: 'approval', prompt: 'a\u0000b?' },
        callId: undefined,
        runId: undefined,
      });
      const nul = (await store.claimEarly('pnd-nul', { id: 'pnd-nul', ok: true }, 60_000))!;
      expect(nul).toEqual({ read: await store.get('pnd-nul') });
      expect(nul.read).toMatchObject({ status: 'pending', request: { prompt: 'a\u0000b?' } });
      const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(approve), store });
      expect(await coordinator.resolve({ id: 'pnd-nul', ok: true })).toEqual({ output: 'approved', isError: false });
      // Not claimed (held, then settled): the row as it is, outcome and all.
      const held = (await store.claimEarly('pnd-rich', { id: 'pnd-rich', ok: true }, 60_000))!;
      expect(held).toEqual({ read: await store.get('pnd-rich') });
      const claim = (await store.get('pnd-rich'))!;
      expect(
        await store.complete(
          { id: 'pnd-rich', fence: claim.fence!, call: claim, at: claim.updatedAt! },
          { status: 'resolved', outcome: { output: 'paid', isError: false } },
        ),
      ).toBe(true);
      const settled = (await store.claimEarly('pnd-rich', { id: 'pnd-rich', ok: true }, 60_000))!;
      expect(settled).toEqual({ read: await store.get('pnd-rich') });
      expect(settled.read).toMatchObject({
        status: 'resolved',
        outcome: { output: 'paid', isError: false },
        answeredBy: { id: 'ops:bob' },
      });
    } finally {
      await store.close();
    }
  });

  it("returns the newest row when another writer changed it while the claim waited, not the claim's older snapshot", async () => {
    const pool = new Pool({ connectionString: url, max: 1 });
    const store = new PostgresStore({ pool, schema, tablePrefix: 'early5_' });
    const writer = new Pool({ connectionString: url, max: 1 });
    const other = await writer.connect();
    try {
      await store.insert(sampleCall('pnd-race', { tool: 'approve' }));
      const before = (await store.get('pnd-race'))!;
      // Another writer changes the row and keeps it pending, its transaction open: the claim waits for its lock.
      await other.query('BEGIN');
      await other.query(`UPDATE "${schema}".early5_suspensions SET traceparent = $2 WHERE id = $1`, [
        'pnd-race',
        '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      ]);
      const claiming = store.claimEarly('pnd-race', { id: 'pnd-race', ok: true }, 60_000);
      for (let waited = 0; ; waited++) {
        const { n } = await sqlRow<{ n: string }>(
          url,
          "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%early5_suspensions%'",
        );
        if (n === '1') break;
        if (waited > 200) throw new Error('the claim never waited for the writer');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await other.query('COMMIT');
      const early = (await claiming)!;
      // The row as it was is the one the claim replaced, as the refusal's restore needs: the writer's change included.
      expect(early.read).toEqual({ ...before, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
      expect(early.claim).toMatchObject({ id: 'pnd-race', fence: 1 });
      expect(early.claim!.call).toEqual(await store.get('pnd-race'));
      expect(early.claim!.call).toMatchObject({ status: 'resolving', traceparent: early.read.traceparent });
    } finally {
      other.release();
      await writer.end();
      await store.close();
      await pool.end();
    }
  });
});
