import 'reflect-metadata';
import type { INestApplication } from '@nestjs/common';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqlitePendingStore } from 'toolnexus-ts';
import { createApprovalsApp } from '../../examples/nest-approvals/app';
import type { PendingView, RunView } from '../../examples/nest-approvals/chat.controller';
import { main } from '../../examples/nest-approvals/main';
import { LedgerService } from '../../examples/nest-approvals/payments';

interface ErrorBody {
  statusCode: number;
  error: string;
  message: string | string[];
  code?: string;
}

/** The example app over real HTTP on 127.0.0.1. */
async function listen(app: INestApplication) {
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  return async function http<T>(method: string, path: string, body?: unknown, user?: string): Promise<{ status: number; body: T }> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...(user ? { 'x-user': user } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as T };
  };
}

describe('examples/nest-approvals over HTTP', () => {
  let app: INestApplication;
  let http: Awaited<ReturnType<typeof listen>>;
  beforeEach(async () => {
    app = await createApprovalsApp();
    http = await listen(app);
  });
  afterEach(() => app.close());

  it('chat → pending → answer → done, moving the money once', async () => {
    const chat = await http<RunView>('POST', '/chat', { message: 'pay 2500 from acc-1 to acc-2' }, 'bob');
    expect(chat.status).toBe(200);
    expect(chat.body).toMatchObject({
      status: 'pending',
      pending: {
        kind: 'approval',
        prompt: 'Transfer 2500 from acc-1 to acc-2?',
        data: { from: 'acc-1', to: 'acc-2', amount: 2500, requestedBy: 'bob' },
      },
    });
    const id = chat.body.pending?.id as string;
    expect(chat.body.pendings?.map((p) => p.id)).toEqual([id]);

    const open = await http<PendingView[]>('GET', '/pending');
    expect(open.status).toBe(200);
    expect(open.body).toEqual([
      {
        request: chat.body.pending,
        tool: 'transfer',
        args: { from: 'acc-1', to: 'acc-2', amount: 2500 },
        runId: chat.body.runId,
        createdAt: expect.any(String) as unknown,
      },
    ]);
    expect(app.get(LedgerService).transfers).toEqual([]);

    // The request-scoped tool replays in the answering request: alice approved.
    const done = await http<RunView>('POST', `/answers/${id}`, { ok: true }, 'alice');
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      runId: chat.body.runId,
      status: 'done',
      text: 'Done: moved 2500 from acc-1 to acc-2; acc-1 now holds 7500 (approved by alice).',
    });
    expect(app.get(LedgerService).transfers).toEqual([{ from: 'acc-1', to: 'acc-2', amount: 2500 }]);
    expect((await http<PendingView[]>('GET', '/pending')).body).toEqual([]);
  });

  it('answers a wrong id, a malformed answer and a repeated answer with a 4xx and a clear body, leaving the run intact', async () => {
    const chat = await http<RunView>('POST', '/chat', { message: 'pay 100 from acc-1 to acc-2' });
    const id = chat.body.pending?.id as string;

    const unknown = await http<ErrorBody>('POST', '/answers/pnd-forged', { ok: true });
    expect(unknown).toEqual({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'unknown suspension: pnd-forged', code: 'TOOLNEXUS_UNKNOWN_SUSPENSION' },
    });

    const notBoolean = await http<ErrorBody>('POST', `/answers/${id}`, { ok: 'yes' });
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.message).toEqual(['ok must be a boolean value']);

    const extra = await http<ErrorBody>('POST', `/answers/${id}`, { ok: true, sneaky: 1 });
    expect(extra.status).toBe(400);
    expect(extra.body.message).toEqual(['property sneaky should not exist']);

    const badReason = await http<ErrorBody>('POST', `/answers/${id}`, { ok: false, reason: 'bored' });
    expect(badReason.status).toBe(400);

    const notJson = await http<ErrorBody>('POST', `/answers/${id}`, '{"ok": tru');
    expect(notJson.status).toBe(400);

    // Nothing above touched the run: it is still waiting, and the ledger is untouched.
    expect((await http<PendingView[]>('GET', '/pending')).body.map((p) => p.request.id)).toEqual([id]);
    expect(app.get(LedgerService).transfers).toEqual([]);

    const done = await http<RunView>('POST', `/answers/${id}`, { ok: true });
    expect(done.body.status).toBe('done');

    const repeated = await http<RunView>('POST', `/answers/${id}`, { ok: true });
    expect(repeated).toEqual(done);
    const contradicting = await http<ErrorBody>('POST', `/answers/${id}`, { ok: false, reason: 'declined' });
    expect(contradicting).toEqual({
      status: 409,
      body: {
        statusCode: 409,
        error: 'Conflict',
        message: `suspension ${id} of run ${done.body.runId} is already resolved`,
        code: 'TOOLNEXUS_ALREADY_RESOLVED',
      },
    });
    expect(app.get(LedgerService).transfers).toEqual([{ from: 'acc-1', to: 'acc-2', amount: 100 }]);
  });

  it('a declined answer finishes the run without moving money', async () => {
    const chat = await http<RunView>('POST', '/chat', { message: 'pay 100 from acc-1 to acc-2' });
    const declined = await http<RunView>('POST', `/answers/${chat.body.pending?.id}`, { ok: false, reason: 'declined' }, 'carol');
    expect(declined.status).toBe(200);
    expect(declined.body).toMatchObject({
      status: 'done',
      text: 'The transfer did not happen: declined/expired: Transfer 100 from acc-1 to acc-2? (declined)',
    });
    expect(app.get(LedgerService).transfers).toEqual([]);
  });

  it('rejects a chat without a message', async () => {
    const empty = await http<ErrorBody>('POST', '/chat', {});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toEqual(expect.arrayContaining(['message should not be empty', 'message must be a string']));
    expect((await http<PendingView[]>('GET', '/pending')).body).toEqual([]);
  });
});

