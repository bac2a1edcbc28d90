import { Toolkit, defineTool, pending, pendingOf, success, type Answer, type PendingRequest, type ToolContext } from 'toolnexus-ts';
import { AlreadyResolvedError, ResumeCoordinator } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { RefundByHandTool, RefundTool, Sessions, type Payments } from '../fixtures/refund';

interface Refund {
  key: string;
  customer: string;
  cents: number;
  approvedBy: string;
}

function refunds() {
  const ledger: Refund[] = [];
  const payments: Payments = {
    refund(key, customer, cents, approvedBy) {
      if (ledger.some((entry) => entry.key === key)) return;
      ledger.push({ key, customer, cents, approvedBy });
    },
  };
  const toolkit = new Toolkit({ resolver: (cls) => new cls(new Sessions({ 'sess-ada': 'ada' }), payments) }).register(
    RefundTool,
    RefundByHandTool,
  );
  return { ledger, toolkit };
}

const login = (request: PendingRequest, account = 'bob@example.com'): Answer => ({ id: request.id, ok: true, data: { account } });
const approve = (request: PendingRequest, approver = 'dana'): Answer => ({ id: request.id, ok: true, data: { approver } });

describe('chained suspensions, durable: login and approval on one call', () => {
  it('declared approval is asked first, then the login; money moves once, after both', async () => {
    const { ledger, toolkit } = refunds();
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    const first = await coordinator.execute('refund', { customer: 'c-1', cents: 99_900 }, {}, { callId: 'call_1', runId: 'run_1' });
    const approval = pendingOf(first)!;
    expect(approval).toMatchObject({ kind: 'approval', prompt: 'Refund 99900 cents to c-1?', data: { approvalFor: 'refund' } });

    const second = await coordinator.resolve(approve(approval), {});
    const signIn = pendingOf(second)!;
    expect(signIn).toMatchObject({ kind: 'authorization', prompt: 'Please sign in to refund' });
    expect(ledger).toEqual([]);
    expect(await coordinator.get(approval.id)).toMatchObject({ status: 'resolved', next: signIn.id, outcome: second });
    expect(await coordinator.get(signIn.id)).toMatchObject({
      status: 'pending',
      tool: 'refund',
      args: { customer: 'c-1', cents: 99_900 },
      callId: 'call_1',
      runId: 'run_1',
      chain: [{ request: approval, answer: approve(approval) }],
    });
    // The same approval again (a retried POST) gets the same next link; nothing runs.
    expect(await coordinator.resolve(approve(approval))).toEqual(second);
    await expect(coordinator.resolve(approve(approval, 'eve'))).rejects.toBeInstanceOf(AlreadyResolvedError);

    const done = await coordinator.resolve(login(signIn), {});
    expect(done).toEqual({ output: 'refunded 99900 cents to c-1 for bob@example.com', isError: false });
    expect(ledger).toEqual([{ key: approval.id, customer: 'c-1', cents: 99_900, approvedBy: 'dana' }]);
    expect(await coordinator.resolve(login(signIn))).toEqual(done);
    expect(ledger).toHaveLength(1);
  });

  it('asked by hand: login first, then approval; a login answer alone never moves money', async () => {
    const { ledger, toolkit } = refunds();
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    const signIn = pendingOf(await coordinator.execute('refund_by_hand', { customer: 'c-2', cents: 99_900 }))!;
    expect(signIn.kind).toBe('authorization');
    const afterLogin = await coordinator.resolve(login(signIn));
    const approval = pendingOf(afterLogin)!;
    expect(approval).toMatchObject({ kind: 'approval', prompt: 'Refund 99900 cents to c-2?' });
    expect(ledger).toEqual([]);
    expect(await coordinator.resolve(approve(approval))).toEqual({
      output: 'refunded 99900 cents to c-2 for bob@example.com',
      isError: false,
    });
    expect(ledger).toEqual([{ key: signIn.id, customer: 'c-2', cents: 99_900, approvedBy: 'dana' }]);
  });

  it('a declined approval in the middle of a chain ends it: declined, the reason told, nothing moves', async () => {
    const { ledger, toolkit } = refunds();
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    const signIn = pendingOf(await coordinator.execute('refund_by_hand', { customer: 'c-3', cents: 5 }))!;
    const approval = pendingOf(await coordinator.resolve(login(signIn)))!;
    const result = await coordinator.resolve({ id: approval.id, ok: false, reason: 'declined', data: { reason: 'not this customer' } });
    expect(result).toEqual({ output: 'declined/expired: Refund 5 cents to c-3? (declined: "not this customer")', isError: true });
    expect(ledger).toEqual([]);
  });

  it('a policy that waves small refunds through asks only for the login', async () => {
    const { ledger, toolkit } = refunds();
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    const signIn = pendingOf(await coordinator.execute('refund', { customer: 'c-4', cents: 500 }))!;
    expect(signIn.kind).toBe('authorization');
    expect((await coordinator.resolve(login(signIn))).output).toBe('refunded 500 cents to c-4 for bob@example.com');
    expect(ledger).toEqual([{ key: signIn.id, customer: 'c-4', cents: 500, approvedBy: 'policy' }]);
  });

  it('a signed-in user is asked only for the approval', async () => {
    const { ledger, toolkit } = refunds();
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    const approval = pendingOf(await coordinator.execute('refund', { customer: 'c-5', cents: 20_000 }, { sessionId: 'sess-ada' }))!;
    expect((await coordinator.resolve(approve(approval), { sessionId: 'sess-ada' })).output).toBe('refunded 20000 cents to c-5 for ada');
    expect(ledger).toHaveLength(1);
  });
});

