/**
 * MCP tasks (SEP-2663) served by serveMcp (docs/mcp.md, "Tasks"): a suspended call for a client
 * that declared the extension is a task, recorded before the answer; tasks/get, tasks/update and
 * tasks/cancel are answered from the store by any server process, only to the principal that made
 * the call. Real parts: serveMcp in child processes (test/fixtures/mcp-mrtr-server.ts) on one
 * SQLite file and on the jest global setup's PostgreSQL; the server processes of each store are
 * shared by its tests (each test calls with its own arguments and counts its own runs).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SuspensionStore } from 'toolnexus-ts/suspension';
import { outputOf, startChild, until, type Started } from '../fixtures/children';
import { FINANCE, TOKENS } from '../fixtures/mcp-mrtr-server';
import { rpc } from '../fixtures/mcp-rpc';
import { openStoreSpec, SHARED_STORES, type SharedStore } from '../fixtures/store-spec';

const TASKS = { elicitation: { form: {}, url: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const refund = (customer: string) => ({ name: 'refund', arguments: { customer, cents: 1200 } });

describe.each(SHARED_STORES)('tasks over MCP 2026-07-28, on $name', ({ make }) => {
  jest.setTimeout(180_000);
  let dir: string;
  let shared: SharedStore;
  let own: SuspensionStore;
  const running: Started[] = [];
  const servers = new Map<string, Promise<string>>();

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-'));
    shared = await make(dir);
    own = openStoreSpec(shared.spec);
  });
  afterAll(async () => {
    for (const child of running.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
    await own.close();
    await shared.drop();
  });

  /** The server process `name` of this store (`none`, `other`: no policy; `manager`), started once. */
  const server = (name: 'none' | 'other' | 'manager'): Promise<string> => {
    const started = servers.get(name) ?? start(name === 'manager' ? 'manager' : 'none');
    servers.set(name, started);
    return started;
  };
  const start = async (policy: 'none' | 'manager'): Promise<string> => {
    const child = startChild('mcp-mrtr-server.ts', ['serve', shared.spec, join(dir, 'ledger.txt'), '0', policy], {
      MRTR_KEY: 'tasks-test-key-0123456789abcdef0123456789',
    });
    running.push(child);
    await until(() => child.stdout().includes('\n') || child.hasExited(), 60_000, 'the server to print its URL');
    const url = child.stdout().split('\n')[0]?.trim() ?? '';
    if (!url.startsWith('http')) throw new Error(`the server did not start: ${child.stderr()}`);
    return url;
  };
  /** How many ledger lines start with `prefix`: the runs of one test's calls. */
  const runs = (prefix: string): number =>
    existsSync(join(dir, 'ledger.txt'))
      ? readFileSync(join(dir, 'ledger.txt'), 'utf8')
          .split('\n')
          .filter((line) => line.startsWith(prefix)).length
      : 0;

  it('the task is the suspension: its own principal answers it with tasks/update, another process reports it completed, others see no task', async () => {
    const [first, second] = await Promise.all([server('none'), server('other')]);
    const created = await rpc(first, TOKENS.alice, 'tools/call', refund('ada'), TASKS);
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required', pollIntervalMs: 2000, ttlMs: null });
    const taskId = created.result?.taskId as string;
    expect(taskId).toMatch(/^pnd-/);
    expect(created.result?.inputRequests?.[taskId]?.method).toBe('elicitation/create');

    const stranger = await rpc(first, TOKENS.bob, 'tasks/get', { taskId }, TASKS);
    expect(stranger.error).toMatchObject({ code: -32602, message: 'task not found' });
    // Its own principal, on a request that does not declare the extension: the methods are refused.
    const undeclared = await rpc(first, TOKENS.alice, 'tasks/get', { taskId });
    expect(undeclared.error?.code).toBe(-32021);
    const nothing = await rpc(first, TOKENS.alice, 'tasks/get', { taskId: 'pnd-no-such-task' }, TASKS);
    expect(nothing.error).toMatchObject({ code: -32602, message: 'task not found' });

    // A response under a key that is not outstanding is ignored, as the extension says.
    const stale = await rpc(first, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { 'pnd-other': { action: 'accept' } } }, TASKS);
    expect(stale.error).toBeUndefined();
    expect((await rpc(second, TOKENS.alice, 'tasks/get', { taskId }, TASKS)).result?.status).toBe('input_required');

    const updated = await rpc(first, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    expect(updated.error).toBeUndefined();
    const done = await rpc(second, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(done.result).toMatchObject({
      taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'refunded 1200 cents to ada' }] },
    });
    // The same update again changes nothing: the call is settled.
    await rpc(second, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    expect(runs('ada ')).toBe(1);
  });

  it('a declined task is completed with the tool result the model is told, isError, and the tool never ran', async () => {
    const url = await server('none');
    const created = await rpc(url, TOKENS.alice, 'tools/call', refund('dee'), TASKS);
    const taskId = created.result?.taskId as string;
    await rpc(url, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'decline' } } }, TASKS);
    const done = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(done.result).toMatchObject({ status: 'completed', statusMessage: 'declined', result: { isError: true } });
    expect(runs('dee ')).toBe(0);
  });

  it('a task a manager must approve: the requester cannot cancel or approve it, the task says where it waits', async () => {
    const url = await server('manager');
    const created = await rpc(url, TOKENS.alice, 'tools/call', refund('bea'), TASKS);
    const taskId = created.result?.taskId as string;
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required', statusMessage: 'approval' });
    const waiting = Object.values(created.result?.inputRequests ?? {});
    expect(waiting[0]?.params).toMatchObject({ mode: 'url', url: `https://inbox.example.com/#${encodeURIComponent(taskId)}` });
    const cancel = await rpc(url, TOKENS.alice, 'tasks/cancel', { taskId }, TASKS);
    expect(cancel.error?.message).toContain('refused');
    const approve = await rpc(url, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    expect(approve.error?.message).toContain('refused');
    const still = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(still.result?.status).toBe('input_required');
    expect(runs('bea ')).toBe(0);
  });

  it('a 2-of-3 quorum: two finance principals approve from two other processes while the requester polls another; each change a new key, then completed, run once', async () => {
    const [url, polled] = await Promise.all([server('none'), server('other')]);
    const cents = 500;
    const created = await rpc(url, TOKENS.alice, 'tools/call', { name: 'wire', arguments: { cents } }, TASKS);
    const taskId = created.result?.taskId as string;
    const who = `(${FINANCE.join(', ')})`;
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required', statusMessage: `approval 0 of 2 ${who}` });
    const approve = (principal: string) =>
      outputOf<{ won: boolean; status: string }>(
        startChild('mcp-mrtr-server.ts', ['answer', shared.spec, join(dir, 'ledger.txt'), taskId, principal, 'none']),
        principal,
      );
    // The requester is no signer: she is sent where the signers answer, under a key for this state.
    const keys = [Object.keys(created.result?.inputRequests ?? {})];
    expect(Object.values(created.result?.inputRequests ?? {})[0]?.params.mode).toBe('url');
    const again = await rpc(polled, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(Object.keys(again.result?.inputRequests ?? {})).toEqual(keys[0]);

    expect(await approve(FINANCE[0] as string)).toEqual({ won: true, status: 'pending' });
    const half = await rpc(polled, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(half.result).toMatchObject({ status: 'input_required', statusMessage: `approval 1 of 2 ${who}` });
    keys.push(Object.keys(half.result?.inputRequests ?? {}));
    expect(keys[1]).toHaveLength(1);
    expect(keys[1]).not.toEqual(keys[0]);
    expect(String(Object.values(half.result?.inputRequests ?? {})[0]?.params.message)).toContain(`approval 1 of 2 ${who}`);
    expect(runs(`wire ${cents} `)).toBe(0);

    await approve(FINANCE[1] as string);
    const done = await rpc(polled, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(done.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: `wired ${cents} cents` }] } });
    expect(runs(`wire ${cents} `)).toBe(1);
  });

  it('a task past its TTL reads completed with the expired result (isError) from another process, and the tool never ran', async () => {
    const [url, other] = await Promise.all([server('none'), server('other')]);
    const created = await rpc(url, TOKENS.alice, 'tools/call', { name: 'lapse', arguments: { customer: 'eve', cents: 700 } }, TASKS);
    const taskId = created.result?.taskId as string;
    expect(taskId).toMatch(/^pnd-/);
    // ttlMs runs from the task's creation to its call's expiresAt (a second: the tool's approval).
    const ttlMs = created.result?.ttlMs as number;
    expect(ttlMs).toBeGreaterThan(0);
    expect(ttlMs).toBeLessThanOrEqual(1000);
    const expiresAt = Date.parse(created.result?.createdAt as string) + ttlMs;
    // Waits on the store's own clock, which judges expiry for every process, until the TTL is past.
    let now = 0;
    while (now <= expiresAt) {
      now = await own.now!();
      if (now <= expiresAt) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const expired = await rpc(other, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(expired.result).toMatchObject({ taskId, status: 'completed', statusMessage: 'expired', result: { isError: true } });
    expect(expired.result?.inputRequests).toBeUndefined();
    // Settled: an approval now meets the same expiry, and the tool never runs.
    await rpc(url, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    const still = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(still.result).toMatchObject({ status: 'completed', statusMessage: 'expired' });
    expect((await own.get(taskId))?.status).toBe('expired');
    expect(runs('lapse ')).toBe(0);
  });
});
