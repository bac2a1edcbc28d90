import { Toolkit, defineTool, pending, pendingOf, success } from '../index';
import { ResumeCoordinator, type SuspendedCall, type SuspensionStore } from '../suspension';
import type { AnswerPolicy } from '../suspension/policy';
import type { Claim, EarlyClaim } from '../suspension/store';
import { storeGlobals } from './globals';

/** A store that claims early: both methods, or neither (docs/design.md, glossary: "early claim"). */
type EarlyStore = SuspensionStore & Required<Pick<SuspensionStore, 'claimEarly' | 'restoreClaim'>>;

const LEASE_MS = 60_000;

/**
 * The early claim (`claimEarly` and `restoreClaim`) of a store that has it, and, on every store,
 * the rule it must not bend: a refused answer changes nothing stored (docs/who-may-answer.md),
 * whether the coordinator read the call before its claim or claimed it with the read.
 */
export function describeEarlyClaimContract(current: () => SuspensionStore): void {
  let store: SuspensionStore;
  const { describe, it, expect } = storeGlobals(current, (each) => (store = each));

  /** The store when it claims early; a store without it must have neither method. */
  const early = (): EarlyStore | undefined => {
    if (store.claimEarly !== undefined && store.restoreClaim !== undefined) return store as EarlyStore;
    expect(['claimEarly' in store, 'restoreClaim' in store]).toEqual([false, false]);
    return undefined;
  };

  describe('early claim (claimEarly, restoreClaim)', () => {
    it('reads every call, and claims only a pending one whose answer is kept as given', async () => {
      const s = early();
      if (!s) return;
      const calls: SuspendedCall[] = [
        callOf('pnd-plain', { kind: 'approval', prompt: 'Pay?' }),
        callOf('pnd-login', { kind: 'authorization', prompt: 'Sign in' }),
        callOf('pnd-schema', { kind: 'input', prompt: 'Code?', data: { schema: { type: 'object' } } }),
        callOf('pnd-quorum', { kind: 'approval', prompt: 'Pay?', data: { quorum: { of: 2 } } }),
        { ...callOf('pnd-done', { kind: 'approval', prompt: 'Pay?' }), status: 'resolved', outcome: { output: 'paid', isError: false } },
      ];
      for (const call of calls) await s.insert(call);
      const before = await Promise.all(calls.map((call) => s.get(call.request.id)));

      const plain = (await s.claimEarly('pnd-plain', { id: 'pnd-plain', ok: true }, LEASE_MS, { by: { id: 'ann' } })) as EarlyClaim;
      expect(plain.read).toEqual(before[0]);
      expect(plain.claim).toMatchObject({ id: 'pnd-plain', fence: 1, call: { status: 'resolving', answeredBy: { id: 'ann' } } });
      expect(await s.get('pnd-plain')).toEqual(plain.claim?.call);
      for (const [i, call] of calls.entries()) {
        if (i === 0) continue;
        const found = await s.claimEarly(call.request.id, { id: call.request.id, ok: true }, LEASE_MS);
        expect(found).toEqual({ read: before[i] });
        expect(await s.get(call.request.id)).toEqual(before[i]);
      }
      // Held by a live lease: read, not claimed; unknown: nothing.
      expect(await s.claimEarly('pnd-plain', { id: 'pnd-plain', ok: true }, LEASE_MS)).toEqual({ read: plain.claim?.call });
      expect(await s.claimEarly('pnd-nobody', { id: 'pnd-nobody', ok: true }, LEASE_MS)).toBeUndefined();
    });

    it('gives a claim back exactly as the call was read, only while that claim holds it', async () => {
      const s = early();
      if (!s) return;
      await s.insert(callOf('pnd-back', { kind: 'approval', prompt: 'Pay?' }));
      const before = await s.get('pnd-back');
      const { claim, read } = (await s.claimEarly('pnd-back', { id: 'pnd-back', ok: true }, LEASE_MS, {
        by: { id: 'eve' },
        comment: 'x',
      })) as {
        claim: Claim;
        read: SuspendedCall;
      };
      expect(await s.restoreClaim(claim, read)).toBe(true);
      expect(await s.get('pnd-back')).toEqual(before);
      expect(await s.restoreClaim(claim, read)).toBe(false);
      // Nothing of the refused claim is left: the next claim is the first.
      expect((await s.claim('pnd-back', { id: 'pnd-back', ok: true }, LEASE_MS))?.fence).toBe(1);
    });

    it('lets exactly one of concurrent early claims win', async () => {
      const s = early();
      if (!s) return;
      await s.insert(callOf('pnd-race', { kind: 'approval', prompt: 'Pay?' }));
      const found = await Promise.all(Array.from({ length: 8 }, () => s.claimEarly('pnd-race', { id: 'pnd-race', ok: true }, LEASE_MS)));
      expect(found.filter((f) => f?.claim !== undefined)).toHaveLength(1);
      expect(found.every((f) => f?.read.status === 'pending' || f?.read.status === 'resolving')).toBe(true);
    });
  });

  describe('a refused answer changes nothing stored (docs/who-may-answer.md)', () => {
    const runs: unknown[] = [];
    const pay = defineTool({
      name: 'pay',
      description: 'Pays once approved',
      inputSchema: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
      run(args, ctx) {
        runs.push(args);
        return ctx?.answer ? success(`paid ${String(args.amount)}`) : pending({ kind: 'approval', prompt: 'Pay?' });
      },
    });
    const managers: AnswerPolicy = ({ principal }) => (principal.id.startsWith('manager:') ? 'allow' : { deny: 'managers only' });

    it('the policy, separation of duties, the transcript and a missing tool each refuse; the call is as it was, then a manager answers', async () => {
      runs.length = 0;
      const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(pay), store, policy: managers, leaseMs: LEASE_MS });
      const elsewhere = new ResumeCoordinator({ toolkit: new Toolkit(), store, policy: managers, leaseMs: LEASE_MS });
      const asked = pendingOf(await coordinator.execute('pay', { amount: 5 }, undefined, { principal: { id: 'manager:ann' } }))!;
      const before = await store.get(asked.id);
      const attempts: Array<[() => Promise<unknown>, string]> = [
        [() => coordinator.resolve({ id: asked.id, ok: true }), 'TOOLNEXUS_ANSWER_REFUSED'],
        [() => coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'clerk:carl' } }), 'TOOLNEXUS_ANSWER_REFUSED'],
        [() => coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:ann' } }), 'TOOLNEXUS_ANSWER_REFUSED'],
        [
          () =>
            coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:bob' } }, { tool: 'pay', args: { amount: 6 } }),
          'TOOLNEXUS_SUSPENSION_MISMATCH',
        ],
        [() => elsewhere.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:bob' } }), 'TOOLNEXUS_UNREGISTERED_TOOL'],
      ];
      for (const [attempt, code] of attempts) {
        await expect(attempt()).rejects.toMatchObject({ code });
        expect(await store.get(asked.id)).toEqual(before);
      }
      expect(runs).toHaveLength(1);
      const result = await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:bob' } });
      expect(result).toEqual({ output: 'paid 5', isError: false });
      // No refused claim left a trace in the fencing number either.
      expect(await store.get(asked.id)).toMatchObject({ status: 'resolved', fence: 1, answeredBy: { id: 'manager:bob' } });
    });
  });
}

function callOf(id: string, request: { kind: string; prompt: string; data?: Record<string, unknown> }): SuspendedCall {
  return { request: { id, ...request }, tool: 'pay', args: { amount: 1 }, status: 'pending', createdAt: '2030-01-01T00:00:00.000Z' };
}