describe('chained suspensions, in process (waitFor follows the chain)', () => {
  it('answers login then approval inline, each request announced before it is asked', async () => {
    const { ledger, toolkit } = refunds();
    const asked: PendingRequest[] = [];
    const coordinator = new ResumeCoordinator({
      toolkit,
      waitFor: (request) => (request.kind === 'authorization' ? login(request) : approve(request)),
    });
    const result = await coordinator.execute('refund_by_hand', { customer: 'c-6', cents: 99_900 }, undefined, {
      onPending: (request) => asked.push(request),
    });
    expect(result.output).toBe('refunded 99900 cents to c-6 for bob@example.com');
    expect(asked.map((request) => request.kind)).toEqual(['authorization', 'approval']);
    expect(ledger).toHaveLength(1);
    expect(await coordinator.list()).toEqual([]);
  });

  it('a login answered and an approval declined moves no money, whichever shape the tool has', async () => {
    for (const tool of ['refund', 'refund_by_hand']) {
      const { ledger, toolkit } = refunds();
      const coordinator = new ResumeCoordinator({
        toolkit,
        waitFor: (request) => (request.kind === 'authorization' ? login(request) : { id: request.id, ok: false }),
      });
      const result = await coordinator.execute(tool, { customer: 'c-7', cents: 99_900 });
      expect(result).toEqual({ output: 'declined/expired: Refund 99900 cents to c-7? (declined)', isError: true });
      expect(ledger).toEqual([]);
    }
  });
});

