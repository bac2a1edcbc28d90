/**
 * "Answer as a principal" (src/runner/answer-as.ts; docs/design.md, "the path of an answer")
 * from every front end, on PostgreSQL with two replicas (two runners over one database, one
 * serving the inbox) and the CLI as a child process: a login-then-approval chain answered
 * link by link from the CLI and the inbox in every order finishes its run once and refunds
 * once, with no 500; the CLI continues a run when its `--tools` module exports
 * `createRunner`, and says plainly that it did not when it has a coordinator alone; and the
 * tool sees who approved (`answeredBy`) the same from the inbox, the CLI, MCP and the plain API.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { PostgresStore } from 'toolnexus-ts/postgres';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { serveMcp } from 'toolnexus-ts/mcp';
import { answerAs, type AgentRunner, type RunResult } from 'toolnexus-ts/agents';
import { startChild, type Exit } from '../fixtures/children';
import { answerRunner, createCoordinator } from '../fixtures/answer-tools';
import { dropSchema, postgresUrl, uniqueSchema } from '../fixtures/pg/server';

const TOOLS = join(__dirname, '..', 'fixtures', 'answer-tools.ts');
const CLI = join('..', '..', 'src', 'cli', 'main.ts');
const ALICE = 'alice-token-0123456789abcdef';

let url: string;
let schema: string;
let dir: string;
let ledger: string;
let runs = 0;
beforeAll(async () => {
  url = await postgresUrl();
  schema = uniqueSchema('answer');
  dir = mkdtempSync(join(process.env.TMPDIR ?? '/tmp', 'toolnexus-answer-'));
});
afterAll(async () => {
  await dropSchema(url, schema);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  ledger = join(dir, `ledger-${++runs}.txt`);
  process.env.ANSWER_LEDGER = ledger;
});
afterEach(() => {
  delete process.env.ANSWER_LEDGER;
});

const lines = (prefix: string) =>
  (existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n') : []).filter((line) => line.startsWith(prefix));

interface Replica {
  store: PostgresStore;
  runner: AgentRunner;
  base: string;
  close(): Promise<void>;
}

/** One replica of the service: a runner over the shared database, serving the inbox on 127.0.0.1. */
async function replica(): Promise<Replica> {
  const store = new PostgresStore({ connectionString: url, schema });
  const runner = answerRunner(store);
  const inbox = createInbox({ runner, authorize: bearerTokens([{ token: ALICE, principal: { id: 'alice', name: 'Alice' } }]) });
  const server = createServer(inbox);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    store,
    runner,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      inbox.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await store.close();
    },
  };
}

let one: Replica;
let two: Replica;
beforeAll(async () => {
  [one, two] = await Promise.all([replica(), replica()]);
});
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
});

/** Approves through the inbox of `on` as Alice. */
async function fromInbox(on: Replica, id: string): Promise<{ status: number; body: { run?: { status: string }; error?: unknown } }> {
  const response = await fetch(`${on.base}/api/suspensions/${encodeURIComponent(id)}/answer`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ok: true, comment: 'ok by Alice' }),
  });
  return { status: response.status, body: (await response.json()) as { run?: { status: string } } };
}

/** `toolnexus-ts pending approve ID` as `ops`, in a child process; `runner: false` hides the module's createRunner. */
async function fromCli(id: string, runner = true): Promise<Exit & { json: { ok: boolean; message: string; run?: unknown } }> {
  const exit = await startChild(
    CLI,
    ['pending', 'approve', id, '--as', 'ops', '--json', '--store', url, '--schema', schema, '--tools', TOOLS],
    { ANSWER_LEDGER: ledger, ...(runner ? {} : { ANSWER_NO_RUNNER: '1' }) },
  ).exited;
  let json = { ok: false, message: exit.stderr };
  try {
    json = JSON.parse(exit.stdout) as typeof json;
  } catch {
    // left as the child's stderr, shown by the failing expectation
  }
  return { ...exit, json };
}

/** A refund run started on replica two, halted on its login; returns the run and the login's id. */
async function haltedRefund(cents: number): Promise<{ runId: string; login: string }> {
  const halted = await two.runner.run(`refund ${cents} to c-${cents}`);
  expect(halted).toMatchObject({ status: 'halted', pending: { kind: 'authorization' } });
  return { runId: halted.runId, login: (halted as Extract<RunResult, { status: 'halted' }>).pending.id };
}

/** The chain's approval link, asked after the login was answered. */
async function approvalAfter(login: string): Promise<string> {
  const next = (await one.store.get(login))?.next;
  expect(next).toBeDefined();
  expect((await one.store.get(next as string))?.request.kind).toBe('approval');
  return next as string;
}

async function phaseOf(runId: string): Promise<unknown> {
  return (await one.store.loadRun(runId))?.state.phase;
}

