/**
 * MCP tasks (SEP-2663) served by serveMcp (docs/mcp.md, "Tasks"): a suspended call for a client
 * that declared the extension is a task, recorded before the answer; tasks/get, tasks/update and
 * tasks/cancel are answered from the store by any server process, only to the principal that made
 * the call. Real parts: serveMcp in child processes on one SQLite file (test/fixtures/mcp-mrtr-server.ts).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputOf, startChild, until, type Started } from '../fixtures/children';
import { TOKENS } from '../fixtures/mcp-mrtr-server';
import { rpc } from '../fixtures/mcp-rpc';

const TASKS = { elicitation: { form: {}, url: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const refund = { name: 'refund', arguments: { customer: 'ada', cents: 1200 } };

describe('tasks over MCP 2026-07-28', () => {
  jest.setTimeout(180_000);
  let dir: string;
  const running: Started[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-tasks-'));
  });
  afterEach(async () => {
    for (const child of running.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });

  const start = async (policy: 'none' | 'manager'): Promise<string> => {
    const child = startChild('mcp-mrtr-server.ts', ['serve', join(dir, 'calls.db'), join(dir, 'ledger.txt'), '0', policy], {
      MRTR_KEY: 'tasks-test-key-0123456789abcdef0123456789',
    });
    running.push(child);
    await until(() => child.stdout().includes('\n') || child.stderr() !== '', 60_000, 'the server to print its URL');
    const url = child.stdout().split('\n')[0]?.trim() ?? '';
    if (!url.startsWith('http')) throw new Error(`the server did not start: ${child.stderr()}`);
    return url;
  };
  const runs = (): number =>
    existsSync(join(dir, 'ledger.txt')) ? readFileSync(join(dir, 'ledger.txt'), 'utf8').split('\n').filter(Boolean).length : 0;

  it('the task is the suspension: its own principal answers it with tasks/update, another process reports it completed, others see no task', async () => {
    const first = await start('none');
    const created = await rpc(first, TOKENS.alice, 'tools/call', refund, TASKS);
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

    const updated = await rpc(first, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    expect(updated.error).toBeUndefined();
    const second = await start('none');
    const done = await rpc(second, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(done.result).toMatchObject({
      taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'refunded 1200 cents to ada' }] },
    });
    // The same update again changes nothing: the call is settled.
    await rpc(second, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    expect(runs()).toBe(1);
  });

  it('a task a manager must approve: the requester cannot cancel or approve it, the task says where it waits', async () => {
    const url = await start('manager');
    const created = await rpc(url, TOKENS.alice, 'tools/call', refund, TASKS);
    const taskId = created.result?.taskId as string;
    expect(created.result).toMatchObject({ resultType: 'task', status: 'input_required', statusMessage: 'waiting for approval' });
    const waiting = Object.values(created.result?.inputRequests ?? {});
    expect(waiting[0]?.params).toMatchObject({ mode: 'url', url: `https://inbox.example.com/#${encodeURIComponent(taskId)}` });
    const cancel = await rpc(url, TOKENS.alice, 'tasks/cancel', { taskId }, TASKS);
    expect(cancel.error?.message).toContain('refused');
    const approve = await rpc(url, TOKENS.alice, 'tasks/update', { taskId, inputResponses: { [taskId]: { action: 'accept' } } }, TASKS);
    expect(approve.error?.message).toContain('refused');
    const still = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(still.result?.status).toBe('input_required');
    expect(runs()).toBe(0);
  });

  it('a quorum: two finance principals approve from two other processes while the requester polls; then completed, run once', async () => {
    const url = await start('none');
    const created = await rpc(url, TOKENS.alice, 'tools/call', { name: 'wire', arguments: { cents: 500 } }, TASKS);
    const taskId = created.result?.taskId as string;
    expect(created.result).toMatchObject({
      resultType: 'task',
      status: 'input_required',
      statusMessage: 'waiting for approval 0 of 2 (fin1, fin2, fin3)',
    });
    const approve = (principal: string) =>
      outputOf<{ won: boolean; status: string }>(
        startChild('mcp-mrtr-server.ts', ['answer', join(dir, 'calls.db'), join(dir, 'ledger.txt'), taskId, principal, 'none']),
        principal,
      );
    expect(await approve('fin1')).toEqual({ won: true, status: 'pending' });
    const half = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(half.result).toMatchObject({ status: 'input_required', statusMessage: 'waiting for approval 1 of 2 (fin1, fin2, fin3)' });
    expect(runs()).toBe(0);
    await approve('fin2');
    const done = await rpc(url, TOKENS.alice, 'tasks/get', { taskId }, TASKS);
    expect(done.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'wired 500 cents' }] } });
    expect(runs()).toBe(1);
  });
});
