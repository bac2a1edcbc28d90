/**
 * A refused answer's early claim orphaned by a crash (docs/who-may-answer.md, "A crash under an
 * early claim"), on the real PostgreSQL of the jest global setup. The process that made the
 * early claim dies before it gives the refused claim back: here its store drops the restore,
 * so the row is left `resolving` with the refused principal's answer, as after a SIGKILL
 * between the two statements. Its lease is then made to lapse in the row (no waiting), and
 * another process (a second coordinator on its own PostgresStore) takes the call over through
 * the recovery loop, or through the next answer: the tool never runs on the refused answer.
 */
import { Toolkit, defineTool, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { ResumeCoordinator, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { AnswerPolicy } from 'toolnexus-ts/suspension';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { dropSchema, postgresUrl, sql, sqlRow, uniqueSchema } from '../fixtures/pg/server';

const schema = uniqueSchema('earlycrash');
const LEASE_MS = 60_000;
let url: string;
const stores: PostgresStore[] = [];

beforeAll(async () => {
  url = await postgresUrl();
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  await dropSchema(url, schema);
});

const managers: AnswerPolicy = ({ principal }) => (principal.id.startsWith('manager:') ? 'allow' : { deny: 'managers only' });

/** A payment tool; `ran` holds who answered each run that had an answer (the first, asking run has none). */
function payTool(idempotent: boolean) {
  const ran: Array<string | undefined> = [];
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'pay',
      description: 'Pays once approved',
      idempotent,
      inputSchema: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
      run(args, ctx?: ToolContext) {
        if (!ctx?.answer) return pending({ kind: 'approval', prompt: 'Pay?' });
        ran.push(ctx.answer.answeredBy?.id);
        return success(`paid ${String(args.amount)}`);
      },
    }),
  );
  return { toolkit, ran };
}

/**
 * The process that dies: its store never gives a claim back, as if it were killed before that
 * statement; `died` settles when it reaches it (the early claim made, the answer refused).
 */
function crashingBeforeRestore(store: PostgresStore): { store: SuspensionStore; died: Promise<void> } {
  let die: () => void = () => undefined;
  const died = new Promise<void>((resolve) => (die = resolve));
  const wrapped = new Proxy(store, {
    get(target, property) {
      if (property === 'restoreClaim')
        return () => {
          die();
          return new Promise<boolean>(() => undefined);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, died };
}

async function setUp(prefix: string, idempotent: boolean) {
  const open = () => {
    const store = new PostgresStore({ connectionString: url, schema, tablePrefix: prefix });
    stores.push(store);
    return store;
  };
  const { toolkit, ran } = payTool(idempotent);
  const survivor = new ResumeCoordinator({ toolkit, store: open(), policy: managers, leaseMs: LEASE_MS });
  const crashing = crashingBeforeRestore(open());
  const dying = new ResumeCoordinator({ toolkit, store: crashing.store, policy: managers, leaseMs: LEASE_MS });
  const asked = pendingOf(await survivor.execute('pay', { amount: 5 }, undefined, { principal: { id: 'manager:ann' } }))!;
  // The refused answer is claimed early, judged, refused; the restore never happens.
  const refusal = dying.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'clerk:eve' } });
  void refusal.catch(() => undefined); // it never settles: its process is "dead"
  await crashing.died;
  const orphan = await survivor.get(asked.id);
  expect(orphan).toMatchObject({ status: 'resolving', fence: 1, answer: { ok: true }, answeredBy: { id: 'clerk:eve' } });
  // The dead holder's lease lapses (by the store's clock, as the takeover judges it).
  await sql(url, `UPDATE "${schema}".${prefix}suspensions SET lease_until_ms = 0 WHERE id = $1`, [asked.id]);
  return { survivor, asked, ran };
}

describe('a refused answer whose early claim a crash left behind', () => {
  it('the recovery loop judges the recorded answer again, refuses it and puts the call back pending: the tool never runs on it', async () => {
    const { survivor, asked, ran } = await setUp('loop_', true);
    const taken = await survivor.recoverLapsed();
    expect(taken).toHaveLength(1);
    expect(taken[0]).toMatchObject({ id: asked.id, status: 'failed', error: { code: 'TOOLNEXUS_ANSWER_REFUSED' } });
    expect(ran).toEqual([]);
    const back = await survivor.get(asked.id);
    expect(back).toMatchObject({ status: 'pending', fence: 2 });
    expect(back?.answer).toBeUndefined();
    expect(back?.answeredBy).toBeUndefined();
    expect(back?.leaseUntil).toBeUndefined();
    // Nothing is left for the loop, and the refused principal is still refused.
    expect(await survivor.recoverLapsed()).toEqual([]);
    await expect(survivor.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'clerk:eve' } })).rejects.toMatchObject({
      code: 'TOOLNEXUS_ANSWER_REFUSED',
    });
    // A manager's approval, judged as always, runs the idempotent tool once, as a takeover.
    expect(await survivor.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:bob' } })).toEqual({
      output: 'paid 5',
      isError: false,
    });
    expect(ran).toEqual(['manager:bob']);
    expect(await survivor.get(asked.id)).toMatchObject({ status: 'resolved', fence: 3, answeredBy: { id: 'manager:bob' } });
  });

  it('the next answer takes the call over with its own, judged, answer, never the refused one', async () => {
    const { survivor, asked, ran } = await setUp('next_', true);
    const result = await survivor.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:bob' } });
    expect(result).toEqual({ output: 'paid 5', isError: false });
    expect(ran).toEqual(['manager:bob']);
    const row = await sqlRow<{ status: string; answered_by: string; fence: number }>(
      url,
      `SELECT status, answered_by::text AS answered_by, fence FROM "${schema}".next_suspensions WHERE id = $1`,
      [asked.id],
    );
    expect({ ...row, answered_by: JSON.parse(row.answered_by) as unknown }).toEqual({
      status: 'resolved',
      answered_by: { id: 'manager:bob' },
      fence: 3,
    });
  });

  it('a tool that is not idempotent: the next approval becomes a recovery request, as the holder may have run it', async () => {
    const { survivor, asked, ran } = await setUp('strict_', false);
    const taken = await survivor.recoverLapsed();
    expect(taken.map((t) => t.status)).toEqual(['failed']);
    const result = await survivor.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:bob' } });
    expect(pendingOf(result)).toMatchObject({ kind: 'recovery' });
    expect(ran).toEqual([]);
  });
});
