/**
 * Escalation is judged by the store's clock, as leases are (docs/who-may-answer.md,
 * "Escalation"): when the coordinator's clock and the store's disagree, the store's wins, at
 * the answer and at the sweep. On the memory store (its injected clock), SQLite (the machine's,
 * read by SQLite) and PostgreSQL (the server's), each against a coordinator clock skewed by days.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator, rulesPolicy, type SuspensionStore } from 'toolnexus-ts/suspension';
import { FakeClock } from '../fixtures/fake-clock';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MANAGER = { id: 'manager:max' };

/** A refund whose approval escalates to the manager at `escalateAt` (epoch ms); only the lead may answer before. */
function coordinatorOver(store: SuspensionStore, clock: FakeClock, escalateAt: () => number) {
  const ran: string[] = [];
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an order',
    inputSchema: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
    run: (args, ctx) => {
      if (ctx?.answer) {
        ran.push(String(args.order));
        return success('refunded');
      }
      const at = new Date(escalateAt()).toISOString();
      return pending({ kind: 'approval', prompt: 'Refund?', data: { escalation: { at, to: [MANAGER.id] } } });
    },
  });
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(refund),
    store,
    clock,
    policy: rulesPolicy([{ principals: ['lead:lou'], tools: ['refund'] }]),
  });
  return { coordinator, ran };
}

/**
 * The coordinator's clock says the escalation is long due, the store's that it is an hour off:
 * the manager is refused and no sweep tells of it. Then the other way round: it is due by the
 * store's clock though the coordinator's is days behind, and the manager's approval runs it.
 */
async function storeClockWins(store: SuspensionStore, storeNow: () => number): Promise<void> {
  const early = coordinatorOver(store, new FakeClock(storeNow() + 3 * DAY), () => storeNow() + HOUR);
  const id = pendingOf(await early.coordinator.execute('refund', { order: 'o-early' }))!.id;
  await expect(early.coordinator.resolve({ id, ok: true }, undefined, { by: MANAGER })).rejects.toMatchObject({
    code: 'TOOLNEXUS_ANSWER_REFUSED',
  });
  expect(await early.coordinator.sweep()).toEqual({ expired: [], escalated: [] });
  expect(early.ran).toEqual([]);
  expect((await store.get(id))?.status).toBe('pending');

  const late = coordinatorOver(store, new FakeClock(storeNow() - 3 * DAY), () => storeNow() - HOUR);
  const due = pendingOf(await late.coordinator.execute('refund', { order: 'o-due' }))!.id;
  expect(await late.coordinator.sweep()).toEqual({ expired: [], escalated: [due] });
  expect(await late.coordinator.resolve({ id: due, ok: true }, undefined, { by: MANAGER })).toEqual({ output: 'refunded', isError: false });
  expect(late.ran).toEqual(['o-due']);
}

it('memory store: its injected clock, not the coordinator’s, says when an escalation is due', async () => {
  const storeClock = new FakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
  const store = new MemoryStore({ clock: storeClock });
  await storeClockWins(store, () => storeClock.now());
});

it('SQLite: the machine’s clock as SQLite reads it, not the coordinator’s', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolnexus-escalation-clock-'));
  const store = new SqliteStore({ filename: join(dir, 'e.db') });
  try {
    await storeClockWins(store, () => Date.now());
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

it('PostgreSQL: the server’s clock, not the coordinator’s', async () => {
  const url = await postgresUrl();
  const schema = uniqueSchema('escalation_clock');
  const store = new PostgresStore({ connectionString: url, schema });
  try {
    await storeClockWins(store, () => Date.now());
  } finally {
    await store.close();
    await dropSchema(url, schema);
  }
});
