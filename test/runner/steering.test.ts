/**
 * Steering (issue 49, docs/agents.md "Steering"): `runner.steer(runId, message)` queues a user
 * message with the run, and the run's next turn gives it to the model, after the turn's tool
 * results (never between a call and its result), once. A message steered into a run halted on an
 * approval waits in its checkpoint for the answer, in whichever process gives it: here the run
 * halts and is steered in a child process that then exits, and this process answers. The input
 * guardrails judge what is taken; a steer is judged as a cancel is. The model is a real HTTP
 * server on 127.0.0.1 that records every request; real SQLite files.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit } from 'toolnexus-ts';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent } from 'toolnexus-ts/agents';
import { AnswerRefusedError, ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { openaiCalls, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';
import { buildPayAgent, readLedger } from '../fixtures/runner/pay-agent';
import { outputOf, startChild, until } from '../fixtures/children';
import { slowToolkit } from '../fixtures/runner/slow-tool';

jest.setTimeout(60_000);

let dir: string;
const closing: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-steer-'));
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

async function server(replies: Reply[]): Promise<MockServer> {
  const started = await startMockServer(replies);
  closing.push(() => started.close());
  return started;
}

const modelAt = (mock: MockServer) => new OpenAIChatModel({ baseUrl: `${mock.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } });

/** The messages one recorded request sent, as role and text. */
function sent(mock: MockServer, index: number): Array<{ role: string; content: unknown }> {
  const messages = mock.requests[index]?.body.messages as Array<{ role: string; content: unknown }>;
  return messages.map(({ role, content }) => ({ role, content }));
}

/** How many requests in all carried `text` as a user message. */
const userTurnsWith = (mock: MockServer, text: string) =>
  mock.requests.reduce(
    (count, request) =>
      count +
      (request.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'user' && m.content === text).length,
    0,
  );

const CALLS_EXPORT = openaiCalls([{ id: 'call_export', name: 'export_rows', args: {} }]);

