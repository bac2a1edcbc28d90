/**
 * Standing grants (docs/who-may-answer.md, "Grants"): a manager's grant approves the next
 * refund a customer's run asks for, without asking, audited as the manager with the grant's
 * id; revoked, the one after is asked again. A grant lapses at `until` (fake clock). A grant by
 * the requester themselves is refused by separation of duties, so a person is asked.
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, success, type ToolContext } from 'toolnexus-ts';
import { AgentRunner } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { MemoryStore } from 'toolnexus-ts/memory';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator, rulesPolicy, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { FakeClock } from '../fixtures/fake-clock';

class RefundArgs {
  @IsString()
  order!: string;
}

const RITA = { id: 'customer:rita' };
const MANAGER = { id: 'manager:ann' };

function setup(store: SuspensionStore & RunStore, clock?: FakeClock) {
  const ran: Array<{ order: string; by: string | undefined }> = [];
  @Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: true })
  class RefundTool {
    run(args: RefundArgs, ctx?: ToolContext) {
      ran.push({ order: args.order, by: ctx?.approval?.answeredBy?.id });
      return success(`refunded ${args.order}`);
    }
  }
  const toolkit = new Toolkit().register(RefundTool);
  const coordinator = new ResumeCoordinator({
    toolkit,
    store,
    policy: rulesPolicy([{ principals: [MANAGER.id, RITA.id] }]),
    ...(clock ? { clock } : {}),
  });
  const model = new FunctionModel((request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return 'done';
    const order = /refund (\S+)/.exec(last?.role === 'user' ? last.content : '')?.[1] ?? 'none';
    return { toolCalls: [{ name: 'refund', arguments: { order } }] };
  });
  return { ran, coordinator, runner: new AgentRunner({ model, toolkit, coordinator }) };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-grants-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('approves the next call without asking, audited with the grant; revoked, the one after is asked', async () => {
  const store = new SqliteStore({ filename: join(dir, 'grants.db') });
  const { ran, coordinator, runner } = setup(store);
  try {
    const grant = await coordinator.grant({ by: MANAGER, tool: 'refund', scope: 'principal', subject: RITA.id });
    const first = await runner.run('refund o-1', { principal: RITA });
    expect(first.status).toBe('done');
    expect(ran).toEqual([{ order: 'o-1', by: MANAGER.id }]);
    const [settled] = await coordinator.history({ tool: 'refund' });
    expect(settled).toMatchObject({ status: 'resolved', answeredBy: MANAGER, comment: `standing grant ${grant.id}`, requestedBy: RITA });

    // Another customer's call is not covered.
    expect((await runner.run('refund o-2', { principal: { id: 'customer:sam' } })).status).toBe('halted');

    expect(await coordinator.revoke(grant.id)).toBe(true);
    expect((await runner.run('refund o-3', { principal: RITA })).status).toBe('halted');
    expect(ran).toHaveLength(1);
    expect((await coordinator.grants()).map((g) => [g.id, g.revokedAt !== undefined])).toEqual([[grant.id, true]]);

    // The inbox's JSON API lists them for anyone signed in.
    const inbox = createInbox({ runner, authorize: bearerTokens([{ token: 'viewer-token-0123456789ab', principal: { id: 'viewer' } }]) });
    const server: Server = createServer((request, response) => inbox(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/grants`, {
        headers: { authorization: 'Bearer viewer-token-0123456789ab' },
      });
      const body = (await response.json()) as { grants: Array<{ id: string; by: { id: string }; revokedAt?: string }> };
      expect(body.grants).toEqual([expect.objectContaining({ id: grant.id, by: MANAGER, revokedAt: expect.any(String) as string })]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      inbox.close();
    }
  } finally {
    await store.close();
  }
});

it('lapses at until, by the coordinator’s clock; a run-scoped grant covers only its run', async () => {
  const clock = new FakeClock(Date.parse('2026-12-04T09:00:00.000Z'));
  const { ran, coordinator, runner } = setup(new MemoryStore({ clock }), clock);
  await coordinator.grant({ by: MANAGER, tool: 'refund', scope: 'principal', subject: RITA.id, until: new Date(clock.now() + 3_600_000) });
  await coordinator.grant({ by: MANAGER, tool: 'refund', scope: 'run', subject: 'run-covered' });
  expect((await runner.run('refund o-1', { principal: RITA })).status).toBe('done');
  clock.advance(2 * 3_600_000);
  expect((await runner.run('refund o-2', { principal: RITA })).status).toBe('halted');
  expect((await runner.run('refund o-3', { principal: RITA, runId: 'run-covered' })).status).toBe('done');
  expect(ran.map((r) => r.order)).toEqual(['o-1', 'o-3']);
  await expect(
    coordinator.grant({ by: MANAGER, tool: 'refund', scope: 'run', subject: 'x', until: '2020-01-01T00:00:00Z' }),
  ).rejects.toThrow('grant: until must be an instant in the future');
});

it('a grant by the requester themselves does not approve their own call: a person is asked', async () => {
  const { ran, coordinator, runner } = setup(new MemoryStore());
  await coordinator.grant({ by: RITA, tool: 'refund', scope: 'principal', subject: RITA.id });
  expect((await runner.run('refund o-9', { principal: RITA })).status).toBe('halted');
  expect(ran).toEqual([]);
});
