/**
 * Grants and automatic answers judge the asking call (issue 45, docs/who-may-answer.md): a
 * request a sub-agent surfaced (`sub-…`, tool `research`) is matched by the tool that raised it
 * (`refund`), as the answer policy judges it, never by the sub-agent tool's name; and an
 * automatic-answer rule that never settles is given up on after its time limit (the
 * coordinator's clock), the request left to a person and the lapse recorded on the call.
 * Real SQLite files; the runs are in-process agents on one store.
 */
import 'reflect-metadata';
import { IsInt, Min } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { AgentRunner } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator, rulesPolicy, type AutomaticAnswers, type AutomaticQuestion, type SuspendedCall } from 'toolnexus-ts/suspension';
import { FakeClock, until } from '../fixtures/fake-clock';

class RefundArgs {
  @IsInt()
  @Min(1)
  cents!: number;
}

const MANAGER = { id: 'manager:ann' };

let dir: string;
const closing: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-asking-'));
});
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A parent agent whose one tool is the sub-agent `research`, whose child agent calls `refund`
 * (a declared approval). The child's coordinator has neither grants nor rules of its own; the
 * parent's has `automaticAnswers` when given, and its store keeps the grants.
 */
function team(options: { automaticAnswers?: AutomaticAnswers; policy?: boolean } = {}) {
  const store = new SqliteStore({ filename: join(dir, 'team.db') });
  closing.push(() => store.close());
  const refunds: Array<{ cents: number; by: string | undefined }> = [];
  @Tool({ name: 'refund', description: 'Refunds', args: RefundArgs, approval: true })
  class RefundTool {
    run(args: RefundArgs, ctx?: ToolContext) {
      refunds.push({ cents: args.cents, by: ctx?.approval?.answeredBy?.id });
      return success(`refunded ${args.cents}`);
    }
  }
  const policy = options.policy ? rulesPolicy([{ principals: [MANAGER.id], tools: ['refund'] }]) : undefined;
  const childTools = new Toolkit().register(RefundTool);
  const child = new AgentRunner({
    model: new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'refund done' : { toolCalls: [{ id: 'r1', name: 'refund', arguments: { cents: 200 } }] },
    ),
    toolkit: childTools,
    coordinator: new ResumeCoordinator({ toolkit: childTools, store, ...(policy ? { policy } : {}) }),
  });
  const tools = new Toolkit().register(child.asTool({ name: 'research', description: 'Researches, as an agent' }));
  const coordinator = new ResumeCoordinator({
    toolkit: tools,
    store,
    ...(policy ? { policy } : {}),
    ...(options.automaticAnswers ? { automaticAnswers: options.automaticAnswers } : {}),
  });
  const parent = new AgentRunner({
    model: new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'all done' : { toolCalls: [{ id: 'c1', name: 'research', arguments: { input: 'look' } }] },
    ),
    toolkit: tools,
    coordinator,
  });
  return { store, refunds, coordinator, parent };
}

describe('standing grants', () => {
  it('a grant for the sub-agent tool `research` does not approve the child’s `refund` it surfaced', async () => {
    const { store, refunds, coordinator, parent } = team({ policy: true });
    await coordinator.grant({ by: MANAGER, tool: 'research', scope: 'run', subject: 'run-wrapper' });
    const halted = await parent.run('Research and refund', { runId: 'run-wrapper' });
    expect(halted.status).toBe('halted');
    expect(halted.pending?.id).toMatch(/^sub-/);
    expect(refunds).toEqual([]);
    const surfaced = await store.get(halted.pending!.id);
    expect(surfaced).toMatchObject({ tool: 'research', status: 'pending' });
    expect(surfaced?.answeredBy).toBeUndefined();
  });

  it('a grant for `refund` in the calling run approves the request the child surfaced there, as its approver', async () => {
    const { store, refunds, coordinator, parent } = team({ policy: true });
    const grant = await coordinator.grant({ by: MANAGER, tool: 'refund', scope: 'run', subject: 'run-refund' });
    const done = await parent.run('Research and refund', { runId: 'run-refund' });
    expect(done.status).toBe('done');
    expect(refunds).toEqual([{ cents: 200, by: MANAGER.id }]);
    const [settled] = await store.history({ tool: 'research' });
    expect(settled).toMatchObject({ status: 'resolved', answeredBy: MANAGER, comment: `standing grant ${grant.id}` });
  });
});

