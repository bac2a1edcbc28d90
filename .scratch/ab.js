const { startEmbeddedPostgres } = require('/work/wt/fleet/dist-examples/test/fixtures/pg/embedded');
const { PostgresStore } = require('/work/wt/fleet/dist/stores/postgres');
const { ResumeCoordinator } = require('/work/wt/fleet/dist/suspension');
const { Toolkit, defineTool, pending, success, pendingOf } = require('/work/wt/fleet/dist');
const N = Number(process.env.N ?? 1000);
(async () => {
  const pg = await startEmbeddedPostgres();
  try {
    const store = new PostgresStore({ connectionString: pg.url, schema: 'x', tablePrefix: 't_', poolConfig: { max: 4 } });
    const pay = defineTool({ name: 'pay', description: 'p', run: (a, ctx) => (ctx?.answer ? success('paid') : pending({ kind: 'approval', prompt: 'Pay?' })) });
    const co = new ResumeCoordinator({ toolkit: new Toolkit().register(pay), store });
    let queries = 0; const pool = store.pool; const q = pool.query.bind(pool); pool.query = (...a) => { queries++; return q(...a); };
    const early = store.claimEarly;
    const ids = [];
    for (let i = 0; i < 2 * N * 3; i++) ids.push(pendingOf(await co.execute('pay', {})).id);
    const round = async (useEarly, batch) => {
      store.claimEarly = useEarly ? early : undefined;
      const q0 = queries; const t0 = process.hrtime.bigint();
      await Promise.all(Array.from({ length: 8 }, async (_, w) => { for (let i = w; i < batch.length; i += 8) await co.resolve({ id: batch[i], ok: true, data: { approver: 'ops' } }); }));
      return { ms: Number(process.hrtime.bigint() - t0) / 1e6, perResolve: (queries - q0) / batch.length };
    };
    for (let r = 0; r < 3; r++) {
      const a = await round(false, ids.splice(0, N)); const b = await round(true, ids.splice(0, N));
      console.log(`read+claim+settle: ${(N / a.ms * 1000).toFixed(0)}/s (${a.perResolve} queries each)  early claim: ${(N / b.ms * 1000).toFixed(0)}/s (${b.perResolve} queries each)  ratio ${(a.ms / b.ms).toFixed(2)}x`);
    }
    await store.close();
  } finally { await pg.destroy(); }
})().catch((e) => { console.error(e); process.exit(1); });
