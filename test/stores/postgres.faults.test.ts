/**
 * The database going away under a running service: stopped, restarted mid-replay, restarted
 * in the middle of a stream of resolves. These tests stop and restart PostgreSQL, so they
 * run on a private embedded PostgreSQL of their own (its own directory and free port), never on
 * the shared test server other test files are using, whatever TOOLNEXUS_PG_URL says.
 */
import { Toolkit, defineTool, pending, pendingOf, success, type ToolResult } from 'toolnexus-ts';
import { ResumeCoordinator, StoreUnavailableError } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from '../fixtures/pg/embedded';

let server: EmbeddedPostgresServer | undefined;
let url: string;
const stores: PostgresStore[] = [];

/** The private server (beforeAll failing leaves none, and the tests then fail on that). */
function db(): EmbeddedPostgresServer {
  if (!server) throw new Error('the private PostgreSQL server did not start');
  return server;
}

beforeAll(async () => {
  server = await startEmbeddedPostgres();
  url = server.url;
}, 120_000);
afterEach(async () => {
  await db().start(); // whatever a test did, the next one starts with a running server
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await server?.destroy(); // fails if a server process is left
});

/** A coordinator whose `ship` tool counts its replays and can be held mid-replay by a gate. */
function setup(tablePrefix: string, options: { completeRetryMs?: number; leaseMs?: number } = {}) {
  const store = new PostgresStore({
    connectionString: url,
    tablePrefix,
    completeRetryMs: options.completeRetryMs,
    poolConfig: { connectionTimeoutMillis: 2000 },
  });
  stores.push(store);
  const replays = new Map<string, number>();
  let inReplay = 0;
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => undefined;
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'ship',
      // Replayed again after a lapsed lease (docs/suspension.md, "After a crash: the takeover
      // rule"): these tests are about the outage, not about asking a person to recover.
      idempotent: true,
      description: 'Ships an order once approved',
      inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
      async run(args, ctx) {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Ship ${String(args.order)}?` });
        replays.set(ctx.answer.id, (replays.get(ctx.answer.id) ?? 0) + 1);
        inReplay++;
        await gate;
        return success(`shipped ${String(args.order)}`);
      },
    }),
  );
  const coordinator = new ResumeCoordinator({ toolkit, store, leaseMs: options.leaseMs });
  return {
    store,
    coordinator,
    replays,
    inReplay: () => inReplay,
    holdReplays() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    releaseReplays: () => open(),
    async suspend(count: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push(pendingOf(await coordinator.execute('ship', { order: `o-${i}` }))!.id);
      return ids;
    },
    approve: (id: string): Promise<ToolResult> => coordinator.resolve({ id, ok: true }),
  };
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

const UNAVAILABLE = (operation: string) =>
  new RegExp(
    `^PostgreSQL was unavailable during the ${operation} \\(.+\\)\\. Suspensions already stored are kept; retry once the database is reachable\\.$`,
  );

describe('PostgresStore when the database goes away', () => {
  it('database stopped: resolve and execute fail with a clear StoreUnavailableError; nothing is lost and the retry succeeds', async () => {
    const t = setup('down_');
    const ids = await t.suspend(5);
    expect(ids).toHaveLength(5);
    const first = ids[0]!;
    await db().stop();

    const failed = await t.approve(first).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(StoreUnavailableError);
    expect((failed as Error).message).toMatch(UNAVAILABLE(`early claim of suspension ${first}`));
    const notRecorded = await t.coordinator.execute('ship', { order: 'late' }).catch((e: unknown) => e);
    expect(notRecorded).toBeInstanceOf(StoreUnavailableError);
    expect((notRecorded as Error).message).toMatch(/^PostgreSQL was unavailable during the insert of suspension pnd-/);

    await db().start();
    expect(await t.approve(first)).toEqual({ output: 'shipped o-0', isError: false });
    const calls = await t.store.list();
    expect(calls.map((c) => c.request.id)).toEqual(ids);
    expect(calls.map((c) => c.status)).toEqual(['resolved', 'pending', 'pending', 'pending', 'pending']);
    expect(t.replays.get(first)).toBe(1);
  });

  it('database restarted while replays run: each outcome is stored once it is back, and each tool ran once', async () => {
    // Generous, so a slow server start on a loaded CI machine cannot outlast the retries.
    const t = setup('brief_', { completeRetryMs: 30_000 });
    const ids = await t.suspend(6);
    t.holdReplays();
    const resolving = ids.map((id) => t.approve(id));
    await until(() => t.inReplay() === ids.length);
    await db().stop();
    t.releaseReplays(); // the replays finish while the database is down: complete() keeps retrying
    await new Promise((r) => setTimeout(r, 300));
    await db().start();

    const results = await Promise.all(resolving);
    expect(results.map((r) => r.output)).toEqual(ids.map((_, i) => `shipped o-${i}`));
    expect([...t.replays.values()]).toEqual(ids.map(() => 1));
    expect((await t.store.list({ status: 'resolved' })).map((c) => c.request.id)).toEqual(ids);
  });

  it('an outage longer than completeRetryMs: the caller gets a clear error, the calls stay claimed, and resolving again after the lease succeeds', async () => {
    const t = setup('long_', { completeRetryMs: 200, leaseMs: 1000 });
    const ids = await t.suspend(4);
    t.holdReplays();
    const resolving = ids.map((id) => t.approve(id).catch((e: unknown) => e));
    await until(() => t.inReplay() === ids.length);
    await db().stop();
    t.releaseReplays();

    const errors = await Promise.all(resolving);
    errors.forEach((error, i) => {
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(UNAVAILABLE(`completion of suspension ${ids[i]}`));
    });

    await db().start();
    expect((await t.store.list()).map((c) => c.status)).toEqual(ids.map(() => 'resolving'));
    const retried = await Promise.all(ids.map((id) => t.approve(id)));
    expect(retried.map((r) => r.output)).toEqual(ids.map((_, i) => `shipped o-${i}`));
    expect((await t.store.list({ status: 'resolved' })).map((c) => c.request.id)).toEqual(ids);
    // The first replay's outcome never reached the database, so the tool ran again after
    // the lease: why side effects should be keyed on the suspension id (docs/deploying.md).
    expect([...t.replays.values()]).toEqual(ids.map(() => 2));
  });

  it('pg_ctl restart in the middle of a stream of resolves: every failure is a StoreUnavailableError, and retrying them resolves every suspension', async () => {
    const t = setup('stream_', { leaseMs: 1000 });
    const ids = await t.suspend(600);
    const queue = [...ids];
    const failures: Array<{ id: string; error: unknown }> = [];
    const resolved: string[] = [];
    let restarted = false;
    // The lanes keep resolving until the restart is over, however long the script takes on a
    // loaded machine, so some requests are always in flight while the server is down.
    const lanes = Array.from({ length: 4 }, async () => {
      while (!restarted && queue.length > 0) {
        const id = queue.shift() as string;
        try {
          await t.approve(id);
          resolved.push(id);
        } catch (error) {
          failures.push({ id, error });
        }
      }
    });
    await until(() => resolved.length >= 30);
    // A lane caught in complete() retries through a short outage and succeeds (as it should),
    // so all four lanes can ride out a fast restart without one failure. The probe repeats an
    // answer already given, which only reads, so it is sure to meet the outage.
    const probeFailures: unknown[] = [];
    const probe = (async () => {
      const id = resolved[0]!; // until() above waited for 30 of them
      while (!restarted) {
        try {
          expect((await t.approve(id)).output).toMatch(/^shipped o-\d+$/);
        } catch (error) {
          probeFailures.push(error);
          await new Promise((r) => setTimeout(r, 5));
        }
      }
    })();
    await db().restart();
    restarted = true;
    await Promise.all([...lanes, probe]);
    for (const id of queue) expect((await t.approve(id)).output).toMatch(/^shipped o-\d+$/);

    expect(probeFailures.length).toBeGreaterThan(0); // the restart really took the server away
    for (const error of probeFailures) expect(error).toBeInstanceOf(StoreUnavailableError);
    for (const { error } of failures) expect(error).toBeInstanceOf(StoreUnavailableError);
    for (const { id } of failures) expect((await t.approve(id)).output).toMatch(/^shipped o-\d+$/);
    const calls = await t.store.list();
    expect(calls).toHaveLength(ids.length);
    expect(calls.filter((c) => c.status !== 'resolved')).toEqual([]);
    expect(t.replays.size).toBe(ids.length); // every suspension's tool ran
  });
});