describe('runner.steer', () => {
  it('a message steered during a slow tool call is seen by the model at the next turn, after the results, once', async () => {
    const mock = await server([CALLS_EXPORT, openaiText('Exported, and I will skip the totals.')]);
    const { toolkit, open, started } = slowToolkit();
    const runner = new AgentRunner({ model: modelAt(mock), toolkit });
    const events: RunEvent[] = [];
    const streaming = (async () => {
      for await (const event of runner.stream('Export the report', { runId: 'run-slow' })) events.push(event);
    })();
    await until(() => started() === 1, 20_000, 'the tool to start');
    const receipt = await runner.steer('run-slow', 'skip the totals row', { id: 'steer-1' });
    expect(receipt).toEqual({ runId: 'run-slow', id: 'steer-1', queued: 'driven' });
    // The same message again (a page that lost its connection) is queued once.
    await runner.steer('run-slow', 'skip the totals row', { id: 'steer-1' });
    expect(mock.requests).toHaveLength(1); // nothing reached the model in the middle of the tool batch
    open();
    await streaming;
    const done = events.find((event) => event.type === 'done');
    expect(done?.type === 'done' && done.result.status).toBe('done');
    expect(mock.requests).toHaveLength(2);
    expect(sent(mock, 1).slice(-3)).toEqual([
      { role: 'assistant', content: null },
      { role: 'tool', content: 'exported 3 rows' },
      { role: 'user', content: 'skip the totals row' },
    ]);
    expect(userTurnsWith(mock, 'skip the totals row')).toBe(1);
    // The stream tells when it was taken: after the tool's result, before the next turn's text.
    const types = events.map((event) => event.type);
    expect(types.indexOf('steered')).toBeGreaterThan(types.indexOf('tool_result'));
    expect(types.indexOf('steered')).toBeLessThan(types.lastIndexOf('text') === -1 ? types.indexOf('done') : types.lastIndexOf('text'));
    expect(events.filter((event) => event.type === 'steered')).toEqual([
      { type: 'steered', message: { id: 'steer-1', content: 'skip the totals row' } },
    ]);
    // Recorded in the transcript, with its id.
    const result = done?.type === 'done' ? done.result : undefined;
    expect(result?.messages).toContainEqual({ role: 'user', content: 'skip the totals row', id: 'steer-1' });
    // The run is over: nothing takes a message now.
    await expect(runner.steer('run-slow', 'one more')).rejects.toMatchObject({ code: 'TOOLNEXUS_RUN_NOT_FOUND' });
  });

  it('a message steered while the model answers gets another turn instead of being dropped', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slowText: Reply = async (res, req, index) => {
      if (index === 0) await held;
      await openaiText(index === 0 ? 'Here is the report.' : 'Sorted by date too.')(res, req, index);
    };
    const mock = await server([slowText]);
    const runner = new AgentRunner({ model: modelAt(mock), toolkit: new Toolkit() });
    const running = runner.run('Show the report', { runId: 'run-text' });
    await until(() => mock.requests.length === 1, 20_000, 'the first model call');
    await runner.steer('run-text', 'sort it by date');
    release();
    const result = await running;
    expect(result.status).toBe('done');
    expect(result.text).toBe('Sorted by date too.');
    expect(sent(mock, 1).slice(-2)).toEqual([
      { role: 'assistant', content: 'Here is the report.' },
      { role: 'user', content: 'sort it by date' },
    ]);
  });

  it('a message steered into a run halted on an approval is seen after the answer, once', async () => {
    const mock = await server([openaiCalls([{ id: 'call_pay', name: 'pay_invoice', args: { invoice: 'inv-7' } }]), openaiText('Paid.')]);
    const { runner, store } = buildPayAgent(join(dir, 'runs.db'), join(dir, 'ledger'), mock.url);
    closing.push(() => store.close());
    const halted = await runner.run('Pay invoice inv-7');
    expect(halted.status).toBe('halted');
    const receipt = await runner.steer(halted.runId, 'and email the receipt', { id: 'steer-email' });
    expect(receipt.queued).toBe('stored');
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({
      phase: 'halted',
      steering: [{ id: 'steer-email', content: 'and email the receipt' }],
    });
    expect(mock.requests).toHaveLength(1);
    const result = await runner.resume({ id: halted.pending!.id, ok: true });
    expect(result.status).toBe('done');
    const [tool, steered] = sent(mock, 1).slice(-2);
    expect(tool?.role).toBe('tool');
    expect(String(tool?.content)).toContain('inv-7');
    expect(steered).toEqual({ role: 'user', content: 'and email the receipt' });
    expect(userTurnsWith(mock, 'and email the receipt')).toBe(1);
    expect((await store.loadRun(halted.runId))?.state.steering).toBeUndefined();
  });

  it('is durable across a process restart: steered in a process that exits, taken by the one that answers', async () => {
    const mock = await server([openaiCalls([{ id: 'call_pay', name: 'pay_invoice', args: { invoice: 'inv-7' } }]), openaiText('Paid.')]);
    const db = join(dir, 'runs.db');
    const ledger = join(dir, 'ledger');
    const child = await outputOf<{ runId: string; pendingId: string; receipt: { queued: string } }>(
      startChild('runner/steer-child.ts', [db, ledger, mock.url]),
      'steer',
    );
    expect(child.receipt.queued).toBe('stored');
    const { runner, store } = buildPayAgent(db, ledger, mock.url);
    closing.push(() => store.close());
    const result = await runner.resume({ id: child.pendingId, ok: true });
    expect(result.status).toBe('done');
    expect(readLedger(ledger).filter((line) => line.startsWith('pay'))).toHaveLength(1);
    expect(sent(mock, 1).at(-1)).toEqual({ role: 'user', content: 'and email the receipt to ana@example.com' });
    expect(userTurnsWith(mock, 'and email the receipt to ana@example.com')).toBe(1);
    expect(result.messages).toContainEqual({ role: 'user', content: 'and email the receipt to ana@example.com', id: 'steer-email' });
  });

  it('with durable steps, a message steered during a tool call is in the checkpoint before the tool ends', async () => {
    const mock = await server([CALLS_EXPORT, openaiText('Done.')]);
    const { toolkit, open, started } = slowToolkit();
    const store = new SqliteStore({ filename: join(dir, 'runs.db') });
    closing.push(() => store.close());
    const runner = new AgentRunner({
      model: modelAt(mock),
      toolkit,
      coordinator: new ResumeCoordinator({ toolkit, store }),
      durability: 'step',
    });
    const running = runner.run('Export the report', { runId: 'run-steps' });
    await until(() => started() === 1, 20_000, 'the tool to start');
    await runner.steer('run-steps', 'only this month');
    expect((await store.loadRun('run-steps'))?.state).toMatchObject({ phase: 'running', steering: [{ content: 'only this month' }] });
    open();
    expect((await running).status).toBe('done');
    expect(sent(mock, 1).at(-1)).toEqual({ role: 'user', content: 'only this month' });
    expect((await store.loadRun('run-steps'))?.state.steering).toBeUndefined();
  });

  it('the input guardrails judge a steered message: a blocked one stops the run before the model reads it', async () => {
    const mock = await server([CALLS_EXPORT, openaiText('never asked')]);
    const { toolkit, open, started } = slowToolkit();
    const noRefunds = (subject: { text: string }) =>
      /refund/i.test(subject.text) ? { action: 'block' as const, message: 'refunds go through a person' } : { action: 'allow' as const };
    const runner = new AgentRunner({ model: modelAt(mock), toolkit, guardrails: { input: [noRefunds] } });
    const running = runner.run('Export the report', { runId: 'run-guarded' });
    await until(() => started() === 1, 20_000, 'the tool to start');
    await runner.steer('run-guarded', 'and refund everyone');
    open();
    const result = await running;
    expect(result.status).toBe('blocked');
    expect(result.stop).toMatchObject({ stage: 'input', message: 'refunds go through a person' });
    expect(mock.requests).toHaveLength(1);
  });

  it('who may steer is judged as a cancel: the run’s own principal may, another is refused and nothing is queued', async () => {
    const mock = await server([openaiCalls([{ id: 'call_pay', name: 'pay_invoice', args: { invoice: 'inv-7' } }]), openaiText('Paid.')]);
    const ledger = join(dir, 'ledger');
    const { store } = buildPayAgent(join(dir, 'runs.db'), ledger, mock.url);
    closing.push(() => store.close());
    const toolkit = buildPayAgent(join(dir, 'other.db'), ledger, mock.url).runner.toolkit;
    const coordinator = new ResumeCoordinator({ toolkit, store, policy: rulesPolicy([{ principals: ['manager:ann'] }]) });
    const runner = new AgentRunner({ model: modelAt(mock), toolkit, coordinator });
    const halted = await runner.run('Pay invoice inv-7', { principal: { id: 'customer:rita' } });
    await expect(runner.steer(halted.runId, 'pay twice', { audit: { by: { id: 'clerk:ivan' } } })).rejects.toBeInstanceOf(
      AnswerRefusedError,
    );
    await expect(runner.steer(halted.runId, 'pay twice', { audit: {} })).rejects.toBeInstanceOf(AnswerRefusedError);
    expect((await store.loadRun(halted.runId))?.state.steering).toBeUndefined();
    const receipt = await runner.steer(halted.runId, 'thanks', { audit: { by: { id: 'customer:rita' } } });
    expect(receipt.queued).toBe('stored');
    // The manager, whom the policy lets answer the open request, may too.
    await runner.steer(halted.runId, 'approved on the phone', { audit: { by: { id: 'manager:ann' } } });
    expect((await store.loadRun(halted.runId))?.state.steering).toHaveLength(2);
  });

  it('refuses bad input before anything changes', async () => {
    const runner = new AgentRunner({ model: modelAt(await server([openaiText('x')])), toolkit: new Toolkit() });
    await expect(runner.steer('run-x', '')).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    await expect(runner.steer('run-x', 'x'.repeat(100_001))).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    await expect(runner.steer('run-x', 'hello', { id: '' })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    await expect(runner.steer('run-x', 'hello')).rejects.toMatchObject({ code: 'TOOLNEXUS_RUN_NOT_FOUND' });
  });
});