describe('examples/nest-approvals with a SQLite store', () => {
  it('keeps the pending approval across an app restart and finishes it in the new app', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolnexus-approvals-'));
    try {
      const filename = join(dir, 'approvals.db');
      const first = await createApprovalsApp({ store: new SqlitePendingStore({ filename }) });
      const chat = await (await listen(first))<RunView>('POST', '/chat', { message: 'pay 300 from acc-1 to acc-2' });
      await first.close();

      const second = await createApprovalsApp({ store: new SqlitePendingStore({ filename }) });
      try {
        const http = await listen(second);
        expect((await http<PendingView[]>('GET', '/pending')).body.map((p) => p.request.id)).toEqual([chat.body.pending?.id]);
        const done = await http<RunView>('POST', `/answers/${chat.body.pending?.id}`, { ok: true });
        expect(done.body).toMatchObject({ status: 'done', runId: chat.body.runId });
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
  it('walks chat → pending → answer → done and closes the app', async () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
    try {
      await main();
    } finally {
      log.mockRestore();
    }
    expect(lines[0]).toMatch(/^nest-approvals listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(lines.slice(1).map((l) => l.replace(/pnd-[\w-]+/g, 'ID').replace(/run-[\w-]+/g, 'RUN'))).toEqual([
      'POST /chat as bob -> 200 pending: Transfer 2500 from acc-1 to acc-2?',
      'GET /pending -> 200 ID (transfer, requested by bob)',
      'POST /answers/ID -> 404 unknown suspension: ID',
      'POST /answers/ID as alice -> 200 done: Done: moved 2500 from acc-1 to acc-2; acc-1 now holds 7500 (approved by alice).',
      'POST /answers/ID again (a retry) -> 200 done',
      'POST /answers/ID declined afterwards -> 409 suspension ID of run RUN is already resolved',
      'GET /pending -> 200 0 open',
    ]);
  });
});
