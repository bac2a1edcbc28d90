/**
 * A served call's idempotency key held for as long as the call runs (issue 50's hole, docs/tools.md,
 * "Idempotency keys and receipts"): the key's lease is renewed every third of it on the coordinator's
 * clock, so a call longer than its lease is never run a second time by a repeat of its key; a holder
 * that could not renew for a whole lease (its process paused) is aborted and its outcome not kept.
 * Stepped on fake clocks, never raced.
 */
import { Toolkit, defineTool, success, type ToolContext, type ToolResult } from 'toolnexus-ts';
import { KeyLostError, ResumeCoordinator } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { serveMcp } from 'toolnexus-ts/mcp';
import { executeOnce } from '../../src/suspension/keyed';
import { FakeClock, until } from '../fixtures/fake-clock';

const LEASE_MS = 300;

/** A tool whose runs wait, each until the test opens it, and record what their signal said. */
function slowCharge() {
  const runs: Array<{ open: () => void; signal: AbortSignal | undefined }> = [];
  const toolkit = new Toolkit().register(
    defineTool({
      name: 'charge',
      description: 'Charges, slowly',
      inputSchema: { type: 'object', properties: {} },
      async run(_args, ctx?: ToolContext) {
        const n = runs.length + 1;
        await new Promise<void>((open) => runs.push({ open, signal: ctx?.signal }));
        return success(`charge ${n}`);
      },
    }),
  );
  return { toolkit, runs };
}

const alice = { key: 'order-1', principal: { id: 'alice' }, leaseMs: LEASE_MS };
/** Lets pending promise callbacks (a renewal's store call) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a served call keeps its idempotency key while it runs', () => {
  it('renews the key through ten leases: a repeat meanwhile is told the call still runs, and gets its outcome after', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const { toolkit, runs } = slowCharge();
    const coordinator = new ResumeCoordinator({ toolkit, store, clock });
    const first = executeOnce(coordinator, 'mcp', 'charge', {}, {}, alice);
    await until(() => runs.length === 1);
    for (let step = 0; step < 30; step++) {
      clock.advance(LEASE_MS / 3);
      await settle();
    }
    // Past three leases: without renewals a repeat would start the key again and run the tool a second time.
    let repeat: ToolResult | undefined;
    void executeOnce(coordinator, 'mcp', 'charge', {}, {}, alice).then((result) => (repeat = result));
    await until(() => repeat !== undefined || runs.length > 1);
    expect(runs).toHaveLength(1);
    expect(repeat?.isError).toBe(true);
    expect(repeat?.output).toContain('still running');
    runs[0]!.open();
    expect((await first).output).toBe('charge 1');
    expect((await executeOnce(coordinator, 'mcp', 'charge', {}, {}, alice)).output).toBe('charge 1');
    expect(runs).toHaveLength(1);
    // Settled: the heartbeat stopped with the call.
    expect(clock.timers).toHaveLength(0);
    expect(runs[0]!.signal?.aborted ?? false).toBe(false);
  });

  it('a holder that paused past its lease and was taken over is aborted with KeyLostError; its outcome is not kept, the newer holder’s is', async () => {
    // The store's clock runs on while this process's heartbeat stands still: a pause of the first process.
    const storeClock = new FakeClock();
    const processClock = new FakeClock();
    const store = new MemoryStore({ clock: storeClock });
    const { toolkit, runs } = slowCharge();
    const paused = new ResumeCoordinator({ toolkit, store, clock: processClock });
    const first = executeOnce(paused, 'mcp', 'charge', {}, {}, alice);
    await until(() => runs.length === 1);
    storeClock.advance(2 * LEASE_MS);
    // Another process, its repeat of the key after the lapse, runs the call under the next fence.
    const other = new ResumeCoordinator({ toolkit, store, clock: storeClock });
    const second = executeOnce(other, 'mcp', 'charge', {}, {}, alice);
    await until(() => runs.length === 2);
    // The paused process wakes: its renewal is refused (a newer fence holds the key), and its call is aborted.
    processClock.advance(LEASE_MS / 3);
    await until(() => runs[0]!.signal?.aborted === true);
    expect(runs[0]!.signal?.reason).toBeInstanceOf(KeyLostError);
    expect((runs[0]!.signal?.reason as KeyLostError).code).toBe('TOOLNEXUS_KEY_LOST');
    runs[0]!.open();
    // Its own caller is told the call was cancelled; the key does not keep that.
    expect(await first).toMatchObject({ isError: true, output: 'charge cancelled' });
    runs[1]!.open();
    expect((await second).output).toBe('charge 2');
    expect((await executeOnce(other, 'mcp', 'charge', {}, {}, alice)).output).toBe('charge 2');
    expect(processClock.timers).toHaveLength(0);
  });

  it('a door refuses a key lease that is not a positive number of milliseconds, before it serves anything', async () => {
    const { toolkit } = slowCharge();
    for (const idempotencyLeaseMs of [0, -1, Number.NaN])
      await expect(serveMcp(toolkit, { transport: 'http', idempotencyLeaseMs })).rejects.toThrow(
        /idempotencyLeaseMs must be a positive number of milliseconds/,
      );
  });
});
