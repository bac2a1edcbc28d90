/**
 * The durable halt and resume: parallel pauses surfaced together, a versioned checkpoint
 * in SQLite, resume in any order from FRESH child processes, completed siblings never
 * re-run, a balanced transcript with no new user turn, and typed errors that change nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlreadyResolvedError, UnknownSuspensionError, type SuspendedCall } from 'toolnexus-ts/suspension';
import { RUN_STATE_FORMAT, type RunCheckpoint, type RunResult } from 'toolnexus-ts/agents';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { buildPayAgent, readLedger } from '../fixtures/runner/pay-agent';
import { payModel, resumeInChild, succeeded } from '../fixtures/runner/pay-harness';

let dir: string;
let server: MockServer;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-durable-'));
  server = await startMockServer(payModel);
});
afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function files() {
  return { db: join(dir, 'runs.db'), ledger: join(dir, 'ledger.log') };
}

async function snapshotOf(db: string, ledger: string, runId: string): Promise<{ run: RunCheckpoint | undefined; calls: SuspendedCall[] }> {
  const { store } = buildPayAgent(db, ledger, server.url);
  try {
    return { run: await store.loadRun(runId), calls: await store.list({ runId }) };
  } finally {
    await store.close();
  }
}

describe('durable halt and resume across processes', () => {
  it('halts with both pauses, then fresh processes resume them in reverse order; the completed call ran once', async () => {
    const { db, ledger } = files();
    const { runner, store } = buildPayAgent(db, ledger, server.url);
    const halted = await runner.run('Pay invoices 7 and 8', { runId: 'run-pay' });
    await store.close();

    // Halted: the lookup completed, both payments wait, surfaced in call order.
    expect(halted.status).toBe('halted');
    expect(halted.pendings?.map((p) => p.prompt)).toEqual(['Pay invoice inv-7?', 'Pay invoice inv-8?']);
    expect(halted.pending).toEqual(halted.pendings?.[0]);
    expect(halted.toolCalls.map((c) => [c.id, c.result.isError])).toEqual([
      ['call_lookup', false],
      ['call_pay_7', true],
      ['call_pay_8', true],
    ]);
    const [pay7, pay8] = halted.pendings ?? [];
    const afterHalt = await snapshotOf(db, ledger, 'run-pay');
    expect(afterHalt.run).toMatchObject({ runId: 'run-pay', version: 1, state: { format: RUN_STATE_FORMAT, phase: 'halted', turns: 1 } });
    expect(afterHalt.calls.map((c) => [c.callId, c.status, c.request.id])).toEqual([
      ['call_pay_7', 'pending', pay7?.id],
      ['call_pay_8', 'pending', pay8?.id],
    ]);
    expect(readLedger(ledger).map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual(['lookup inv-7 call_lookup']);

    // A fresh process answers the SECOND pause first: still pending on the first, and the model is not called.
    const first = succeeded(await resumeInChild(db, ledger, server.url, { id: pay8?.id as string, ok: true, data: { approver: 'bob' } }));
    expect(first.pid).not.toBe(process.pid);
    expect(first.result.status).toBe('halted');
    expect(first.result.pendings?.map((p) => p.id)).toEqual([pay7?.id]);
    expect(server.requests).toHaveLength(1);

    // Another fresh process answers the first pause: the loop continues to the end.
    const second = succeeded(
      await resumeInChild(db, ledger, server.url, { id: pay7?.id as string, ok: true, data: { approver: 'alice' } }),
    );
    expect(second.pid).not.toBe(first.pid);
    const final = second.result;
    expect(final.status).toBe('done');
    expect(final.text).toBe(
      'Done: {"invoice":"inv-7","cents":1250} | {"paid":"inv-7","approver":"alice"} | {"paid":"inv-8","approver":"bob"}',
    );
    expect(final.turns).toBe(2);

    // Every side effect happened exactly once, each in the process that was meant to run it.
    const ledgerLines = readLedger(ledger).map((l) => l.split(' '));
    expect(ledgerLines.map((l) => l.slice(0, 3).join(' '))).toEqual([
      'lookup inv-7 call_lookup',
      'pay inv-8 call_pay_8',
      'pay inv-7 call_pay_7',
    ]);
    expect(ledgerLines.map((l) => Number(l[3]))).toEqual([process.pid, first.pid, second.pid]);

    // The transcript: one tool result per call id, in call order, and no new user turn.
    expect(final.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'assistant']);
    expect(final.messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.callId : ''))).toEqual([
      'call_lookup',
      'call_pay_7',
      'call_pay_8',
    ]);
    const wire = server.requests[1]?.body.messages as Array<{ role: string; tool_call_id?: string }>;
    expect(wire.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'tool']);
    expect(wire.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_lookup', 'call_pay_7', 'call_pay_8']);

    const done = await snapshotOf(db, ledger, 'run-pay');
    expect(done.run).toMatchObject({ version: 4, state: { phase: 'done', turns: 2 } });
    expect(done.calls.map((c) => c.status)).toEqual(['resolved', 'resolved']);

    // The same answer again, from another process (a retried POST): the run's result again, nothing runs.
    const replayed = succeeded(
      await resumeInChild(db, ledger, server.url, { id: pay8?.id as string, ok: true, data: { approver: 'bob' } }),
    );
    expect(replayed.result).toEqual(final);
    // Conflicting and forged answers: typed errors that name the run, and nothing changes.
    const conflicting = await resumeInChild(db, ledger, server.url, { id: pay8?.id as string, ok: true, data: { approver: 'mallory' } });
    expect(conflicting).toMatchObject({
      ok: false,
      error: { name: 'AlreadyResolvedError', message: `suspension ${pay8?.id} of run run-pay is already resolved` },
    });
    const { runner: again, store: againStore } = buildPayAgent(db, ledger, server.url);
    await expect(again.resume({ id: pay7?.id as string, ok: false })).rejects.toThrow(AlreadyResolvedError);
    await expect(again.resume({ id: 'pnd-forged', ok: true })).rejects.toThrow(UnknownSuspensionError);
    await expect(again.resume({ id: 'pnd-forged', ok: true })).rejects.toThrow('unknown suspension: pnd-forged');
    await againStore.close();
    expect(await snapshotOf(db, ledger, 'run-pay')).toEqual(done);
    expect(readLedger(ledger)).toHaveLength(3);
    expect(server.requests).toHaveLength(2);
  });

  it('answers a repeated answer for a resolved sibling with the halted run again, and refuses a conflicting one, changing nothing', async () => {
    const { db, ledger } = files();
    const { runner, store } = buildPayAgent(db, ledger, server.url);
    const halted = await runner.run('Pay', { runId: 'run-half' });
    const [pay7, pay8] = halted.pendings ?? [];
    const half = await runner.resume({ id: pay8?.id as string, ok: true });
    expect(half.pendings?.map((p) => p.id)).toEqual([pay7?.id]);
    const before = { run: await store.loadRun('run-half'), calls: await store.list({ runId: 'run-half' }) };
    expect(before.run?.version).toBe(2);

    const repeated = await runner.resume({ id: pay8?.id as string, ok: true });
    expect(repeated).toEqual(half);
    const error = await runner.resume({ id: pay8?.id as string, ok: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AlreadyResolvedError);
    expect((error as Error).message).toBe(`suspension ${pay8?.id} of run run-half is already resolved`);
    // A batch with one bad id is refused as a whole, before anything runs.
    await expect(
      runner.resume([
        { id: pay7?.id as string, ok: true },
        { id: 'pnd-nope', ok: true },
      ]),
    ).rejects.toThrow(UnknownSuspensionError);

    expect({ run: await store.loadRun('run-half'), calls: await store.list({ runId: 'run-half' }) }).toEqual(before);
    expect(readLedger(ledger).filter((l) => l.startsWith('pay'))).toHaveLength(1);
    await store.close();
  });

  it('lets two processes resume different pauses of one run at the same time: both results kept, one continues', async () => {
    const { db, ledger } = files();
    const { runner, store } = buildPayAgent(db, ledger, server.url);
    const halted = await runner.run('Pay', { runId: 'run-race' });
    await store.close();
    const [pay7, pay8] = halted.pendings ?? [];

    const outputs = await Promise.all([
      resumeInChild(db, ledger, server.url, { id: pay7?.id as string, ok: true, data: { approver: 'p1' } }),
      resumeInChild(db, ledger, server.url, { id: pay8?.id as string, ok: true, data: { approver: 'p2' } }),
    ]);
    const results = outputs.map((o) => succeeded(o).result);
    expect(results.map((r) => r.status).sort()).toEqual(['done', 'halted']);
    expect(server.requests).toHaveLength(2); // exactly one process asked the model to continue
    const final = results.find((r) => r.status === 'done') as RunResult;
    expect(final.messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.content : ''))).toEqual([
      '{"invoice":"inv-7","cents":1250}',
      '{"paid":"inv-7","approver":"p1"}',
      '{"paid":"inv-8","approver":"p2"}',
    ]);
    expect(
      readLedger(ledger)
        .map((l) => l.split(' ').slice(0, 2).join(' '))
        .sort(),
    ).toEqual(['lookup inv-7', 'pay inv-7', 'pay inv-8']);
    const done = await snapshotOf(db, ledger, 'run-race');
    expect(done.run?.state).toMatchObject({ phase: 'done' });
  });

  it('resumes both pauses in one call, answers given in reverse order', async () => {
    const { db, ledger } = files();
    const { runner, store } = buildPayAgent(db, ledger, server.url);
    const halted = await runner.run('Pay', { runId: 'run-batch' });
    const [pay7, pay8] = halted.pendings ?? [];
    const final = await runner.resume([
      { id: pay8?.id as string, ok: false, reason: 'declined' },
      { id: pay7?.id as string, ok: true, data: { approver: 'carol' } },
    ]);
    await store.close();
    expect(final.status).toBe('done');
    expect(final.toolCalls.map((c) => [c.id, c.result.output])).toEqual([
      ['call_lookup', '{"invoice":"inv-7","cents":1250}'],
      ['call_pay_7', '{"paid":"inv-7","approver":"carol"}'],
      ['call_pay_8', 'declined/expired: Pay invoice inv-8? (declined)'],
    ]);
    expect(
      readLedger(ledger)
        .filter((l) => l.startsWith('pay'))
        .map((l) => l.split(' ')[1]),
    ).toEqual(['inv-7']);
  });
});

describe('checkpoint merging', () => {
  it('reloads and merges on a version conflict, so a concurrent sibling result is never lost', async () => {
    const { db, ledger } = files();
    const slow = buildPayAgent(db, ledger, server.url);
    const halted = await slow.runner.run('Pay', { runId: 'run-cas' });
    const [pay7, pay8] = halted.pendings ?? [];

    // Hold the first resumer's checkpoint write until the second one has saved its own.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached: () => void = () => undefined;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const saveRun = slow.store.saveRun.bind(slow.store);
    const attempts: number[] = [];
    slow.store.saveRun = async (checkpoint) => {
      attempts.push(checkpoint.version);
      if (attempts.length === 1) {
        reached();
        await gate;
      }
      return saveRun(checkpoint);
    };

    const firstResume = slow.runner.resume({ id: pay7?.id as string, ok: true, data: { approver: 'slow' } });
    await atGate;
    const fast = buildPayAgent(db, ledger, server.url);
    const fastResult = await fast.runner.resume({ id: pay8?.id as string, ok: true, data: { approver: 'fast' } });
    expect(fastResult.status).toBe('halted');
    expect(fastResult.pendings?.map((p) => p.id)).toEqual([pay7?.id]);
    release();
    const slowResult = await firstResume;

    expect(attempts.slice(0, 3)).toEqual([2, 3, 4]); // v2 conflicted, the merge was saved as v3, the end as v4
    expect(slowResult.status).toBe('done');
    expect(slowResult.toolCalls.map((c) => c.result.output)).toEqual([
      '{"invoice":"inv-7","cents":1250}',
      '{"paid":"inv-7","approver":"slow"}',
      '{"paid":"inv-8","approver":"fast"}',
    ]);
    await slow.store.close();
    await fast.store.close();
  });
});

describe('the same answer twice at once', () => {
  it('replays once: one resume drives the run, the other waits for it and gets the same result', async () => {
    const { db, ledger } = files();
    const first = buildPayAgent(db, ledger, server.url);
    const halted = await first.runner.run('Pay', { runId: 'run-twice' });
    const [pay7, pay8] = halted.pendings ?? [];
    await first.runner.resume({ id: pay8?.id as string, ok: true });
    const second = buildPayAgent(db, ledger, server.url);

    const answer = { id: pay7?.id as string, ok: true, data: { approver: 'same' } };
    const outcomes = await Promise.allSettled([first.runner.resume(answer), second.runner.resume(answer)]);
    const fulfilled = outcomes.filter((o): o is PromiseFulfilledResult<RunResult> => o.status === 'fulfilled');
    expect(fulfilled).toHaveLength(2);
    expect(fulfilled[0]?.value.status).toBe('done');
    expect(fulfilled[1]?.value).toEqual(fulfilled[0]?.value);
    expect(readLedger(ledger).filter((l) => l.startsWith('pay inv-7'))).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    await first.store.close();
    await second.store.close();
  });
});
