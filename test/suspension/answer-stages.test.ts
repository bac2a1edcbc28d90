/**
 * The path of an answer as named stages (docs/design.md, "The path of an answer"): one
 * `resolve` of an approval, with an answer policy and a quorum, enters each stage's module in
 * one contiguous run and in the documented order (read, identify, judge, claim, replay,
 * settle, tell), never returning to a stage it left, and reads the stored call once before
 * its claim. The stage modules' exported functions are wrapped (jest.spyOn calls through), so
 * the order is the order of the real calls.
 */
import { Toolkit, defineTool, pending, pendingOf, type Answer } from 'toolnexus-ts';
import { ResumeCoordinator, type AnswerQuestion, type Audit, type Principal, type SuspendedCall } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ORDER, runsOf, watchStages } from '../fixtures/answer-stages';

/** A memory store that logs its reads, signatures, claims and settlements, in order. */
class LoggedStore extends MemoryStore {
  readonly log: string[] = [];

  override async get(id: string): Promise<SuspendedCall | undefined> {
    this.log.push('get');
    return super.get(id);
  }

  override async sign(...args: [string, Principal, string?, boolean?]) {
    this.log.push('sign');
    return super.sign(...args);
  }

  override async claim(...args: [string, Answer, number, Audit?]) {
    this.log.push('claim');
    return super.claim(...args);
  }

  override async complete(...args: Parameters<MemoryStore['complete']>) {
    this.log.push('complete');
    return super.complete(...args);
  }
}

const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys after two approvals',
  inputSchema: { type: 'object', properties: { env: { type: 'string' } }, required: ['env'] },
  run: (args, ctx) =>
    ctx?.answer
      ? `deployed ${String(args.env)}`
      : pending({ kind: 'approval', prompt: `Deploy ${String(args.env)}?`, data: { quorum: { of: 2, from: ['alice', 'bob'] } } }),
});

afterEach(() => jest.restoreAllMocks());

describe('the path of an answer, stage by stage', () => {
  it('a resolve of an approval under a policy and a quorum enters each stage once, in order, reading the call once before its claim', async () => {
    const store = new LoggedStore();
    const asked: AnswerQuestion[] = [];
    const policy = (question: AnswerQuestion) => {
      asked.push(question);
      return 'allow' as const;
    };
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(deploy), store, policy });
    const first = await coordinator.execute('deploy', { env: 'prod' });
    const id = pendingOf(first)!.id;

    // The first signature: read, identified and judged, then told of; the call still waits.
    let entered = watchStages();
    store.log.length = 0;
    const waiting = await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'alice' } });
    expect(pendingOf(waiting)?.id).toBe(id);
    expect(runsOf(entered())).toEqual(['read', 'identify', 'judge', 'tell']);
    expect(store.log).toEqual(['get', 'sign']);
    jest.restoreAllMocks();

    // The last signature needed: every stage, each in one contiguous run, in the documented order.
    entered = watchStages();
    store.log.length = 0;
    expect(await coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'bob' } })).toEqual({
      output: 'deployed prod',
      isError: false,
    });
    const runs = runsOf(entered());
    expect(runs).toEqual(ORDER);
    expect(new Set(runs).size).toBe(runs.length);
    // The store's read of the call: once, before its claim, and never again on the way.
    expect(store.log).toEqual(['get', 'sign', 'claim', 'complete']);
    expect(asked.map((q) => q.principal.id)).toEqual(['alice', 'bob']);
  });

  it('a refused answer stops at the judge: nothing is claimed, nothing replays, nobody is told of a settlement', async () => {
    const store = new LoggedStore();
    const coordinator = new ResumeCoordinator({
      toolkit: new Toolkit().register(deploy),
      store,
      policy: ({ principal }) => (principal.id === 'alice' ? 'allow' : { deny: 'not on the list' }),
    });
    const id = pendingOf(await coordinator.execute('deploy', { env: 'prod' }))!.id;
    const entered = watchStages();
    store.log.length = 0;
    await expect(coordinator.resolve({ id, ok: true }, undefined, { by: { id: 'bob' } })).rejects.toThrow(/not on the list/);
    expect(runsOf(entered())).toEqual(['read', 'identify', 'judge']);
    expect(store.log).toEqual(['get']);
  });
});