describe('chain limits', () => {
  function asker(kinds: string[]) {
    let runs = 0;
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'asker',
        description: 'Asks one more thing on every replay',
        run(_args, ctx?: ToolContext) {
          runs++;
          const asked = ctx?.replay ? ctx.replay.chain.length + 1 : 0;
          const kind = kinds[asked];
          return kind ? pending({ kind, prompt: `question ${asked + 1}` }) : success(`answered ${asked}`);
        },
      }),
    );
    return { toolkit, runs: () => runs };
  }

  it('a replay that re-asks the kind just answered ends unresolved, inline and durably', async () => {
    const inline = asker(['input', 'input']);
    const coordinator = new ResumeCoordinator({ toolkit: inline.toolkit, waitFor: (request) => ({ id: request.id, ok: true }) });
    expect(await coordinator.execute('asker')).toEqual({ output: 'unresolved: question 2', isError: true });

    const durable = asker(['input', 'input']);
    const store = new MemoryStore();
    const recorded = new ResumeCoordinator({ toolkit: durable.toolkit, store });
    const first = pendingOf(await recorded.execute('asker'))!;
    expect(await recorded.resolve({ id: first.id, ok: true })).toEqual({ output: 'unresolved: question 2', isError: true });
    expect(await store.list({ status: 'pending' })).toEqual([]);
  });

  it('a follow-up (data.followUp) may re-ask the kind just answered; the chain limit still holds', async () => {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'conversation',
        description: 'Asks a new question of the same conversation on every replay',
        run(_args, ctx?: ToolContext) {
          const asked = ctx?.replay ? ctx.replay.chain.length + 1 : 0;
          return pending({ kind: 'input', prompt: `question ${asked + 1}`, data: asked > 0 ? { followUp: true } : {} });
        },
      }),
    );
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    let result = await coordinator.execute('conversation');
    const prompts: string[] = [];
    for (let request = pendingOf(result); request; request = pendingOf(result)) {
      prompts.push(request.prompt);
      result = await coordinator.resolve({ id: request.id, ok: true });
    }
    expect(prompts).toEqual(['question 1', 'question 2', 'question 3', 'question 4']);
    expect(result).toEqual({ output: 'unresolved: question 5', isError: true });
  });

  it('a chain longer than maxChain ends unresolved', async () => {
    const { toolkit } = asker(['a', 'b', 'c', 'd', 'e', 'f']);
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    let result = await coordinator.execute('asker');
    const seen: string[] = [];
    for (let request = pendingOf(result); request; request = pendingOf(result)) {
      seen.push(request.kind);
      result = await coordinator.resolve({ id: request.id, ok: true });
    }
    expect(seen).toEqual(['a', 'b', 'c', 'd']);
    expect(result).toEqual({ output: 'unresolved: question 5', isError: true });

    const short = new ResumeCoordinator({
      toolkit: asker(['a', 'b', 'c']).toolkit,
      waitFor: (request) => ({ id: request.id, ok: true }),
      maxChain: 2,
    });
    expect(await short.execute('asker')).toEqual({ output: 'unresolved: question 3', isError: true });
  });
});

describe('what the model is told when a suspension is refused', () => {
  it('says which (declined, expired, cancelled) and the reason given; formatRefusal words it', async () => {
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'ask',
        description: 'Asks',
        run: (_a, ctx) => (ctx?.answer ? success('ran') : pending({ kind: 'approval', prompt: 'May I?' })),
      }),
    );
    const coordinator = new ResumeCoordinator({ toolkit });
    const declined = pendingOf(await coordinator.execute('ask'))!;
    expect((await coordinator.resolve({ id: declined.id, ok: false, data: { reason: 'no budget' } })).output).toBe(
      'declined/expired: May I? (declined: "no budget")',
    );
    const expired = pendingOf(await coordinator.execute('ask'))!;
    expect((await coordinator.resolve({ id: expired.id, ok: false, reason: 'expired' })).output).toBe('declined/expired: May I? (expired)');
    const cancelled = pendingOf(await coordinator.execute('ask'))!;
    expect((await coordinator.cancel(cancelled.id)).output).toBe('declined/expired: May I? (cancelled)');

    const worded = new ResumeCoordinator({
      toolkit,
      formatRefusal: ({ request, status, reason }) => `declined/expired: ${request.prompt} | ${status} | ${reason ?? '-'}`,
    });
    const asked = pendingOf(await worded.execute('ask'))!;
    expect((await worded.resolve({ id: asked.id, ok: false, data: { reason: 'x'.repeat(600) } })).output).toBe(
      `declined/expired: May I? | declined | ${'x'.repeat(500)}…`,
    );
  });
});
