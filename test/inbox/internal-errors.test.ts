/**
 * Inbox internal errors are logged with a correlation id through the host's logger, and the
 * 500 body carries that id and never the internal message (docs/operating.md, "Logs"): a
 * store that fails under the inbox, over real HTTP on 127.0.0.1, plain and in Nest (whose
 * `Logger` the module gives).
 */
import 'reflect-metadata';
import { Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreUnavailableError, type SuspensionStore } from 'toolnexus-ts/suspension';
import type { RunStore } from 'toolnexus-ts/agents';
import { bearerTokens, createInbox } from 'toolnexus-ts/inbox';
import { ToolnexusInboxModule, ToolnexusModule } from 'toolnexus-ts/nest';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { inboxRunner, scriptedModel, TOKENS, TransferTool } from '../fixtures/inbox/tools';

import { signTicket, ticketKey } from '../../src/tickets/ticket';

const INTERNAL = 'connect ECONNREFUSED 10.9.8.7:5432 (user=ledger password=hunter2-secret)';

let dir: string;
let sqlite: SqliteStore;
const closers: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-errors-'));
  sqlite = new SqliteStore({ filename: join(dir, 'inbox.db') });
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The real SQLite store, whose reads fail while `failing.error` is set (a database gone away). */
function failingStore(store: SuspensionStore & RunStore): { store: SuspensionStore & RunStore; failing: { error?: Error } } {
  const failing: { error?: Error } = {};
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (failing.error && (key === 'list' || key === 'get')) return Promise.reject(failing.error);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, failing };
}

const authorize = () => bearerTokens([{ token: TOKENS.alice, principal: { id: 'alice' } }]);
const bearer = { authorization: `Bearer ${TOKENS.alice}` };

interface Failed {
  error: { code: string; message: string; correlationId: string };
}

describe('inbox internal errors', () => {
  it('logs the error with a correlation id through the given logger; the 500 body has the id, not the message', async () => {
    const { store, failing } = failingStore(sqlite);
    const lines: Array<{ message: string; stack?: string }> = [];
    const inbox = createInbox({
      runner: inboxRunner(store),
      authorize: authorize(),
      basePath: '/inbox',
      pollMs: 20,
      logger: { error: (message, stack) => void lines.push({ message, stack }) },
    });
    const server: Server = createServer((request, response) => inbox(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      inbox.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/inbox`;
    expect((await fetch(`${base}/api/suspensions`, { headers: bearer })).status).toBe(200);
    expect(lines).toEqual([]);

    failing.error = new Error(INTERNAL);
    const response = await fetch(`${base}/api/suspensions?status=open`, { headers: bearer });
    expect(response.status).toBe(500);
    const text = await response.text();
    const body = JSON.parse(text) as Failed;
    expect(body.error.code).toBe('TOOLNEXUS_INBOX_INTERNAL');
    expect(body.error.correlationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.error.message).toBe(`the inbox failed; see the server log (correlation id ${body.error.correlationId})`);
    expect(response.headers.get('x-correlation-id')).toBe(body.error.correlationId);
    for (const secret of ['ECONNREFUSED', '10.9.8.7', 'hunter2', TOKENS.alice]) expect(text).not.toContain(secret);

    expect(lines).toHaveLength(1);
    expect(lines[0]?.message).toBe(
      `toolnexus inbox: internal error, correlation id ${body.error.correlationId}: GET /inbox/api/suspensions: Error: ${INTERNAL}`,
    );
    expect(lines[0]?.stack).toContain('Error: connect ECONNREFUSED');
    expect(lines[0]?.message).not.toContain(TOKENS.alice);

    // A store that says it is unavailable is a 503 (retry later), logged the same way.
    failing.error = new StoreUnavailableError('PostgreSQL unavailable at 10.9.8.7:5432');
    const unavailable = await fetch(`${base}/api/suspensions/x`, { headers: bearer });
    const unavailableBody = (await unavailable.json()) as Failed;
    expect([unavailable.status, unavailableBody.error.code]).toEqual([503, 'TOOLNEXUS_STORE_UNAVAILABLE']);
    expect(unavailableBody.error.message).not.toContain('10.9.8.7');
    expect(lines[1]?.message).toContain(`correlation id ${unavailableBody.error.correlationId}: GET /inbox/api/suspensions/x:`);

    // The live feed's reads of the store fail too: logged once for the run of failures, not once a poll.
    const stream = new AbortController();
    const events = await fetch(`${base}/api/events`, { headers: bearer, signal: stream.signal });
    expect(events.status).toBe(200);
    const deadline = Date.now() + 10_000;
    while (!lines.some((line) => line.message.includes('POLL /api/events'))) {
      if (Date.now() > deadline) throw new Error('the failing feed was not logged');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    stream.abort();
    expect(lines.filter((line) => line.message.includes('POLL /api/events'))).toHaveLength(1);
    expect(lines.at(-1)?.message).toMatch(
      /^toolnexus inbox: internal error, correlation id [0-9a-f-]{36}: POLL \/api\/events: StoreUnavailableError: /,
    );

    expect(() => createInbox({ runner: inboxRunner(store), authorize: authorize(), logger: {} as never })).toThrow(/logger needs an error/);
  });

  it('in Nest, through Nest’s Logger (context ToolnexusInbox)', async () => {
    const { store, failing } = failingStore(sqlite);
    const logged: Array<{ message: unknown; rest: unknown[] }> = [];
    const capture: LoggerService = {
      log: () => undefined,
      warn: () => undefined,
      error: (message: unknown, ...rest: unknown[]) => void logged.push({ message, rest }),
    };
    @Module({
      imports: [
        ToolnexusModule.forRoot({ model: scriptedModel(), store, closeStoreOnShutdown: false }),
        ToolnexusInboxModule.forRoot({ authorize: authorize() }),
      ],
      providers: [TransferTool],
    })
    class AppModule {}
    const app = await NestFactory.create(AppModule, { logger: capture });
    closers.push(() => app.close());
    await app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}/inbox`;
    failing.error = new Error(INTERNAL);
    const response = await fetch(`${base}/api/suspensions`, { headers: bearer });
    const body = (await response.json()) as Failed;
    expect(response.status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('hunter2');
    const line = logged.find((entry) => String(entry.message).includes(body.error.correlationId));
    expect(line).toBeDefined();
    expect(String(line?.message)).toContain(INTERNAL);
    expect(line?.rest).toContain('ToolnexusInbox');
  });
  it('never logs a ticket: the path of a ticket page that failed reads /tickets/[ticket]', async () => {
    const { store, failing } = failingStore(sqlite);
    const secret = 'a-ticket-secret-of-at-least-32-bytes!';
    const lines: string[] = [];
    const inbox = createInbox({
      runner: inboxRunner(store),
      authorize: authorize(),
      tickets: { secret, signIn: 'link-is-credential' },
      logger: { error: (message) => void lines.push(message) },
    });
    const server: Server = createServer((request, response) => inbox(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      inbox.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    });
    const ticket = signTicket(ticketKey(secret, 'test'), {
      principal: 'alice',
      callId: 'call-1',
      action: 'approve',
      expiresAt: Date.now() + 60_000,
    });
    failing.error = new Error(INTERNAL);
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/tickets/${ticket}`);
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain(ticket);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('GET /tickets/[ticket]:');
    expect(lines[0]).not.toContain(ticket);
  });
});
