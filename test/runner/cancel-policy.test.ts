/**
 * A cancel is judged by the answer policy before anything changes (issue 45, docs/agents.md
 * "Cancel"): `runner.cancel` and the inbox's `POST api/runs/ID/cancel` for a principal the
 * policy refuses leave a halted run halted and its request pending (AnswerRefusedError, 403),
 * so the manager's later approval runs the tool and finishes the run; a run being driven is
 * judged before it is aborted. Real SQLite files, a real inbox on 127.0.0.1.
 */
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, defineTool, type ToolContext } from 'toolnexus-ts';
import { FunctionModel } from 'toolnexus-ts/models';
import { AgentRunner, RunCancelledError, answerAs } from 'toolnexus-ts/agents';
import { AnswerRefusedError, ResumeCoordinator, rulesPolicy, type AnswerRefusal } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { transferAgent } from '../fixtures/runner/transfer-agent';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';

const MANAGER = { id: 'manager:ann' };
const INTRUDER = { id: 'clerk:ivan' };
const POLICY = rulesPolicy([{ principals: [MANAGER.id], tools: ['transfer', 'export_all'] }]);

let dir: string;
const closing: Array<() => Promise<void>> = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-cancel-policy-'));
});
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

function halting() {
  const store = new SqliteStore({ filename: join(dir, 'runs.db') });
  closing.push(() => store.close());
  const { toolkit, model, transfers } = transferAgent();
  const refusals: AnswerRefusal[] = [];
  const coordinator = new ResumeCoordinator({ toolkit, store, policy: POLICY, observers: [{ onRefused: (_call, r) => refusals.push(r) }] });
  const runner = new AgentRunner({ model, toolkit, coordinator });
  return { store, runner, refusals, transfers };
}

describe('runner.cancel', () => {
  it('a halted run, for a principal the policy refuses: AnswerRefusedError, nothing changed, the manager’s approval finishes it', async () => {
    const { store, runner, refusals, transfers } = halting();
    const halted = await runner.run('Move it', { principal: { id: 'customer:rita' } });
    const id = halted.pending!.id;
    const refused = runner.cancel(halted.runId, { reason: 'no', audit: { by: INTRUDER } });
    await expect(refused).rejects.toBeInstanceOf(AnswerRefusedError);
    await expect(refused).rejects.toMatchObject({ code: 'TOOLNEXUS_ANSWER_REFUSED', principalId: INTRUDER.id });
    expect(refusals).toEqual([expect.objectContaining({ by: INTRUDER, action: 'cancel' })]);
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'halted' });
    expect((await store.get(id))?.status).toBe('pending');

    const { run } = await answerAs(runner, { id, ok: true }, { by: MANAGER });
    expect(run?.result?.status).toBe('done');
    expect(transfers()).toBe(1);
  });

  it('a halted run, for a principal the policy allows to cancel: cancelled as before', async () => {
    const { store, runner, transfers } = halting();
    const halted = await runner.run('Move it');
    expect((await runner.cancel(halted.runId, { audit: { by: MANAGER } })).status).toBe('cancelled');
    expect(await store.get(halted.pending!.id)).toMatchObject({ status: 'cancelled', answeredBy: MANAGER });
    expect(transfers()).toBe(0);
  });

  it('a run being driven is judged before it is aborted: refused, it goes on; its own principal stops it', async () => {
    const store = new SqliteStore({ filename: join(dir, 'driven.db') });
    closing.push(() => store.close());
    let release: (() => void) | undefined;
    const aborted: unknown[] = [];
    const toolkit = new Toolkit().register(
      defineTool({
        name: 'export_all',
        description: 'Exports everything (slowly)',
        run: (_args: object, ctx?: ToolContext) =>
          new Promise<string>((resolve) => {
            release = () => resolve('exported');
            ctx?.signal?.addEventListener('abort', () => {
              aborted.push(ctx.signal?.reason);
              resolve('aborted');
            });
          }),
      }),
    );
    const model = new FunctionModel(({ messages }) =>
      messages.some((m) => m.role === 'tool') ? 'finished' : { toolCalls: [{ id: 'c1', name: 'export_all', arguments: {} }] },
    );
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store, policy: POLICY }) });
    const rita = { id: 'customer:rita' };

    const first = runner.run('Export', { runId: 'run-driven', principal: rita });
    while (!release) await new Promise((resolve) => setImmediate(resolve));
    await expect(runner.cancel('run-driven', { audit: { by: INTRUDER } })).rejects.toMatchObject({
      code: 'TOOLNEXUS_ANSWER_REFUSED',
      principalId: INTRUDER.id,
    });
    expect(aborted).toEqual([]);
    release();
    expect(await first).toMatchObject({ status: 'done', text: 'finished' });

    release = undefined;
    const second = runner.run('Export', { runId: 'run-driven-2', principal: rita });
    while (!release) await new Promise((resolve) => setImmediate(resolve));
    expect((await runner.cancel('run-driven-2', { audit: { by: rita } })).status).toBe('cancelled');
    expect(aborted[0]).toBeInstanceOf(RunCancelledError);
    expect((await second).status).toBe('cancelled');
  });
});

describe('the inbox’s POST api/runs/ID/cancel', () => {
  it('is 403 for a principal the policy refuses, and changes nothing: the manager then approves and the run finishes', async () => {
    const { store, runner, transfers } = halting();
    const inbox = createInbox({
      runner,
      authorize: bearerTokens([
        { token: 'intruder-token-0123456789abcdef', principal: INTRUDER },
        { token: 'manager-token-0123456789abcdef', principal: MANAGER },
      ]),
    });
    const http: Server = createServer((request, response) => inbox(request, response));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    closing.push(async () => {
      inbox.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const post = (path: string, token: string, body: object) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const halted = await runner.run('Move it');
    const id = halted.pending!.id;
    const refused = await post(`/api/runs/${encodeURIComponent(halted.runId)}/cancel`, 'intruder-token-0123456789abcdef', {});
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('TOOLNEXUS_ANSWER_REFUSED');
    expect((await store.loadRun(halted.runId))?.state).toMatchObject({ phase: 'halted' });
    expect((await store.get(id))?.status).toBe('pending');

    const approved = await post(`/api/suspensions/${encodeURIComponent(id)}/answer`, 'manager-token-0123456789abcdef', { ok: true });
    expect(approved.status).toBe(200);
    expect(((await approved.json()) as { run: { status: string } }).run.status).toBe('done');
    expect(transfers()).toBe(1);
  });
});
