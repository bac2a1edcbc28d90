/**
 * Quorum (docs/who-may-answer.md, "Quorum"): an approval that needs M of N principals. Each
 * approval before the M-th is a recorded signature (the call still waits); a principal counts
 * once; the M-th claims and replays once, and the replay sees every signer; a principal not
 * among `from` is refused; a decline by an eligible principal refuses the call.
 */
import 'reflect-metadata';
import { IsInt, Min } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, pendingOf, success, type ToolContext } from 'toolnexus-ts';
import { AgentRunner, answerAs } from 'toolnexus-ts/agents';
import { FunctionModel } from 'toolnexus-ts/models';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';

class WireArgs {
  @IsInt()
  @Min(1)
  cents!: number;
}

const FINANCE = ['finance:a', 'finance:b', 'finance:c'];

function wireTool(runs: string[][]) {
  @Tool({ name: 'wire', description: 'Wires money', args: WireArgs, approval: { prompt: 'Wire?', quorum: { of: 2, from: FINANCE } } })
  class WireTool {
    run(args: WireArgs, ctx?: ToolContext) {
      runs.push((ctx?.approval?.signatures ?? []).map((s) => s.by.id));
      return success({ wired: args.cents });
    }
  }
  return new WireTool();
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-quorum-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('2 of 3 through the coordinator: the first approval is a signature, a repeat counts once, the second runs it once with both signers', async () => {
  const runs: string[][] = [];
  const store = new SqliteStore({ filename: join(dir, 'q.db') });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(runs)), store });
  try {
    const asked = pendingOf(await coordinator.execute('wire', { cents: 900 }))!;
    expect(asked.data?.quorum).toEqual({ of: 2, from: FINANCE });
    const first = await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:a' }, comment: 'ok' });
    expect(pendingOf(first)?.id).toBe(asked.id);
    expect(first.output).toBe('Wire? (approved by 1 of the 2 needed)');
    await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:a' } });
    expect((await store.get(asked.id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:a']);
    await expect(coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'clerk:z' } })).rejects.toMatchObject({
      code: 'TOOLNEXUS_ANSWER_REFUSED',
    });
    expect(runs).toEqual([]);
    const done = await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:b' } });
    expect(done).toEqual({ output: '{"wired":900}', isError: false });
    expect(runs).toEqual([['finance:a', 'finance:b']]);
    expect(await store.get(asked.id)).toMatchObject({ status: 'resolved', answeredBy: { id: 'finance:b' } });
    // A late third approval gets the stored outcome; nothing runs again.
    expect(await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:c' } })).toEqual(done);
    expect(runs).toHaveLength(1);
  } finally {
    await store.close();
  }
});

it('a decline by one eligible principal refuses the call', async () => {
  const runs: string[][] = [];
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(runs)) });
  const asked = pendingOf(await coordinator.execute('wire', { cents: 5 }))!;
  await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:a' } });
  const declined = await coordinator.resolve({ id: asked.id, ok: false, reason: 'declined' }, undefined, { by: { id: 'finance:c' } });
  expect(declined.isError).toBe(true);
  expect((await coordinator.get(asked.id))?.status).toBe('declined');
  expect(runs).toEqual([]);
});

function wireTakingTwoDeclines(runs: string[][]) {
  @Tool({
    name: 'wire',
    description: 'Wires money',
    args: WireArgs,
    approval: { prompt: 'Wire?', quorum: { of: 2, from: FINANCE, declines: 2 } },
  })
  class WireTool {
    run(args: WireArgs, ctx?: ToolContext) {
      runs.push((ctx?.approval?.signatures ?? []).map((s) => `${s.by.id}${s.declined ? ' declined' : ''}`));
      return success({ wired: args.cents });
    }
  }
  return new WireTool();
}

