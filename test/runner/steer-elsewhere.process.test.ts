/**
 * Steering a run from another process (issue 49; docs/agents.md, "Steering"), on a SQLite file
 * shared by two processes and on PostgreSQL: this process drives a run with durable steps (so
 * its checkpoint is `running` under its lease) whose model waits at a gate on its first turn; a
 * child process on the same store steers a message into it (twice, with one id) and exits; the
 * gate opens. The message went to the store's steering queue (`queued: 'elsewhere'`), the
 * driver's next model request carries it once, after the first turn's results, the run's stream
 * tells it was taken once, the transcript holds it once, and the store's queue is empty after.
 * The same when the first turn is the model's final answer: the run takes another turn for it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { OpenAIChatModel } from 'toolnexus-ts/models';
import { AgentRunner, type RunEvent, type RunStore } from 'toolnexus-ts/agents';
import { Toolkit } from 'toolnexus-ts';
import { startChild } from '../fixtures/children';
import { openStoreSpec, SHARED_STORES } from '../fixtures/store-spec';
import { LookupInvoiceTool } from '../fixtures/runner/pay-agent';
import { openaiCalls, openaiText, startMockServer, type MockServer, type Reply } from '../fixtures/runner/mock-servers';

const STEERED = 'and email the receipt to ana@example.com';

/** How often the request's messages hold the steered text as a user message. */
function steeredIn(body: Record<string, unknown>): number {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  return messages.filter((message) => message.role === 'user' && JSON.stringify(message.content).includes(STEERED)).length;
}

/** A reply held until `gate` resolves (the model is slow on this turn). */
function gated(gate: Promise<void>, reply: Reply): Reply {
  return async (res, req, index) => {
    await gate;
    await reply(res, req, index);
  };
}

describe.each(SHARED_STORES)('steering a run driven by another process, on $name', ({ make }) => {
  let dir: string;
  let drop: () => Promise<void>;
  let spec: string;
  let store: ReturnType<typeof openStoreSpec>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'toolnexus-steer-elsewhere-'));
    const made = await make(dir);
    spec = made.spec;
    drop = () => made.drop();
    store = openStoreSpec(spec);
  }, 60_000);
  afterAll(async () => {
    await (store as unknown as { close(): Promise<void> }).close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function steerFromChild(runId: string, id: string): Promise<unknown> {
    // The run is checkpointed `running` before the other process steers it (its first step's write).
    const deadline = Date.now() + 60_000;
    while ((await store.loadRun(runId))?.state.phase !== 'running') {
      if (Date.now() > deadline) throw new Error(`run ${runId} was never checkpointed running`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const child = startChild('runner/steer-elsewhere-child.ts', [spec, runId, STEERED, id]);
    const exit = await child.exited;
    if (exit.code !== 0) throw new Error(`the steering process exited with ${exit.code ?? exit.signal}: ${exit.stderr}`);
    return JSON.parse(exit.stdout) as unknown;
  }

  async function drive(runId: string, first: Reply, then: Reply[], id: string) {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const model: MockServer = await startMockServer([gated(gate, first), ...then]);
    try {
      const toolkit = new Toolkit().register(new LookupInvoiceTool(join(dir, 'ledger')));
      const runner = new AgentRunner({
        model: new OpenAIChatModel({ baseUrl: `${model.url}/v1`, model: 'mock', retry: { maxAttempts: 1 } }),
        toolkit,
        coordinator: new ResumeCoordinator({ toolkit, store }),
        durability: 'step',
      });
      const events: RunEvent[] = [];
      const streaming = (async () => {
        for await (const event of runner.stream('Pay invoice inv-7', { runId })) events.push(event);
      })();
      const steered = await steerFromChild(runId, id);
      open();
      await streaming;
      return { steered, events, requests: model.requests };
    } finally {
      open();
      await model.close();
    }
  }

  async function expectTakenOnce(runId: string, id: string, events: RunEvent[]): Promise<void> {
    expect(events.filter((event) => event.type === 'steered')).toEqual([{ type: 'steered', message: { id, content: STEERED } }]);
    const done = events.find((event) => event.type === 'done');
    expect(done?.type === 'done' && done.result.status).toBe('done');
    const messages = done?.type === 'done' ? done.result.messages : [];
    expect(messages.filter((message) => message.role === 'user' && message.content === STEERED)).toEqual([
      { role: 'user', content: STEERED, id },
    ]);
    const saved = await store.loadRun(runId);
    expect(saved?.state.phase).toBe('done');
    expect(saved?.state.steering).toBeUndefined();
    const queue = store as RunStore;
    expect(await queue.queuedSteers?.(runId, 100)).toEqual([]);
  }

  it('the next turn after a slow first turn takes the message once, after the turn’s results', async () => {
    const runId = 'run-steer-tool';
    const { steered, events, requests } = await drive(
      runId,
      openaiCalls([{ id: 'call_lookup', name: 'lookup_invoice', args: { invoice: 'inv-7' } }]),
      [openaiText('Paid; the receipt goes to ana@example.com.')],
      'steer-b',
    );
    expect(steered).toEqual({
      receipts: [
        { runId, id: 'steer-b', queued: 'elsewhere' },
        { runId, id: 'steer-b', queued: 'elsewhere' },
      ],
    });
    expect(requests).toHaveLength(2);
    expect(steeredIn((requests[0] as { body: Record<string, unknown> }).body)).toBe(0);
    const second = (requests[1] as { body: Record<string, unknown> }).body.messages as Array<{ role: string; content: unknown }>;
    expect(steeredIn({ messages: second })).toBe(1);
    // After the lookup's result, never between the call and its result.
    expect(second.map((message) => message.role).slice(-3)).toEqual(['assistant', 'tool', 'user']);
    await expectTakenOnce(runId, 'steer-b', events);
  }, 120_000);

  it('a final answer given while the message was queued is followed by another turn for it', async () => {
    const runId = 'run-steer-final';
    const { events, requests } = await drive(runId, openaiText('Invoice inv-7 is 12.50.'), [openaiText('Sent to ana.')], 'steer-c');
    expect(requests).toHaveLength(2);
    expect(steeredIn((requests[1] as { body: Record<string, unknown> }).body)).toBe(1);
    await expectTakenOnce(runId, 'steer-c', events);
    const done = events.find((event) => event.type === 'done');
    expect(done?.type === 'done' && done.result.text).toBe('Sent to ana.');
  }, 120_000);
});