describe('runner.steer into a run another runner drives (the store’s steering queue)', () => {
  /** A store whose first deletes of taken messages fail, as a connection lost right after the checkpoint's write. */
  class FlakyDrops extends SqliteStore {
    failures = 1;
    override async dropSteers(runId: string, ids: readonly string[]): Promise<number> {
      if (this.failures-- > 0) throw new Error('connection lost');
      return super.dropSteers(runId, ids);
    }
  }

  it('a message written into the checkpoint but not deleted from the queue is not taken twice', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const lookup = openaiCalls([{ id: 'call_lookup', name: 'lookup_invoice', args: { invoice: 'inv-7' } }]);
    const mock = await server([
      async (res, req, index) => {
        await gate;
        await lookup(res, req, index);
      },
      openaiCalls([{ id: 'call_again', name: 'lookup_invoice', args: { invoice: 'inv-8' } }]),
      openaiText('Both looked up.'),
    ]);
    const store = new FlakyDrops({ filename: join(dir, 'runs.db') });
    closing.push(() => store.close());
    const { LookupInvoiceTool } = await import('../fixtures/runner/pay-agent');
    const build = () => {
      const toolkit = new Toolkit().register(new LookupInvoiceTool(join(dir, 'ledger')));
      const coordinator = new ResumeCoordinator({ toolkit, store });
      return new AgentRunner({ model: modelAt(mock), toolkit, coordinator, durability: 'step' });
    };
    const driver = build();
    const elsewhere = build(); // drives nothing: like another process on the same store
    const events: RunEvent[] = [];
    const streaming = (async () => {
      for await (const event of driver.stream('Look up inv-7', { runId: 'run-queued' })) events.push(event);
    })();
    await until(() => mock.requests.length === 1, 30_000, 'the first model request');
    expect(await elsewhere.steer('run-queued', 'and inv-8 too', { id: 'steer-q' })).toEqual({
      runId: 'run-queued',
      id: 'steer-q',
      queued: 'elsewhere',
    });
    open();
    await streaming;
    expect(mock.requests).toHaveLength(3);
    // Once in the second request, once (the same message, in the transcript) in the third: never twice in one.
    expect(sent(mock, 1).filter((m) => m.content === 'and inv-8 too')).toHaveLength(1);
    expect(sent(mock, 2).filter((m) => m.content === 'and inv-8 too')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'steered')).toHaveLength(1);
    expect(store.failures).toBeLessThan(0);
    expect(await store.queuedSteers('run-queued', 100)).toEqual([]);
  });

  it('refuses a message beyond the queue’s cap, and a steer of a run that is over', async () => {
    const store = new SqliteStore({ filename: join(dir, 'cap.db') });
    closing.push(() => store.close());
    const toolkit = new Toolkit();
    const runner = new AgentRunner({
      model: modelAt(await server([openaiText('-')])),
      toolkit,
      coordinator: new ResumeCoordinator({ toolkit, store }),
    });
    const running = {
      format: 'toolnexus.run/1',
      phase: 'running',
      messages: [],
      toolCalls: [],
      turns: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      text: '',
    };
    const renewed = () => ({ id: 'driver-elsewhere', renewedAt: new Date().toISOString() });
    expect(
      await store.saveRun({ runId: 'run-full', version: 1, state: { ...running, driver: renewed() }, updatedAt: new Date().toISOString() }),
    ).toBe(true);
    for (let i = 0; i < 100; i++) await runner.steer('run-full', `message ${i}`, { id: `m${i}` });
    await expect(runner.steer('run-full', 'one more', { id: 'm100' })).rejects.toMatchObject({ code: 'TOOLNEXUS_INVALID_ARGUMENT' });
    expect(await store.queuedSteers('run-full', 1000)).toHaveLength(100);
    expect((await store.loadRun('run-full'))?.version).toBe(1);
    expect(
      await store.saveRun({ runId: 'run-full', version: 2, state: { ...running, phase: 'done' }, updatedAt: new Date().toISOString() }),
    ).toBe(true);
    await expect(runner.steer('run-full', 'too late', { id: 'late' })).rejects.toMatchObject({ code: 'TOOLNEXUS_RUN_CONFLICT' });
  });
});
