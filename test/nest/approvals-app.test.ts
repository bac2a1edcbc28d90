import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import type { SuspensionView } from 'toolnexus-ts/inbox';
import { createApprovalsApp, DEMO_APPROVERS } from '../../examples/nest-approvals/app';
import type { RunView } from '../../examples/nest-approvals/chat.controller';
import { main } from '../../examples/nest-approvals/main';
import { LedgerService } from '../../examples/nest-approvals/payments';

interface ErrorBody {
  statusCode?: number;
  message?: string | string[];
  error?: { code: string; message: string; answeredBy?: { id: string } };
}

interface Answered {
  suspension: SuspensionView;
  run?: { runId: string; status: string; text: string };
}

const token = (id: string) => DEMO_APPROVERS.find((entry) => entry.principal.id === id)?.token as string;

/** The example app over real HTTP on 127.0.0.1. */
async function listen(app: INestApplication) {
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  return async function http<T>(
    method: string,
    path: string,
    body?: unknown,
    who?: { user?: string; approver?: string },
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(who?.user ? { 'x-user': who.user } : {}),
        ...(who?.approver ? { authorization: `Bearer ${token(who.approver)}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T };
  };
}

const answerPath = (id: string) => `/inbox/api/suspensions/${encodeURIComponent(id)}/answer`;

describe('examples/nest-approvals over HTTP, answered through the inbox', () => {
  let app: INestApplication;
  let http: Awaited<ReturnType<typeof listen>>;
  beforeEach(async () => {
    app = await createApprovalsApp();
    http = await listen(app);
  });
  afterEach(() => app.close());

  it('chat → pending → the inbox lists it → an approver answers → done, moving the money once', async () => {
    const chat = await http<RunView>('POST', '/chat', { message: 'pay 2500 from acc-1 to acc-2' }, { user: 'bob' });
    expect(chat.status).toBe(200);
    expect(chat.body).toMatchObject({
      status: 'halted',
      pending: {
        kind: 'approval',
        prompt: 'Transfer 2500 from acc-1 to acc-2?',
        data: { from: 'acc-1', to: 'acc-2', amount: 2500, requestedBy: 'bob' },
      },
    });
    const id = chat.body.pending?.id as string;

    // The inbox refuses anyone without a token, page and API alike.
    expect((await http<ErrorBody>('GET', '/inbox/api/suspensions')).status).toBe(401);
    const page = await http<string>('GET', '/inbox/');
    expect([page.status, page.body.includes('name="token"')]).toEqual([401, true]);

    const open = await http<{ suspensions: SuspensionView[] }>('GET', '/inbox/api/suspensions', undefined, { approver: 'alice' });
    expect(open.status).toBe(200);
    expect(open.body.suspensions).toEqual([
      expect.objectContaining({
        id,
        tool: 'transfer',
        args: { from: 'acc-1', to: 'acc-2', amount: 2500 },
        runId: chat.body.runId,
        requestedBy: 'bob',
        actions: ['answer', 'cancel'],
      }),
    ]);
    expect(app.get(LedgerService).transfers).toEqual([]);

    // The request-scoped tool replays in the answering request: alice, as the inbox signed her in.
    const done = await http<Answered>('POST', answerPath(id), { ok: true, comment: 'invoice checked' }, { approver: 'alice' });
    expect(done.status).toBe(200);
    expect(done.body.run).toEqual({
      runId: chat.body.runId,
      status: 'done',
      text: 'Done: moved 2500 from acc-1 to acc-2; acc-1 now holds 7500 (approved by alice).',
    });
    expect(done.body.suspension).toMatchObject({ status: 'resolved', answeredBy: { id: 'alice' }, comment: 'invoice checked' });
    expect(app.get(LedgerService).transfers).toEqual([{ from: 'acc-1', to: 'acc-2', amount: 2500 }]);
    expect(
      (await http<{ suspensions: unknown[] }>('GET', '/inbox/api/suspensions', undefined, { approver: 'carol' })).body.suspensions,
    ).toEqual([]);
  });

  it('answers a wrong id, a malformed answer and a late one with a 4xx and a clear body, leaving the run intact', async () => {
    const chat = await http<RunView>('POST', '/chat', { message: 'pay 100 from acc-1 to acc-2' });
    const id = chat.body.pending?.id as string;

    const unknown = await http<ErrorBody>('POST', answerPath('pnd-forged'), { ok: true }, { approver: 'alice' });
    expect(unknown).toEqual({
      status: 404,
      body: { error: { code: 'TOOLNEXUS_UNKNOWN_SUSPENSION', message: 'unknown suspension: pnd-forged' } },
    });
    const notBoolean = await http<ErrorBody>('POST', answerPath(id), { ok: 'yes' }, { approver: 'alice' });
    expect([notBoolean.status, notBoolean.body.error?.code]).toEqual([400, 'TOOLNEXUS_INVALID_ANSWER']);
    const badReason = await http<ErrorBody>('POST', answerPath(id), { ok: false, reason: 'bored' }, { approver: 'alice' });
    expect(badReason.status).toBe(400);
    const notJson = await http<ErrorBody>('POST', answerPath(id), '{"ok": tru', { approver: 'alice' });
    expect(notJson.status).toBe(400);

    // Nothing above touched the run: it is still waiting, and the ledger is untouched.
    const open = await http<{ suspensions: SuspensionView[] }>('GET', '/inbox/api/suspensions', undefined, { approver: 'alice' });
    expect(open.body.suspensions.map((s) => s.id)).toEqual([id]);
    expect(app.get(LedgerService).transfers).toEqual([]);

    const done = await http<Answered>('POST', answerPath(id), { ok: true }, { approver: 'alice' });
    expect(done.body.run?.status).toBe('done');
    const repeated = await http<Answered>('POST', answerPath(id), { ok: true }, { approver: 'alice' });
    expect([repeated.status, repeated.body.suspension.status]).toEqual([200, 'resolved']);
    const late = await http<ErrorBody>('POST', answerPath(id), { ok: false, reason: 'declined' }, { approver: 'carol' });
    expect(late).toMatchObject({ status: 409, body: { error: { code: 'TOOLNEXUS_ANSWERED_BY_OTHER', answeredBy: { id: 'alice' } } } });
    expect(app.get(LedgerService).transfers).toEqual([{ from: 'acc-1', to: 'acc-2', amount: 100 }]);
  });

  it('a declined answer finishes the run without moving money', async () => {
    const chat = await http<RunView>('POST', '/chat', { message: 'pay 100 from acc-1 to acc-2' });
    const declined = await http<Answered>(
      'POST',
      answerPath(chat.body.pending?.id as string),
      { ok: false, reason: 'declined', comment: 'not this month' },
      { approver: 'carol' },
    );
    expect(declined.status).toBe(200);
    expect(declined.body.run).toMatchObject({
      status: 'done',
      text: 'The transfer did not happen: declined/expired: Transfer 100 from acc-1 to acc-2? (declined: "not this month")',
    });
    expect(app.get(LedgerService).transfers).toEqual([]);
  });

  it('rejects a chat without a message', async () => {
    const empty = await http<ErrorBody>('POST', '/chat', {});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toEqual(expect.arrayContaining(['message should not be empty', 'message must be a string']));
  });
});

describe('examples/nest-approvals with a SQLite store', () => {
  it('keeps the pending approval across an app restart and finishes it in the new app', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolnexus-approvals-'));
    try {
      const filename = join(dir, 'approvals.db');
      const first = await createApprovalsApp({ store: new SqliteStore({ filename }) });
      const chat = await (await listen(first))<RunView>('POST', '/chat', { message: 'pay 300 from acc-1 to acc-2' });
      await first.close();

      const second = await createApprovalsApp({ store: new SqliteStore({ filename }) });
      try {
        const http = await listen(second);
        const open = await http<{ suspensions: SuspensionView[] }>('GET', '/inbox/api/suspensions', undefined, { approver: 'alice' });
        expect(open.body.suspensions.map((s) => s.id)).toEqual([chat.body.pending?.id]);
        const done = await http<Answered>('POST', answerPath(chat.body.pending?.id as string), { ok: true }, { approver: 'alice' });
        expect(done.body.run).toMatchObject({ status: 'done', runId: chat.body.runId });
        expect(second.get(LedgerService).transfers).toEqual([{ from: 'acc-1', to: 'acc-2', amount: 300 }]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/nest-approvals main()', () => {
  it('walks chat → pending → inbox answer → done and closes the app', async () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
    try {
      await main();
    } finally {
      log.mockRestore();
    }
    expect(lines[0]).toMatch(/^nest-approvals listening on http:\/\/127\.0\.0\.1:\d+; the inbox is at http:\/\/127\.0\.0\.1:\d+\/inbox\/$/);
    expect(lines.slice(1).map((l) => l.replace(/pnd-[\w-]+/g, 'ID').replace(/run-[\w-]+/g, 'RUN'))).toEqual([
      'POST /chat as bob -> 200 halted: Transfer 2500 from acc-1 to acc-2?',
      'GET /inbox/api/suspensions without a token -> 401 sign in to use this inbox',
      'GET /inbox/api/suspensions as alice -> 200 ID (transfer, requested by bob)',
      'POST .../ID/answer -> 404 unknown suspension: ID',
      'POST .../ID/answer as alice -> 200 done: Done: moved 2500 from acc-1 to acc-2; acc-1 now holds 7500 (approved by alice).',
      'POST .../ID/answer again as alice (a retry) -> 200 resolved',
      'POST .../ID/answer declined by carol afterwards -> 409 suspension ID was already answered by alice (it is resolved)',
      'GET /inbox/api/suspensions -> 200 0 open',
    ]);
  });
});
