/**
 * Issue 45, "Declared approvals that depend on the call": `@Tool({ approval })` as a function
 * of the validated arguments (and the context) returning the approval or `false`. "Above 10,000
 * needs 2 of 3 finance approvers": 9,000 needs one approver, 12,000 needs two, both signers on
 * `ctx.approval.signatures`, through the coordinator on a real SQLite file and through the
 * inbox's JSON API; what was asked is what the binding keeps and the policy judges; an edit that
 * crosses the line is asked again; a self-asked quorum's signers on `ctx.approval`; escalation on
 * a quorum lets the escalation principals sign once due (docs/who-may-answer.md).
 */
import 'reflect-metadata';
import { IsInt, Min } from 'class-validator';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tool, Toolkit, pending, pendingOf, success, answerFor, type ToolContext } from 'toolnexus-ts';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { httpTool } from 'toolnexus-ts/openapi';
import { ResumeCoordinator, SuspensionMismatchError, rulesPolicy, type AnswerPolicy } from 'toolnexus-ts/suspension';

const FINANCE = ['finance:a', 'finance:b', 'finance:c'];

class WireArgs {
  @IsInt()
  @Min(1)
  amount!: number;
}

interface Ran {
  amount: number;
  approvedBy?: string;
  signers: string[];
}

/** `wire`: above 10,000 needs 2 of the 3 finance approvers; up to it, one approver, who may edit the amount. */
function wireTool(ran: Ran[]) {
  @Tool({
    name: 'wire',
    description: 'Wires money',
    args: WireArgs,
    approval: (args: WireArgs) =>
      args.amount > 10_000
        ? { prompt: `Wire ${args.amount}? (2 of 3 finance)`, quorum: { of: 2, from: FINANCE } }
        : { prompt: `Wire ${args.amount}?`, editable: true },
  })
  class WireTool {
    run(args: WireArgs, ctx?: ToolContext) {
      ran.push({
        amount: args.amount,
        ...(ctx?.approval?.answeredBy ? { approvedBy: ctx.approval.answeredBy.id } : {}),
        signers: (ctx?.approval?.signatures ?? []).map((s) => s.by.id),
      });
      return success({ wired: args.amount });
    }
  }
  return new WireTool();
}

/** Finance may approve; what the policy saw of each request's quorum is recorded. */
function financePolicy(seen: unknown[]): AnswerPolicy {
  const rules = rulesPolicy([{ principals: [...FINANCE, 'director:d'], kinds: ['approval'] }]);
  return (question) => {
    seen.push(question.call.request.data?.quorum ?? 'none');
    return rules(question);
  };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-approval-by-args-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it('9,000 needs one approver and 12,000 needs two, both signers on ctx.approval.signatures (coordinator, SQLite file)', async () => {
  const ran: Ran[] = [];
  const seen: unknown[] = [];
  const store = new SqliteStore({ filename: join(dir, 'wire.db') });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(ran)), store, policy: financePolicy(seen) });
  try {
    const small = pendingOf(await coordinator.execute('wire', { amount: 9_000 }))!;
    expect(small).toMatchObject({ kind: 'approval', prompt: 'Wire 9000?', data: { editable: true } });
    expect(small.data?.quorum).toBeUndefined();
    expect(await coordinator.resolve({ id: small.id, ok: true }, undefined, { by: { id: 'finance:c' } })).toEqual({
      output: '{"wired":9000}',
      isError: false,
    });
    expect(ran).toEqual([{ amount: 9_000, approvedBy: 'finance:c', signers: [] }]);

    const large = pendingOf(await coordinator.execute('wire', { amount: 12_000 }))!;
    expect(large).toMatchObject({ prompt: 'Wire 12000? (2 of 3 finance)', data: { quorum: { of: 2, from: FINANCE } } });
    expect(large.data?.editable).toBeUndefined();
    // What was asked is what is stored and judged.
    expect((await store.get(large.id))?.request.data?.quorum).toEqual({ of: 2, from: FINANCE });
    const first = await coordinator.resolve({ id: large.id, ok: true }, undefined, { by: { id: 'finance:a' } });
    expect(first.output).toBe('Wire 12000? (2 of 3 finance) (approved by 1 of the 2 needed)');
    expect(ran).toHaveLength(1);
    await expect(coordinator.resolve({ id: large.id, ok: true }, undefined, { by: { id: 'clerk:z' } })).rejects.toMatchObject({
      code: 'TOOLNEXUS_ANSWER_REFUSED',
    });
    await coordinator.resolve({ id: large.id, ok: true }, undefined, { by: { id: 'finance:b' } });
    expect(ran[1]).toEqual({ amount: 12_000, approvedBy: 'finance:b', signers: ['finance:a', 'finance:b'] });
    expect(seen).toContainEqual({ of: 2, from: FINANCE });
  } finally {
    await store.close();
  }
});