describe('a login-then-approval chain answered link by link from the CLI and the inbox', () => {
  it('login from the CLI (which continues the run), approval from the inbox: done once, refunded once', async () => {
    const { runId, login } = await haltedRefund(25_001);
    const cli = await fromCli(login);
    expect({ code: cli.code, ok: cli.json.ok }).toEqual({ code: 0, ok: true });
    expect(cli.json.run).toEqual({ runId, continued: true, status: 'halted' });
    expect(cli.json.message).toMatch(new RegExp(`run ${runId} continued here and waits again: Refund 25001 cents`));
    const approval = await approvalAfter(login);
    const inbox = await fromInbox(one, approval);
    expect({ status: inbox.status, run: inbox.body.run?.status }).toEqual({ status: 200, run: 'done' });
    expect(await phaseOf(runId)).toBe('done');
    expect(lines('refund ')).toEqual([expect.stringMatching(/^refund 25001 pid=\d+ login=cli:ops approval=alice$/)]);
    expect(lines('finished ')).toHaveLength(1);
  });

  it('login from the inbox, approval from the CLI: the CLI continues the run here, done once, refunded once', async () => {
    const { runId, login } = await haltedRefund(25_002);
    const inbox = await fromInbox(two, login);
    expect({ status: inbox.status, run: inbox.body.run?.status }).toEqual({ status: 200, run: 'halted' });
    const approval = await approvalAfter(login);
    const cli = await fromCli(approval);
    expect({ code: cli.code, ok: cli.json.ok, run: cli.json.run }).toEqual({
      code: 0,
      ok: true,
      run: { runId, continued: true, status: 'done' },
    });
    expect(await phaseOf(runId)).toBe('done');
    const [refund] = lines('refund ');
    expect(lines('refund ')).toHaveLength(1);
    expect(refund).toMatch(/^refund 25002 pid=\d+ login=alice approval=cli:ops$/);
    // The CLI's process ran the refund and the model's last turn: it continued the run.
    expect(refund).not.toContain(`pid=${process.pid} `);
    expect(lines('finished ')).toEqual([expect.not.stringContaining(`pid=${process.pid} `)]);
  });

  it('login from a CLI without a runner, approval from the inbox: no 500, the inbox continues the run once', async () => {
    const { runId, login } = await haltedRefund(25_003);
    const cli = await fromCli(login, false);
    expect({ code: cli.code, run: cli.json.run }).toEqual({ code: 0, run: { runId, continued: false } });
    expect(cli.json.message).toMatch(
      new RegExp(`run ${runId} is not continued by this CLI .*stays halted until a process with its AgentRunner continues it`),
    );
    const approval = await approvalAfter(login);
    const inbox = await fromInbox(one, approval);
    expect({ status: inbox.status, body: inbox.body.run?.status }).toEqual({ status: 200, body: 'done' });
    expect(await phaseOf(runId)).toBe('done');
    expect(lines('refund ')).toEqual([expect.stringMatching(/login=cli:ops approval=alice$/)]);
    expect(lines('finished ')).toHaveLength(1);
  });

  it('login from the inbox, approval from a CLI without a runner: settled, said so, and recover continues it once elsewhere', async () => {
    const { runId, login } = await haltedRefund(25_004);
    expect((await fromInbox(one, login)).status).toBe(200);
    const approval = await approvalAfter(login);
    const cli = await fromCli(approval, false);
    expect({ code: cli.code, run: cli.json.run }).toEqual({ code: 0, run: { runId, continued: false } });
    expect(cli.json.message).toContain(`runner.recover("${runId}")`);
    expect(lines('refund ')).toHaveLength(1);
    expect(await phaseOf(runId)).toBe('halted');
    // Another replica's runner continues it: the refund is not run again, the run finishes once.
    const [a, b] = await Promise.allSettled([one.runner.recover(runId), two.runner.recover(runId)]);
    const finished = [a, b].filter((r) => r.status === 'fulfilled').map((r) => r.value.status);
    expect(finished).toContain('done');
    expect(await phaseOf(runId)).toBe('done');
    expect(lines('refund ')).toEqual([expect.stringMatching(/login=alice approval=cli:ops$/)]);
    expect(lines('finished ')).toHaveLength(1);
  });
});

describe('the approver the tool sees', () => {
  const halted = async (cents: number): Promise<string> => {
    const result = await two.runner.run(`payout ${cents} to p-${cents}`);
    expect(result.status).toBe('halted');
    return (result as Extract<RunResult, { status: 'halted' }>).pending.id;
  };

  it('is ctx.approval.answeredBy, the same from the inbox, the CLI, the plain API and MCP', async () => {
    expect((await fromInbox(one, await halted(101))).status).toBe(200);
    expect((await fromCli(await halted(102))).code).toBe(0);
    const viaApi = await answerAs(one.runner, { id: await halted(103), ok: true }, { by: { id: 'svc:billing', name: 'Billing' } });
    expect(viaApi).toMatchObject({ won: true, run: { continued: true, result: { status: 'done' } } });
    await one.runner.resume({ id: await halted(104), ok: true }, { audit: { by: { id: 'svc:resume' } } });

    const coordinator = createCoordinator(one.store);
    const mcp = await serveMcp(coordinator, { transport: 'http' });
    const client = new Client({ name: 'approver-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: {} }));
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
      const result = await client.callTool({ name: 'payout', arguments: { cents: 105, customer: 'p-105' } });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
      await mcp.close();
    }

    expect(lines('payout ')).toEqual([
      'payout 101 approver=alice name=Alice',
      'payout 102 approver=cli:ops name=ops',
      'payout 103 approver=svc:billing name=Billing',
      'payout 104 approver=svc:resume name=undefined',
      expect.stringMatching(/^payout 105 approver=mcp:session:\S+ name=undefined$/),
    ]);
    expect(lines('finished ')).toHaveLength(4);
  });

  it('is told apart from a later answer by someone else: answerAs says who won, never runs twice', async () => {
    const id = await halted(106);
    const first = await answerAs(one.runner, { id, ok: true }, { by: { id: 'alice' } });
    const second = await answerAs(two.runner, { id, ok: true }, { by: { id: 'bob' } });
    expect(first).toMatchObject({ won: true, call: { status: 'resolved', answeredBy: { id: 'alice' } } });
    expect(second).toMatchObject({ won: false, winner: { id: 'alice' }, outcome: { output: 'paid out 106' } });
    const declined = await answerAs(two.runner, { id, ok: false, reason: 'declined' }, { by: { id: 'bob' } });
    expect(declined).toMatchObject({ won: false, winner: { id: 'alice' } });
    expect(lines('payout 106')).toHaveLength(1);
  });
});
