/**
 * Who may answer (docs/who-may-answer.md): one answer policy, given to the coordinator and
 * judged on the path of every answer (resolve, cancel, answerAs, so the runner, inbox, chat,
 * CLI and MCP), before the claim. A refused answer changes nothing stored and is an
 * AnswerRefusedError; a sub-agent's request is judged by the tool that asked, at any depth;
 * separation of duties refuses the requester's own approval; ctx.idempotencyKey is the same on
 * the first execution and every replay.
 */
import 'reflect-metadata';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Toolkit, Tool, pending, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { answerAs, AgentRunner, type RunResult } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ResumeCoordinator, rulesPolicy, type AnswerRefusal, type SuspendedCall } from 'toolnexus-ts/suspension';
import { FakeClock } from '../fixtures/fake-clock';
import { startMockServer, type MockServer } from '../fixtures/runner/mock-servers';
import { buildTeam, ledgerOf, teamModel } from '../fixtures/runner/team-agent';

class RefundArgs {
  @IsString()
  order!: string;
  @IsInt()
  @Min(1)
  @Max(10_000)
  amount!: number;
}

/** A refund that asks for approval itself and records every run of its body, with the key it was given. */
function refundTool(runs: Array<{ replay: boolean; key: string | undefined }>, idempotent = false) {
  @Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, idempotent })
  class RefundTool {
    run(args: RefundArgs, ctx?: ToolContext) {
      runs.push({ replay: ctx?.answer !== undefined, key: ctx?.idempotencyKey });
      if (!ctx?.answer) return pending({ kind: 'approval', prompt: `Refund ${args.amount} on ${args.order}?` });
      return success({ refunded: args.amount, by: ctx.answer.answeredBy?.id });
    }
  }
  return new RefundTool();
}

const MANAGERS_REFUND = rulesPolicy([
  { principals: ['manager:ann'], tools: ['refund'], kinds: ['approval'] },
  { principals: ['clerk:carl'], tools: ['lookup'] },
]);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-who-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the policy at the coordinator', () => {
  it('refuses a principal the policy does not allow, and an answer with no principal; nothing stored changes; observers are told', async () => {
    const runs: Array<{ replay: boolean; key: string | undefined }> = [];
    const store = new SqliteStore({ filename: join(dir, 'who.db') });
    const refusals: Array<{ call: SuspendedCall; refusal: AnswerRefusal }> = [];
    const coordinator = new ResumeCoordinator({
      toolkit: new Toolkit().register(refundTool(runs)),
      store,
      policy: MANAGERS_REFUND,
      observers: [{ onRefused: (call, refusal) => refusals.push({ call, refusal }) }],
    });
    try {
      const asked = pendingOf(await coordinator.execute('refund', { order: 'o-1', amount: 2500 })) as { id: string };
      const before = await store.get(asked.id);

      await expect(coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'clerk:carl' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
        reason: 'clerk:carl may not answer approval requests of refund',
      });
      await expect(coordinator.resolve({ id: asked.id, ok: true })).rejects.toMatchObject({ code: 'TOOLNEXUS_ANSWER_REFUSED' });
      await expect(coordinator.cancel(asked.id, 'no', { by: { id: 'clerk:carl' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
      });
      expect(await store.get(asked.id)).toEqual(before);
      expect(runs).toHaveLength(1);
      expect(refusals.map((r) => [r.refusal.by?.id, r.refusal.action, r.call.status])).toEqual([
        ['clerk:carl', 'answer', 'pending'],
        [undefined, 'answer', 'pending'],
        ['clerk:carl', 'cancel', 'pending'],
      ]);

      expect(await coordinator.actionsOf({ id: 'clerk:carl' }, before as SuspendedCall)).toEqual([]);
      expect(await coordinator.actionsOf({ id: 'manager:ann' }, before as SuspendedCall)).toEqual(['answer', 'cancel']);
      const result = await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'manager:ann' } });
      expect(result).toMatchObject({ isError: false });
      expect(await store.get(asked.id)).toMatchObject({ status: 'resolved', answeredBy: { id: 'manager:ann' } });
      // Refused even after settlement: a refused principal learns nothing of the outcome.
      await expect(coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'clerk:carl' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
      });
    } finally {
      await store.close();
    }
  });

  it('a policy that throws or answers nonsense refuses, and says so', async () => {
    const coordinator = new ResumeCoordinator({
      toolkit: new Toolkit().register(refundTool([])),
      store: new MemoryStore(),
      policy: ({ principal }) => {
        if (principal.id === 'x') throw new Error('directory down');
        return 'yes' as never;
      },
    });
    const asked = pendingOf(await coordinator.execute('refund', { order: 'o-1', amount: 5 })) as { id: string };
    await expect(coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'x' } })).rejects.toThrow(
      'the answer policy failed: directory down',
    );
    await expect(coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'y' } })).rejects.toThrow(
      'the answer policy gave no decision',
    );
    expect((await coordinator.get(asked.id))?.status).toBe('pending');
  });
});