it('the binding keeps the quorum asked: a row whose quorum was edited away in the file is refused, never run', async () => {
  const ran: Ran[] = [];
  const file = join(dir, 'edited.db');
  const store = new SqliteStore({ filename: file });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(ran)), store });
  try {
    const large = pendingOf(await coordinator.execute('wire', { amount: 12_000 }))!;
    const sqlite = new Database(file);
    const { request } = sqlite.prepare('SELECT request FROM suspensions WHERE id = ?').get(large.id) as { request: string };
    const edited = JSON.parse(request) as { data: Record<string, unknown> };
    delete edited.data.quorum;
    sqlite.prepare('UPDATE suspensions SET request = ? WHERE id = ?').run(JSON.stringify(edited), large.id);
    sqlite.close();
    await expect(coordinator.resolve({ id: large.id, ok: true }, undefined, { by: { id: 'finance:a' } })).rejects.toBeInstanceOf(
      SuspensionMismatchError,
    );
    expect(ran).toEqual([]);
  } finally {
    await store.close();
  }
});

it('an approver who edits 9,000 to 12,000 does not run it alone: the approval the new amount needs is asked next', async () => {
  const ran: Ran[] = [];
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(ran)), policy: financePolicy([]) });
  const small = pendingOf(await coordinator.execute('wire', { amount: 9_000 }))!;
  const edited = await coordinator.resolve({ id: small.id, ok: true, args: { amount: 12_000 } }, undefined, { by: { id: 'finance:a' } });
  const next = pendingOf(edited)!;
  expect(next).toMatchObject({ prompt: 'Wire 12000? (2 of 3 finance)', data: { quorum: { of: 2, from: FINANCE } } });
  expect(ran).toEqual([]);
  await coordinator.resolve({ id: next.id, ok: true }, undefined, { by: { id: 'finance:a' } });
  await coordinator.resolve({ id: next.id, ok: true }, undefined, { by: { id: 'finance:c' } });
  expect(ran).toEqual([{ amount: 12_000, approvedBy: 'finance:c', signers: ['finance:a', 'finance:c'] }]);
});

it('false runs at once; a function that throws or returns a malformed approval fails the call closed, never running it', async () => {
  const ran: string[] = [];
  const tool = (name: string, approval: (args: WireArgs) => unknown) => {
    @Tool({ name, description: name, args: WireArgs, approval: approval as (args: WireArgs) => boolean })
    class Some {
      run(args: WireArgs) {
        ran.push(`${name} ${args.amount}`);
        return success('ran');
      }
    }
    return new Some();
  };
  const toolkit = new Toolkit().register(
    tool('free', () => false),
    tool('asks', () => true),
    tool('throws', () => {
      throw new Error('directory down');
    }),
    tool('one', () => ({ quorum: { of: 1 } })),
    tool('nonsense', () => 42),
  );
  expect(await toolkit.execute('free', { amount: 1 })).toEqual({ output: 'ran', isError: false });
  expect(pendingOf(await toolkit.execute('asks', { amount: 2 }))?.prompt).toBe('Approve asks {"amount":2}?');
  expect(await toolkit.execute('throws', { amount: 3 })).toEqual({
    output: 'the approval of throws failed: directory down',
    isError: true,
  });
  expect((await toolkit.execute('one', { amount: 4 })).output).toBe(
    'the approval of one failed: approval.quorum.of must be a whole number of 2 or more',
  );
  expect((await toolkit.execute('nonsense', { amount: 5 })).output).toMatch(/the approval of nonsense failed: it returned 42/);
  expect(ran).toEqual(['free 1']);
});

