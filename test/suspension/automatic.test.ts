/**
 * Automatic answers (docs/who-may-answer.md, "Automatic answers"): a rule consulted before a
 * person is asked. `approved` runs the call at once, audited as `policy:<name>`; `denied`
 * settles it declined; `ask` leaves it to a person; a rule that throws asks. In shadow mode
 * nothing is settled: the decision is recorded on the call, beside what the person decides.
 */
import 'reflect-metadata';
import { IsInt, Min } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator, rulesPolicy, type AutomaticAnswers } from 'toolnexus-ts/suspension';

class RefundArgs {
  @IsInt()
  @Min(1)
  cents!: number;
}

const ran: Array<{ cents: number; by: string | undefined }> = [];

@Tool({ name: 'refund', description: 'Refunds', args: RefundArgs, approval: true })
class RefundTool {
  run(args: RefundArgs, ctx?: ToolContext) {
    ran.push({ cents: args.cents, by: ctx?.approval?.answeredBy?.id });
    return success(`refunded ${args.cents}`);
  }
}

/** Small refunds approved, huge ones denied, the rest asked; 13 cents makes the rule throw. */
const smallRefunds = (shadow: boolean): AutomaticAnswers => ({
  name: 'small-refunds',
  shadow,
  decide: ({ args }) => {
    const { cents } = args as RefundArgs;
    if (cents === 13) throw new Error('rule broke');
    return cents <= 500 ? 'approved' : cents > 1_000_000 ? 'denied' : 'ask';
  },
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-auto-'));
  ran.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('approves, denies or asks, audited with the rule’s name; a rule that throws asks', async () => {
  const store = new SqliteStore({ filename: join(dir, 'auto.db') });
  // The answer policy does not list the rule: automatic answers are the host's own, not a person's.
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(RefundTool),
    store,
    policy: rulesPolicy([{ principals: ['manager:ann'] }]),
    automaticAnswers: smallRefunds(false),
  });
  try {
    expect(await coordinator.execute('refund', { cents: 200 })).toEqual({ output: 'refunded 200', isError: false });
    expect(ran).toEqual([{ cents: 200, by: 'policy:small-refunds' }]);
    const denied = await coordinator.execute('refund', { cents: 5_000_000 });
    expect(denied.isError).toBe(true);
    const asked = pendingOf(await coordinator.execute('refund', { cents: 9_000 }));
    const broke = pendingOf(await coordinator.execute('refund', { cents: 13 }));
    expect(asked && broke).toBeTruthy();
    const history = await coordinator.history({ tool: 'refund' });
    expect(history.map((c) => [c.status, c.answeredBy?.id, c.automatic?.decision])).toEqual([
      ['declined', 'policy:small-refunds', 'denied'],
      ['resolved', 'policy:small-refunds', 'approved'],
    ]);
    expect((await coordinator.get(asked!.id))?.automatic).toEqual({ policy: 'small-refunds', decision: 'ask', shadow: false });
    expect((await coordinator.get(broke!.id))?.automatic?.decision).toBe('ask');
    expect(ran).toHaveLength(1);
  } finally {
    await store.close();
  }
});

it('in shadow mode settles nothing and records the decision beside the person’s answer', async () => {
  const store = new SqliteStore({ filename: join(dir, 'shadow.db') });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(RefundTool), store, automaticAnswers: smallRefunds(true) });
  try {
    const id = pendingOf(await coordinator.execute('refund', { cents: 100 }))!.id;
    expect(ran).toEqual([]);
    await coordinator.resolve({ id, ok: false, reason: 'declined' }, undefined, { by: { id: 'manager:ann' }, comment: 'not this one' });
    expect(await coordinator.get(id)).toMatchObject({
      status: 'declined',
      answeredBy: { id: 'manager:ann' },
      automatic: { policy: 'small-refunds', decision: 'approved', shadow: true },
    });
  } finally {
    await store.close();
  }
});