it('quorum.declines 2: a first decline is recorded and it waits, approvals do not count it, and two declines settle it declined', async () => {
  const runs: string[][] = [];
  const store = new SqliteStore({ filename: join(dir, 'declines.db') });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTakingTwoDeclines(runs)), store });
  try {
    // Declined by one, approved by two: it runs once, its replay sees the decline beside the approvals.
    const ran = pendingOf(await coordinator.execute('wire', { cents: 300 }))!;
    expect(ran.data?.quorum).toEqual({ of: 2, from: FINANCE, declines: 2 });
    const waiting = await coordinator.resolve({ id: ran.id, ok: false, reason: 'declined' }, undefined, { by: { id: 'finance:a' } });
    expect(pendingOf(waiting)?.id).toBe(ran.id);
    expect(waiting.output).toBe('Wire? (declined by 1 of the 2 needed to refuse it)');
    const recorded = (await store.get(ran.id))?.signatures ?? [];
    expect(recorded.map(({ by, declined }) => ({ by, declined }))).toEqual([{ by: { id: 'finance:a' }, declined: true }]);
    expect(Number.isNaN(Date.parse(recorded[0]?.at ?? ''))).toBe(false);
    const one = await coordinator.resolve({ id: ran.id, ok: true }, undefined, { by: { id: 'finance:b' } });
    expect(one.output).toBe('Wire? (approved by 1 of the 2 needed)');
    // A principal's first word counts: finance:a's approval after its decline adds nothing.
    await coordinator.resolve({ id: ran.id, ok: true }, undefined, { by: { id: 'finance:a' } });
    expect((await store.get(ran.id))?.status).toBe('pending');
    expect(runs).toEqual([]);
    await coordinator.resolve({ id: ran.id, ok: true }, undefined, { by: { id: 'finance:c' } });
    expect(runs).toEqual([['finance:a declined', 'finance:b', 'finance:c']]);

    // Two distinct declines settle the next one declined; nothing runs.
    const refused = pendingOf(await coordinator.execute('wire', { cents: 400 }))!;
    await coordinator.resolve({ id: refused.id, ok: false, reason: 'declined' }, undefined, { by: { id: 'finance:b' } });
    await coordinator.resolve({ id: refused.id, ok: false, reason: 'declined' }, undefined, { by: { id: 'finance:b' } });
    expect((await store.get(refused.id))?.status).toBe('pending');
    const declined = await coordinator.resolve({ id: refused.id, ok: false, reason: 'declined' }, undefined, { by: { id: 'finance:c' } });
    expect(declined.isError).toBe(true);
    expect(await store.get(refused.id)).toMatchObject({ status: 'declined', answeredBy: { id: 'finance:c' } });
    expect(runs).toHaveLength(1);
  } finally {
    await store.close();
  }
});

it('refuses a malformed quorum when the tool is registered', () => {
  for (const quorum of [{ of: 2, declines: 0 }, { of: 2, declines: 1.5 }, { of: 1 }]) {
    @Tool({ name: 'bad', description: 'Bad', args: WireArgs, approval: { quorum } })
    class Bad {
      run() {
        return success('never');
      }
    }
    expect(() => new Toolkit().register(new Bad())).toThrow(/approval\.quorum\.(declines|of) must be a whole number/);
  }
});

it('through a halted agent run and answerAs: the run stays halted after one signature and finishes once after the second', async () => {
  const runs: string[][] = [];
  const toolkit = new Toolkit().register(wireTool(runs));
  const store = new SqliteStore({ filename: join(dir, 'run.db') });
  const model = new FunctionModel((request) =>
    request.messages.some((m) => m.role === 'tool') ? 'wired' : { toolCalls: [{ name: 'wire', arguments: { cents: 70 } }] },
  );
  const runner = new AgentRunner({ model, toolkit, coordinator: new ResumeCoordinator({ toolkit, store }) });
  try {
    const halted = await runner.run('wire 70', { runId: 'run-q' });
    const id = halted.pending?.id as string;
    const one = await answerAs(runner, { id, ok: true }, { by: { id: 'finance:c' } });
    expect(one.won).toBe(true);
    expect(one.call.status).toBe('pending');
    expect(one.run?.result?.status).toBe('halted');
    const two = await answerAs(runner, { id, ok: true }, { by: { id: 'finance:a' } });
    expect(two.run?.result?.status).toBe('done');
    expect(runs).toEqual([['finance:c', 'finance:a']]);
  } finally {
    await store.close();
  }
});

it('through the inbox: each approval is a signature, the view shows the progress and who signed; the second runs it', async () => {
  const runs: string[][] = [];
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(runs)) });
  const inbox = createInbox({
    coordinator,
    authorize: bearerTokens([
      { token: 'finance-a-token-0123456789', principal: { id: 'finance:a', name: 'Ann' } },
      { token: 'finance-b-token-0123456789', principal: { id: 'finance:b' } },
    ]),
  });
  const server: Server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const approve = async (token: string) =>
    (await fetch(`${base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ok: true }),
    }).then((r) => r.json())) as { suspension: { status: string; quorum?: { of: number; signatures: Array<{ by: { id: string } }> } } };
  const id = pendingOf(await coordinator.execute('wire', { cents: 40 }))!.id;
  try {
    const first = await approve('finance-a-token-0123456789');
    expect(first.suspension.status).toBe('pending');
    expect(first.suspension.quorum).toMatchObject({ of: 2, signatures: [{ by: { id: 'finance:a', name: 'Ann' } }] });
    const second = await approve('finance-b-token-0123456789');
    expect(second.suspension.status).toBe('resolved');
    expect(runs).toEqual([['finance:a', 'finance:b']]);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    inbox.close();
  }
});