it('a quorum the tool asks itself puts every signer on ctx.approval.signatures', async () => {
  const signers: string[][] = [];
  @Tool({ name: 'payout', description: 'Pays out', args: WireArgs })
  class PayoutTool {
    run(args: WireArgs, ctx?: ToolContext) {
      if (!answerFor(ctx, 'approval')) return pending({ kind: 'approval', prompt: 'Pay out?', data: { quorum: { of: 2, from: FINANCE } } });
      signers.push((ctx?.approval?.signatures ?? []).map((s) => s.by.id));
      return success({ paid: args.amount });
    }
  }
  const store = new SqliteStore({ filename: join(dir, 'self.db') });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(new PayoutTool()), store });
  try {
    const asked = pendingOf(await coordinator.execute('payout', { amount: 500 }))!;
    await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:b' } });
    await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:c' } });
    expect(signers).toEqual([['finance:b', 'finance:c']]);
  } finally {
    await store.close();
  }
});

describe('escalation on a quorum: once due, its principals may sign (each counts once), never decide alone', () => {
  function escalatingTool(ran: Ran[], afterMs: number) {
    @Tool({
      name: 'wire',
      description: 'Wires money',
      args: WireArgs,
      approval: () => ({ quorum: { of: 2, from: FINANCE }, escalate: { afterMs, to: ['director:d'] } }),
    })
    class WireTool {
      run(args: WireArgs, ctx?: ToolContext) {
        ran.push({ amount: args.amount, signers: (ctx?.approval?.signatures ?? []).map((s) => s.by.id) });
        return success({ wired: args.amount });
      }
    }
    return new WireTool();
  }

  it('before it is due the director is refused; once due the director signs, and one finance approver completes it', async () => {
    const ran: Ran[] = [];
    const store = new SqliteStore({ filename: join(dir, 'escalate.db') });
    const toolkit = new Toolkit().register(escalatingTool(ran, 3_600_000));
    const policy = rulesPolicy([{ principals: FINANCE, kinds: ['approval'] }]);
    const coordinator = new ResumeCoordinator({ toolkit, store, policy });
    // The same tool escalating at once (afterMs 0): due by the store's clock as soon as it is asked.
    const due = new ResumeCoordinator({ toolkit: new Toolkit().register(escalatingTool(ran, 0)), store, policy });
    try {
      const later = pendingOf(await coordinator.execute('wire', { amount: 20_000 }))!;
      await expect(coordinator.resolve({ id: later.id, ok: true }, undefined, { by: { id: 'director:d' } })).rejects.toMatchObject({
        code: 'TOOLNEXUS_ANSWER_REFUSED',
        reason: 'director:d is not one of the principals who may sign this approval',
      });
      const director = { id: 'director:d' };
      expect(await coordinator.actionsOf(director, (await store.get(later.id))!)).toEqual([]);
      const now = pendingOf(await due.execute('wire', { amount: 30_000 }))!;
      // What the inbox and the chat offer: once due, the director may sign.
      expect(await due.actionsOf(director, (await store.get(now.id))!)).toContain('answer');
      const signed = await due.resolve({ id: now.id, ok: true }, undefined, { by: { id: 'director:d' } });
      expect(signed.output).toMatch(/approved by 1 of the 2 needed/);
      await due.resolve({ id: now.id, ok: true }, undefined, { by: { id: 'director:d' } });
      expect(ran).toEqual([]);
      await due.resolve({ id: now.id, ok: true }, undefined, { by: { id: 'finance:b' } });
      expect(ran).toEqual([{ amount: 30_000, signers: ['director:d', 'finance:b'] }]);
    } finally {
      await store.close();
    }
  });
});

const TOKENS = [
  { token: 'finance-a-token-0123456789', principal: { id: 'finance:a', name: 'Ann' } },
  { token: 'finance-b-token-0123456789', principal: { id: 'finance:b' } },
  { token: 'director-d-token-012345678', principal: { id: 'director:d' } },
];