describe('automatic answers', () => {
  it('a rule approving the sub-agent tool `research` does not approve the child’s `refund`; it is asked about `refund`', async () => {
    const asked: AutomaticQuestion[] = [];
    const { store, refunds, parent } = team({
      automaticAnswers: {
        name: 'research-is-harmless',
        decide: (question) => {
          asked.push(question);
          return question.tool === 'research' ? 'approved' : 'ask';
        },
      },
    });
    const halted = await parent.run('Research and refund', { runId: 'run-auto' });
    expect(halted.status).toBe('halted');
    expect(refunds).toEqual([]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ tool: 'refund', args: { cents: 200 }, path: ['research'], request: { kind: 'approval' } });
    expect((await store.get(halted.pending!.id))?.automatic).toEqual({ policy: 'research-is-harmless', decision: 'ask', shadow: false });
  });

  it('a rule on `refund` settles the request the child surfaced by the refund’s own arguments', async () => {
    const { refunds, parent } = team({
      automaticAnswers: {
        name: 'small-refunds',
        decide: ({ tool, args }) => (tool === 'refund' && (args as RefundArgs).cents <= 500 ? 'approved' : 'ask'),
      },
    });
    const done = await parent.run('Research and refund', { runId: 'run-small' });
    expect(done.status).toBe('done');
    expect(refunds).toEqual([{ cents: 200, by: 'policy:small-refunds' }]);
  });
});

describe('the time limit of automatic answers', () => {
  @Tool({ name: 'refund', description: 'Refunds', args: RefundArgs, approval: true })
  class Refund {
    run(args: RefundArgs) {
      return success(`refunded ${args.cents}`);
    }
  }

  it('a rule that never settles is given up on after timeoutMs on the coordinator’s clock: recorded, a person asked, observers told', async () => {
    const clock = new FakeClock();
    const store = new SqliteStore({ filename: join(dir, 'limit.db') });
    closing.push(() => store.close());
    const told: SuspendedCall[] = [];
    const coordinator = new ResumeCoordinator({
      toolkit: new Toolkit().register(Refund),
      store,
      clock,
      automaticAnswers: { name: 'stuck-directory', timeoutMs: 2_000, decide: () => new Promise(() => undefined) },
      observers: [{ onPending: (call) => told.push(call) }],
    });
    let settled = false;
    const executing = coordinator.execute('refund', { cents: 200 }).finally(() => (settled = true));
    await until(() => clock.timers.some((t) => t.ms === 2_000));
    clock.advance(1_999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    clock.advance(1);
    const result = await executing;
    const request = pendingOf(result);
    expect(request?.kind).toBe('approval');
    const stored = await store.get(request!.id);
    expect(stored).toMatchObject({
      status: 'pending',
      automatic: { policy: 'stuck-directory', decision: 'ask', shadow: false, timedOut: true },
    });
    expect(told.map((c) => c.automatic?.timedOut)).toEqual([true]);
    // A person answers it as any other.
    expect(await coordinator.resolve({ id: request!.id, ok: true })).toEqual({ output: 'refunded 200', isError: false });
  });

  it('refuses a time limit that is no positive number', () => {
    expect(
      () =>
        new ResumeCoordinator({
          toolkit: new Toolkit(),
          automaticAnswers: { name: 'x', timeoutMs: 0, decide: () => 'ask' },
        }),
    ).toThrow('automaticAnswers.timeoutMs must be a positive number of milliseconds, got 0');
  });
});
