const { startEmbeddedPostgres } = require('/work/wt/fleet/dist-examples/test/fixtures/pg/embedded');
const { PostgresStore } = require('/work/wt/fleet/dist/stores/postgres');
const { Client } = require('pg');
(async () => {
  const pg = await startEmbeddedPostgres();
  try {
    const store = new PostgresStore({ connectionString: pg.url, schema: 'x', tablePrefix: 't_' });
    await store.ensureSchema();
    const c = new Client({ connectionString: pg.url }); await c.connect();
    await c.query(`INSERT INTO x.t_suspensions (id, tool, kind, status, request, args, created_at)
      SELECT 'pnd-' || g, 'pay', 'approval', 'pending', json_build_object('id','pnd-'||g,'kind','approval','prompt','p'), '{}', 'now' FROM generate_series(0, 20000) g`);
    await c.query('ANALYZE x.t_suspensions');
    const text = require('fs').readFileSync('/tmp/fleet-stmt.sql', 'utf8');
    await c.query(`PREPARE p(text, text, bigint, text, text) AS ${text}`);
    await c.query(`SET plan_cache_mode = force_generic_plan`);
    const r = await c.query(`EXPLAIN ANALYZE EXECUTE p('pnd-5', '{"id":"pnd-5","ok":true}', 60000, NULL, NULL)`);
    console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
    const t0 = Date.now(); for (let i = 100; i < 1100; i++) await c.query(`EXECUTE p('pnd-${i}', '{"ok":true}', 60000, NULL, NULL)`); console.log('1000 early claims ms', Date.now() - t0);
    await c.end(); await store.close();
  } finally { await pg.destroy(); }
})().catch((e) => { console.error(e); process.exit(1); });
