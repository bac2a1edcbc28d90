/**
 * The lease of a task of a call that did not suspend (docs/mcp.md, "A long call as a task"), on
 * fake time: two `TaskRuns` (two servers' worth) on one MemoryStore sharing a FakeClock, so the
 * store judges leases by the time the test steps. A server that stops renewing (its timers never
 * fire: a dead process) leaves a task that another reads `failed` once the lease is past, written
 * once, never overwritten by the late call; a cancel recorded through the other server aborts
 * the call at the runner's next renewal, and not before.
 */
import 'reflect-metadata';
import { Toolkit } from '../../src';
import type { McpToolContext } from '../../src/mcp';
import type { ModernCall, ModernCallResult, MrtrSettings } from '../../src/mcp/server/mrtr';
import { TaskRuns } from '../../src/mcp/server/task-runs';
import type { TaskView } from '../../src/mcp/server/tasks';
import { ResumeCoordinator } from '../../src/suspension';
import type { Clock } from '../../src/timing/clock';
import { MemoryStore } from 'toolnexus-ts/memory';
import { FakeClock, until } from '../fixtures/fake-clock';

const LEASE_MS = 3000;

describe('the lease of a running task, on fake time', () => {
  let clock: FakeClock;
  let store: MemoryStore;
  let coordinator: ResumeCoordinator;

  beforeEach(() => {
    clock = new FakeClock();
    store = new MemoryStore({ clock });
    coordinator = new ResumeCoordinator({ toolkit: new Toolkit(), store });
  });
  afterEach(() => store.close());

  const runs = (timers: Clock = clock) =>
    new TaskRuns(coordinator, { afterMs: 0, keepMs: 3_600_000, maxTasks: 10, leaseMs: LEASE_MS, clock: timers }, () => undefined);
  /** A server whose timers never fire: it stops renewing, as a dead process does. */
  const dead: Clock = { now: () => clock.now(), setTimeout: () => ({}), clearTimeout: () => undefined };
  const ctx = (): McpToolContext => ({ log: () => undefined, mcp: { protocol: 'modern' } });
  const call = (): ModernCall => ({ name: 'slow', args: {}, by: { id: 'alice' }, support: { form: false, url: false }, ctx: ctx() });
  const view = (id = 'alice'): TaskView => ({ by: { id }, support: { form: false, url: false }, ctx: ctx(), settings: {} as MrtrSettings });
  /** A call that runs until the test ends it, telling the signal it ran with. */
  const held = () => {
    let end!: (result: ModernCallResult) => void;
    let signal: AbortSignal | undefined;
    const serve = (given: ModernCall) => {
      signal = given.ctx.signal;
      return new Promise<ModernCallResult>((resolve) => (end = resolve));
    };
    return { serve, end: (text: string) => end({ content: [{ type: 'text', text }] }), signal: () => signal };
  };

  it('a task whose server stopped renewing reads working until its lease is past, then failed, written once', async () => {
    const [a, b] = [runs(dead), runs()];
    const tool = held();
    const created = await a.serve(call(), tool.serve);
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = (created as { taskId: string }).taskId;
    clock.advance(LEASE_MS);
    expect(await b.get(taskId, view())).toMatchObject({ status: 'working' });
    clock.advance(1);
    const failed = await b.get(taskId, view());
    expect(failed).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(failed.error?.message).toContain('may or may not have run');
    await expect(b.get(taskId, view('mallory'))).rejects.toMatchObject({ code: 'TOOLNEXUS_MCP_TASK_NOT_FOUND' });
    clock.advance(5000);
    // The late call's end changes nothing: the failure stands, as first written.
    tool.end('too late');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await a.get(taskId, view())).toEqual(failed);
    expect(await store.loadMcpTask(taskId)).toMatchObject({ status: 'failed', version: 2 });
  });

  it('a live server renews its lease: the task stays working past many leases, then completes', async () => {
    const [a, b] = [runs(), runs()];
    const tool = held();
    const taskId = ((await a.serve(call(), tool.serve)) as { taskId: string }).taskId;
    for (let step = 0; step < 10; step++) {
      clock.advance(LEASE_MS / 3);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await b.get(taskId, view())).toMatchObject({ status: 'working' });
    tool.end('done');
    let task = await b.get(taskId, view());
    while (task.status === 'working') {
      await new Promise((resolve) => setImmediate(resolve));
      task = await b.get(taskId, view());
    }
    expect(task).toMatchObject({ status: 'completed', result: { content: [{ text: 'done' }] } });
  });

  it('a cancel through another server is recorded at once and aborts the call at the runner’s next renewal', async () => {
    const [a, b] = [runs(), runs()];
    const tool = held();
    const taskId = ((await a.serve(call(), tool.serve)) as { taskId: string }).taskId;
    await b.cancel(taskId, view());
    expect(await b.get(taskId, view())).toMatchObject({ status: 'cancelled' });
    expect(await a.get(taskId, view())).toMatchObject({ status: 'cancelled' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(tool.signal()?.aborted).toBe(false);
    clock.advance(LEASE_MS / 3);
    await until(() => tool.signal()?.aborted === true);
    expect(String((tool.signal()?.reason as Error).message)).toBe('the task was cancelled');
    tool.end('after the cancel');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await b.get(taskId, view())).toMatchObject({ status: 'cancelled' });
  });
});
