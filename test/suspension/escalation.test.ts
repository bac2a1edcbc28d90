/**
 * Escalation (docs/who-may-answer.md, "Escalation"), on a fake clock: a refund only the team
 * lead may approve escalates after an hour to the manager (observers and webhooks told, once),
 * who may answer from then on; left unanswered past its deadline, a sweep settles it `expired`
 * (never `declined`) and the model is told it expired.
 */
import 'reflect-metadata';
import { Toolkit, defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ResumeCoordinator, rulesPolicy, type SuspendedCall } from 'toolnexus-ts/suspension';
import { FakeClock } from '../fixtures/fake-clock';

const HOUR = 3_600_000;

function setup() {
  const clock = new FakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
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
      const now = clock.now();
      return pending({
        kind: 'approval',
        prompt: `Refund ${String(args.order)}?`,
        expiresAt: new Date(now + 3 * HOUR).toISOString(),
        data: { escalation: { at: new Date(now + HOUR).toISOString(), to: ['manager:max'] } },
      });
    },
  });
  const escalated: SuspendedCall[] = [];
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(refund),
    store: new MemoryStore({ clock }),
    clock,
    policy: rulesPolicy([{ principals: ['lead:lou'], tools: ['refund'] }]),
    observers: [{ onEscalated: (call) => escalated.push(call) }],
  });
  return { clock, coordinator, ran, escalated };
}

it('hands the request to the manager once due, telling observers once; then settles it expired at its deadline', async () => {
  const { clock, coordinator, ran, escalated } = setup();
  const id = pendingOf(await coordinator.execute('refund', { order: 'o-1' }))!.id;
  const manager = { id: 'manager:max' };
  const call = async () => (await coordinator.get(id)) as SuspendedCall;

  expect(await coordinator.decide(manager, await call(), { id, ok: true })).toMatchObject({ deny: expect.any(String) as string });
  expect((await call()).request.data?.escalation).toEqual({ at: '2026-12-04T10:00:00.000Z', to: ['manager:max'] });
  expect(await coordinator.sweep()).toEqual({ expired: [], escalated: [] });

  clock.advance(HOUR);
  expect(await coordinator.sweep()).toEqual({ expired: [], escalated: [id] });
  expect(escalated.map((c) => c.request.id)).toEqual([id]);
  expect(await coordinator.sweep()).toEqual({ expired: [], escalated: [] });
  expect(await coordinator.decide(manager, await call(), { id, ok: true })).toBe('allow');
  expect(await coordinator.actionsOf(manager, await call())).toEqual(['answer', 'cancel']);

  clock.advance(2 * HOUR);
  expect(await coordinator.sweep()).toEqual({ expired: [id], escalated: [] });
  const settled = await call();
  expect(settled.status).toBe('expired');
  expect(settled.outcome?.output).toBe('declined/expired: Refund o-1? (expired)');
  expect(ran).toEqual([]);
  // The manager's late approval gets the expiry, and nothing runs.
  expect(await coordinator.resolve({ id, ok: true }, undefined, { by: manager })).toEqual(settled.outcome);
  expect(ran).toEqual([]);
});

it('an escalated request answered by the manager runs once', async () => {
  const { clock, coordinator, ran } = setup();
  const id = pendingOf(await coordinator.execute('refund', { order: 'o-2' }))!.id;
  await expect(coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'manager:max' } })).rejects.toMatchObject({
    code: 'TOOLNEXUS_ANSWER_REFUSED',
  });
  clock.advance(HOUR + 1);
  await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'manager:max' } });
  expect(ran).toEqual(['o-2']);
});