describe('separation of duties', () => {
  it('records the run’s principal with its suspension; the requester may not approve it, but may decline it; another may approve', async () => {
    const runs: Array<{ replay: boolean; key: string | undefined }> = [];
    const toolkit = new Toolkit().register(refundTool(runs));
    const store = new SqliteStore({ filename: join(dir, 'sod.db') });
    const everyone = rulesPolicy([{ principals: '*' }]);
    const coordinator = new ResumeCoordinator({ toolkit, store, policy: everyone });
    const model = new FunctionModel((request) =>
      request.messages.some((m) => m.role === 'tool')
        ? 'done'
        : { toolCalls: [{ name: 'refund', arguments: { order: 'o-9', amount: 2500 } }] },
    );
    const runner = new AgentRunner({ model, toolkit, coordinator });
    try {
      const halted = await runner.run('refund o-9', { runId: 'run-sod', principal: { id: 'user:rita' } });
      const id = halted.pending?.id as string;
      expect((await store.get(id))?.requestedBy).toEqual({ id: 'user:rita' });

      await expect(answerAs(runner, { id, ok: true }, { by: { id: 'user:rita' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
        reason: 'user:rita requested this call and may not approve it (separation of duties)',
      });
      expect((await store.get(id))?.status).toBe('pending');
      expect(await coordinator.decide({ id: 'user:rita' }, (await store.get(id)) as SuspendedCall, { id, ok: false })).toBe('allow');
      const approved = await answerAs(runner, { id, ok: true }, { by: { id: 'manager:ann' } });
      expect(approved.run?.result?.status).toBe('done');
      expect(runs.filter((r) => r.replay)).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('holds in the inbox: the requester signed in there is refused their own approval (403), a colleague approves', async () => {
    const runs: Array<{ replay: boolean; key: string | undefined }> = [];
    const toolkit = new Toolkit().register(refundTool(runs));
    const coordinator = new ResumeCoordinator({ toolkit, policy: rulesPolicy([{ principals: '*' }]) });
    const model = new FunctionModel((request) =>
      request.messages.some((m) => m.role === 'tool')
        ? 'done'
        : { toolCalls: [{ name: 'refund', arguments: { order: 'o-4', amount: 40 } }] },
    );
    const runner = new AgentRunner({ model, toolkit, coordinator });
    const inbox = createInbox({
      runner,
      authorize: bearerTokens([
        { token: 'rita-token-0123456789abcdef', principal: { id: 'user:rita' } },
        { token: 'sam-token-0123456789abcdefg', principal: { id: 'user:sam' } },
      ]),
    });
    const http: Server = createServer((request, response) => inbox(request, response));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const approve = (token: string, id: string) =>
      fetch(`${base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true }),
      });
    try {
      const id = (await runner.run('refund o-4', { principal: { id: 'user:rita' } })).pending?.id as string;
      const own = await approve('rita-token-0123456789abcdef', id);
      expect(own.status).toBe(403);
      expect(((await own.json()) as { error: { message: string } }).error.message).toContain('separation of duties');
      expect(runs.filter((r) => r.replay)).toHaveLength(0);
      expect((await approve('sam-token-0123456789abcdefg', id)).status).toBe(200);
      expect(runs.filter((r) => r.replay)).toHaveLength(1);
    } finally {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      inbox.close();
    }
  });

  it('can be turned off', async () => {
    const toolkit = new Toolkit().register(refundTool([]));
    const coordinator = new ResumeCoordinator({ toolkit, policy: rulesPolicy([{ principals: '*' }]), separationOfDuties: false });
    const asked = pendingOf(await coordinator.execute('refund', { order: 'o', amount: 1 }, undefined, { principal: { id: 'u' } })) as {
      id: string;
    };
    await expect(coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'u' } })).resolves.toMatchObject({
      isError: false,
    });
  });
});

describe('ctx.idempotencyKey', () => {
  it('is the same on the first execution and the replay, and differs between calls', async () => {
    const runs: Array<{ replay: boolean; key: string | undefined }> = [];
    const toolkit = new Toolkit().register(refundTool(runs));
    const store = new SqliteStore({ filename: join(dir, 'key.db') });
    const model = new FunctionModel((request) =>
      request.messages.some((m) => m.role === 'tool')
        ? 'done'
        : {
            toolCalls: [
              { id: 'call_a', name: 'refund', arguments: { order: 'o-1', amount: 1 } },
              { id: 'call_b', name: 'refund', arguments: { order: 'o-2', amount: 2 } },
            ],
          },
    );
    const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
    try {
      const halted = await runner.run('refund both', { runId: 'run-key' });
      for (const request of halted.pendings ?? []) await runner.resume({ id: request.id, ok: true });
      const keys = runs.map((r) => `${r.replay ? 'replay' : 'first'} ${r.key}`);
      expect(runs).toHaveLength(4);
      const [a, b] = [runs[0]?.key, runs[1]?.key];
      expect(a).toMatch(/^tnx_[\w-]{43}$/);
      expect(a).not.toBe(b);
      expect(keys.sort()).toEqual([`first ${a}`, `first ${b}`, `replay ${a}`, `replay ${b}`].sort());
      // Shows neither id.
      expect(a).not.toContain('run-key');
    } finally {
      await store.close();
    }
  });
});

describe('ctx.idempotencyKey across a lease takeover', () => {
  it('is the key of the first execution when another resolver takes over a dead holder’s claim (an idempotent tool)', async () => {
    const runs: Array<{ replay: boolean; key: string | undefined }> = [];
    const clock = new FakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
    const store = new MemoryStore({ clock });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(refundTool(runs, true)), store, clock, leaseMs: 1_000 });
    const id = pendingOf(
      await coordinator.execute('refund', { order: 'o-5', amount: 5 }, undefined, { runId: 'run-t', callId: 'call-t' }),
    )!.id;
    // A resolver claimed it and died before its replay stored anything.
    expect(await store.claim(id, { id, ok: true }, 1_000)).toBeDefined();
    clock.advance(2_000);
    await coordinator.resolve({ id, ok: true });
    expect((await store.get(id))?.fence).toBe(2);
    expect(runs.map((r) => r.replay)).toEqual([false, true]);
    expect(runs[1]?.key).toBe(runs[0]?.key);
    expect(runs[0]?.key).toMatch(/^tnx_/);
  });
});

describe('a sub-agent’s request is judged by the tool that asked, three levels down', () => {
  let server: MockServer;
  beforeEach(async () => {
    server = await startMockServer(teamModel);
  });
  afterEach(async () => server.close());

  /** The clerk may answer for the wrapper tools (mid, leaf) and fetch; only the manager may approve `act`. */
  const policy = rulesPolicy([
    { principals: ['clerk'], tools: ['mid', 'leaf', 'fetch'] },
    { principals: ['manager'], tools: ['act'] },
  ]);

  it('through answerAs (resolve) and the inbox: the clerk is refused for the leaf’s act, nothing changes; the manager’s approval runs it once', async () => {
    const ledger = join(dir, 'ledger.log');
    const { top, store } = buildTeam(join(dir, 'team.db'), ledger, server.url, policy);
    const inbox = createInbox({
      runner: top,
      authorize: bearerTokens([
        { token: 'clerk-token-0123456789abcdef', principal: { id: 'clerk' } },
        { token: 'manager-token-0123456789abcdef', principal: { id: 'manager' } },
      ]),
    });
    const http: Server = createServer((request, response) => inbox(request, response));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    try {
      const halted = await top.run('Go deep', { runId: 'top-who' });
      const surfaced = halted.pending?.id as string;
      expect(halted.pending?.data?.subAgent).toMatchObject({ path: ['mid', 'leaf'] });
      const rows = async () => (await store.list({})).map((c) => [c.tool, c.status, c.answeredBy?.id]);
      const before = await rows();
      expect(before).toEqual([
        ['act', 'pending', undefined],
        ['leaf', 'pending', undefined],
        ['mid', 'pending', undefined],
      ]);

      await expect(answerAs(top, { id: surfaced, ok: true }, { by: { id: 'clerk' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
        reason: 'clerk may not answer approval requests of act',
      });
      const viaInbox = await fetch(`${base}/api/suspensions/${encodeURIComponent(surfaced)}/answer`, {
        method: 'POST',
        headers: { authorization: 'Bearer clerk-token-0123456789abcdef', 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true }),
      });
      expect(viaInbox.status).toBe(403);
      expect(((await viaInbox.json()) as { error: { code: string } }).error.code).toBe('TOOLNEXUS_ANSWER_REFUSED');
      const shown = await fetch(`${base}/api/suspensions/${encodeURIComponent(surfaced)}`, {
        headers: { authorization: 'Bearer clerk-token-0123456789abcdef' },
      });
      expect(((await shown.json()) as { actions: string[] }).actions).toEqual([]);
      expect(await rows()).toEqual(before);
      expect(ledgerOf(ledger)).toEqual(['fetch leaf leaf_fetch']);

      const viaManager = await fetch(`${base}/api/suspensions/${encodeURIComponent(surfaced)}/answer`, {
        method: 'POST',
        headers: { authorization: 'Bearer manager-token-0123456789abcdef', 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true }),
      });
      expect(viaManager.status).toBe(200);
      expect(((await viaManager.json()) as { run: { status: RunResult['status'] } }).run.status).toBe('done');
      expect(ledgerOf(ledger)).toEqual(['act leaf leaf_act', 'fetch leaf leaf_fetch']);
      expect(readFileSync(ledger, 'utf8')).toMatch(/^act leaf leaf_act \d+ tnx_/m);
    } finally {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      inbox.close();
      await store.close();
    }
  });

  it('a request whose sub-agent data points at a call that is not its child is refused', async () => {
    const ledger = join(dir, 'ledger.log');
    const { top, store } = buildTeam(join(dir, 'forged.db'), ledger, server.url, rulesPolicy([{ principals: '*' }]));
    try {
      const halted = await top.run('Go deep', { runId: 'top-forged' });
      const surfaced = (await store.get(halted.pending?.id as string)) as SuspendedCall;
      const forged: SuspendedCall = {
        ...surfaced,
        request: { ...surfaced.request, data: { ...surfaced.request.data, subAgent: { path: ['x'], runId: 'elsewhere', requestId: 'y' } } },
      };
      expect(await top.coordinator.decide({ id: 'anyone' }, forged, { id: surfaced.request.id, ok: true })).toEqual({
        deny: "the request names a sub-agent run (elsewhere) that is not its call's (top-forged/call_mid)",
      });
    } finally {
      await store.close();
    }
  });
});