/** The inbox over `coordinator` on 127.0.0.1; `answer` POSTs an approval as the token's principal. */
async function inboxOver(coordinator: ResumeCoordinator) {
  const inbox = createInbox({ coordinator, authorize: bearerTokens(TOKENS) });
  const server: Server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    answer: async (id: string, token: string) => {
      const response = await fetch(`${base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true }),
      });
      const body = (await response.json()) as {
        suspension?: {
          status: string;
          quorum?: { of: number; signatures: Array<{ by: { id: string } }> };
          escalation?: { escalated?: boolean };
        };
      };
      return { status: response.status, suspension: body.suspension };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      inbox.close();
    },
  };
}

it('through the inbox JSON API: 9,000 is settled by one approval, 12,000 by the second signature, both signers seen', async () => {
  const ran: Ran[] = [];
  const store = new SqliteStore({ filename: join(dir, 'inbox.db') });
  const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(wireTool(ran)), store, policy: financePolicy([]) });
  const inbox = await inboxOver(coordinator);
  try {
    const small = pendingOf(await coordinator.execute('wire', { amount: 9_000 }))!;
    expect(await inbox.answer(small.id, TOKENS[0]!.token)).toMatchObject({ status: 200, suspension: { status: 'resolved' } });
    const large = pendingOf(await coordinator.execute('wire', { amount: 12_000 }))!;
    const first = await inbox.answer(large.id, TOKENS[0]!.token);
    expect(first).toMatchObject({ status: 200, suspension: { status: 'pending', quorum: { of: 2 } } });
    expect(await inbox.answer(large.id, TOKENS[1]!.token)).toMatchObject({ status: 200, suspension: { status: 'resolved' } });
    expect(ran).toEqual([
      { amount: 9_000, approvedBy: 'finance:a', signers: [] },
      { amount: 12_000, approvedBy: 'finance:b', signers: ['finance:a', 'finance:b'] },
    ]);
  } finally {
    await inbox.close();
    await store.close();
  }
});

it('through the inbox JSON API: the director of an escalated quorum signs (200, no longer 403), and one finance approver completes it', async () => {
  const ran: Ran[] = [];
  const store = new SqliteStore({ filename: join(dir, 'inbox-escalated.db') });
  @Tool({
    name: 'wire',
    description: 'Wires money',
    args: WireArgs,
    approval: { quorum: { of: 2, from: FINANCE }, escalate: { afterMs: 0, to: ['director:d'] } },
  })
  class EscalatedWire {
    run(args: WireArgs, ctx?: ToolContext) {
      ran.push({ amount: args.amount, signers: (ctx?.approval?.signatures ?? []).map((s) => s.by.id) });
      return success({ wired: args.amount });
    }
  }
  const coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(new EscalatedWire()),
    store,
    policy: rulesPolicy([{ principals: FINANCE, kinds: ['approval'] }]),
  });
  const inbox = await inboxOver(coordinator);
  try {
    const asked = pendingOf(await coordinator.execute('wire', { amount: 50_000 }))!;
    const director = TOKENS[2]!.token;
    const signed = await inbox.answer(asked.id, director);
    expect(signed).toMatchObject({ status: 200, suspension: { status: 'pending', escalation: { escalated: true } } });
    expect(signed.suspension?.quorum?.signatures.map((s) => s.by.id)).toEqual(['director:d']);
    expect(ran).toEqual([]);
    expect(await inbox.answer(asked.id, TOKENS[0]!.token)).toMatchObject({ status: 200, suspension: { status: 'resolved' } });
    expect(ran).toEqual([{ amount: 50_000, signers: ['director:d', 'finance:a'] }]);
  } finally {
    await inbox.close();
    await store.close();
  }
});

it('an HTTP tool takes the same function: a small payment is sent at once, a large one waits for 2 of 3', async () => {
  const sent: string[] = [];
  const api: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      sent.push(body);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"paid":true}');
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/payments`;
  try {
    const pay = httpTool({
      name: 'pay',
      description: 'Pays',
      method: 'POST',
      url,
      args: WireArgs,
      approval: (args: WireArgs) => (args.amount > 10_000 ? { quorum: { of: 2, from: FINANCE } } : false),
    });
    const coordinator = new ResumeCoordinator({ toolkit: new Toolkit().register(pay) });
    expect(await coordinator.execute('pay', { amount: 50 })).toMatchObject({ isError: false });
    const asked = pendingOf(await coordinator.execute('pay', { amount: 20_000 }))!;
    expect(asked.data?.quorum).toEqual({ of: 2, from: FINANCE });
    await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:a' } });
    expect(sent).toEqual(['{"amount":50}']);
    await coordinator.resolve({ id: asked.id, ok: true }, undefined, { by: { id: 'finance:b' } });
    expect(sent).toEqual(['{"amount":50}', '{"amount":20000}']);
  } finally {
    api.closeAllConnections();
    await new Promise<void>((resolve) => api.close(() => resolve()));
  }
});
