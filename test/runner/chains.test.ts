/**
 * The AgentRunner with chained suspensions (halt, halt again, resume, done), across two
 * runner instances on one SQLite file; a suspension edited in the store; a driver that died.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Toolkit, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator, SuspensionMismatchError } from 'toolnexus-ts/suspension';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, RunConflictError, type RunEvent, type RunResult } from 'toolnexus-ts/agents';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { RefundByHandTool, RefundTool, Sessions, type Payments } from '../fixtures/refund';
import { FakeClock, until } from '../fixtures/fake-clock';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-runner-chains-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refundAgent(filename: string, ledger: string[], tool = 'refund') {
  const payments: Payments = {
    refund: (key, customer, cents, approvedBy) => void ledger.push(`${key} ${customer} ${cents} ${approvedBy}`),
  };
  const toolkit = new Toolkit({ resolver: (cls) => new cls(new Sessions(), payments) }).register(RefundTool, RefundByHandTool);
  const store = new SqliteStore({ filename });
  const model = new FunctionModel(({ messages }) => {
    const result = messages.find((m) => m.role === 'tool');
    if (result) return `refund: ${result.content}`;
    return { toolCalls: [{ id: 'call_refund', name: tool, arguments: { customer: 'c-9', cents: 99_900 } }] };
  });
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
  return { runner, store };
}

describe('AgentRunner with chained suspensions', () => {
  it.each([
    ['refund', ['approval', 'authorization']],
    ['refund_by_hand', ['authorization', 'approval']],
  ])('%s: halts, halts again with the next link, resumes in another runner, done; the transcript stays balanced', async (tool, kinds) => {
    const filename = join(dir, `${tool}.db`);
    const ledger: string[] = [];
    const first = refundAgent(filename, ledger, tool);
    const halted = await first.runner.run('refund c-9', { runId: `run-${tool}` });
    expect(halted.status).toBe('halted');
    expect(halted.pending?.kind).toBe(kinds[0]);

    const answerTo = (request: { id: string; kind: string }) =>
      request.kind === 'authorization'
        ? { id: request.id, ok: true, data: { account: 'bob@example.com' } }
        : { id: request.id, ok: true, data: { approver: 'dana' } };
    const again = await first.runner.resume(answerTo(halted.pending!));
    expect(again.status).toBe('halted');
    expect(again.pendings?.map((p) => p.kind)).toEqual([kinds[1]]);
    expect(again.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(again.toolCalls.map((c) => c.id)).toEqual(['call_refund']);
    expect(ledger).toEqual([]);
    // The first answer again (a retried POST): the same halted run.
    expect(await first.runner.resume(answerTo(halted.pending!))).toEqual(again);

    const second = refundAgent(filename, ledger, tool);
    const events: RunEvent['type'][] = [];
    let final: RunResult | undefined;
    for await (const event of second.runner.resumeStream(answerTo(again.pending!))) {
      events.push(event.type);
      if (event.type === 'done') final = event.result;
    }
    expect(events).toEqual(['tool_result', 'text', 'done']);
    expect(final).toMatchObject({ status: 'done', text: 'refund: refunded 99900 cents to c-9 for bob@example.com' });
    expect(final!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(ledger).toEqual([`${halted.pending!.id} c-9 99900 dana`]);
    await first.store.close();
    await second.store.close();
  });

  it('refuses a suspension whose arguments were changed in the SQLite file: a typed error, nothing runs, the run stays halted', async () => {
    const filename = join(dir, 'tampered.db');
    const ledger: string[] = [];
    const agent = refundAgent(filename, ledger, 'refund_by_hand');
    const halted = await agent.runner.run('refund c-9', { runId: 'run-tampered' });
    const db = new Database(filename);
    db.prepare('UPDATE suspensions SET args = ? WHERE id = ?').run(
      JSON.stringify({ customer: 'mallory', cents: 999_999 }),
      halted.pending!.id,
    );
    db.close();
    const error = await agent.runner
      .resume({ id: halted.pending!.id, ok: true, data: { account: 'bob@example.com' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SuspensionMismatchError);
    expect((await agent.store.get(halted.pending!.id))?.status).toBe('pending');
    expect((await agent.store.loadRun('run-tampered'))?.state).toMatchObject({ phase: 'halted' });
    expect(ledger).toEqual([]);
    await agent.store.close();
  });

  it("refuses a suspension that is not the call in the run's transcript, even with a valid digest", async () => {
    const store = new MemoryStore();
    const ledger: string[] = [];
    const payments: Payments = { refund: (key) => void ledger.push(key) };
    const toolkit = new Toolkit({ resolver: (cls) => new cls(new Sessions(), payments) }).register(RefundTool, RefundByHandTool);
    const coordinator = new ResumeCoordinator({ toolkit, store });
    const model = new FunctionModel(() => ({
      toolCalls: [{ id: 'call_1', name: 'refund_by_hand', arguments: { customer: 'alice', cents: 5 } }],
    }));
    const runner = new AgentRunner({ model, toolkit, coordinator });
    const halted = await runner.run('refund alice', { runId: 'run-swap' });
    // A suspension recorded properly, for other arguments, then named in this run's checkpoint.
    const other = pendingOf(
      await coordinator.execute('refund_by_hand', { customer: 'mallory', cents: 999_999 }, {}, { callId: 'call_1', runId: 'run-swap' }),
    )!;
    const checkpoint = (await store.loadRun('run-swap'))!;
    const state = structuredClone(checkpoint.state) as { halted: { calls: Array<{ pendingId?: string }> } };
    (state.halted.calls[0] as { pendingId?: string }).pendingId = other.id;
    await store.saveRun({ ...checkpoint, version: checkpoint.version + 1, state });
    await expect(runner.resume({ id: other.id, ok: true, data: { account: 'x' } })).rejects.toThrow(
      /the run's transcript has another call \(arguments differ from the transcript\)/,
    );
    expect(ledger).toEqual([]);
    expect(halted.status).toBe('halted');
  });
});

describe('a run whose driver died', () => {
  it('is taken over once its driver lease lapses, and never while the driver renews it', async () => {
    const store = new MemoryStore();
    const ledger: string[] = [];
    const payments: Payments = { refund: (key) => void ledger.push(key) };
    const toolkit = new Toolkit({ resolver: (cls) => new cls(new Sessions(), payments) }).register(RefundTool, RefundByHandTool);
    let release: (() => void) | undefined;
    let modelCalls = 0;
    const model = new FunctionModel(async ({ messages }) => {
      modelCalls++;
      const result = messages.find((m) => m.role === 'tool');
      if (!result) return { toolCalls: [{ id: 'call_1', name: 'refund', arguments: { customer: 'c', cents: 5 } }] };
      if (modelCalls === 2) await new Promise<void>((resolve) => (release = resolve)); // the first driver hangs here
      return `done: ${result.content}`;
    });
    const coordinator = new ResumeCoordinator({ toolkit, store });
    // The driver lease on a fake clock (AgentRunnerOptions.clock): stepped, never raced.
    const clock = new FakeClock();
    const runner = new AgentRunner({ model, toolkit, coordinator, runLeaseMs: 150, clock });
    const halted = await runner.run('refund', { runId: 'run-driver' });
    const driving = runner.resume({ id: halted.pending!.id, ok: true, data: { account: 'bob' } });
    await until(() => release !== undefined);
    // Eight leases pass while its model call hangs: the driver renews every third of one.
    for (let step = 0; step < 24; step++) {
      clock.advance(50);
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      await expect(runner.recover('run-driver')).rejects.toBeInstanceOf(RunConflictError);
      const { driver } = (await store.loadRun('run-driver'))!.state as { driver: { renewedAt: string } };
      expect(clock.now() - Date.parse(driver.renewedAt)).toBeLessThan(150); // renewed by the clock, within a lease
    }

    // A driver that stops renewing (its process froze) is taken over by a repeated resume.
    const frozen = new AgentRunner({ model, toolkit, coordinator, runLeaseMs: 150, clock });
    // Make it look frozen: its last renewal long ago (the live driver's next renewal then finds the run changed).
    for (let saved = false; !saved;) {
      const checkpoint = (await store.loadRun('run-driver'))!;
      expect(checkpoint.state).toMatchObject({ phase: 'running' });
      const stale = { ...checkpoint.state, driver: { id: 'gone', renewedAt: new Date(clock.now() - 10_000).toISOString() } };
      saved = await store.saveRun({ ...checkpoint, version: checkpoint.version + 1, state: stale });
    }
    const taken = await frozen.resume({ id: halted.pending!.id, ok: true, data: { account: 'bob' } });
    expect(taken).toMatchObject({ status: 'done', text: 'done: refunded 5 cents to c for bob' });
    release?.();
    // The first driver finds the run taken: its own save is refused.
    await expect(driving).rejects.toBeInstanceOf(RunConflictError);
    expect(ledger).toHaveLength(1);
  });
});
