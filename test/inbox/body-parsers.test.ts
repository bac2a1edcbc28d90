/**
 * The inbox reads its forms and JSON whether or not a body parser ran before it
 * (docs/operating.md, "Body parsers"): Express's urlencoded, JSON, text and raw parsers,
 * Fastify's content-type parsers, and Nest's defaults under `NestFactory.create(AppModule)`;
 * a sign-in refused because of a parser says so. Real HTTP on 127.0.0.1, a cookie sign-in
 * and an approval through it, as a browser does them.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import express from 'express';
import Fastify from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseQuery } from 'node:querystring';
import type { SuspensionStore } from 'toolnexus-ts/suspension';
import { AgentRunner, type RunStore } from 'toolnexus-ts/agents';
import { bearerTokens, createInbox, CSRF_COOKIE, SESSION_COOKIE, type Inbox } from 'toolnexus-ts/inbox';
import { ToolnexusInboxModule, ToolnexusModule } from 'toolnexus-ts/nest';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ConnectTool, inboxRunner, scriptedModel, SECRET_IBAN, ShippingTool, TOKENS, TransferTool } from '../fixtures/inbox/tools';

jest.setTimeout(30_000);

let dir: string;
let store: SqliteStore;
const closers: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-parsers-'));
  store = new SqliteStore({ filename: join(dir, 'inbox.db') });
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const authorize = () => bearerTokens([{ token: TOKENS.alice, principal: { id: 'alice', name: 'Alice' } }]);

function inboxOver(runner: AgentRunner): Inbox {
  const inbox = createInbox({ runner, authorize: authorize(), basePath: '/inbox' });
  closers.push(async () => inbox.close());
  return inbox;
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const cookieOf = (setCookie: string | null, name: string) => new RegExp(`(?:^|, )${name}=([^;]*)`).exec(setCookie ?? '')?.[1];

/** GET the page, post the sign-in form: the session cookie, or the refused sign-in's status and page. */
async function signIn(root: string, token: string = TOKENS.alice) {
  const page = await fetch(`${root}/inbox/`);
  const csrf = cookieOf(page.headers.get('set-cookie'), CSRF_COOKIE) as string;
  const response = await fetch(`${root}/inbox/login`, {
    method: 'POST',
    redirect: 'manual',
    signal: AbortSignal.timeout(5000),
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CSRF_COOKIE}=${csrf}`, origin: root },
    body: new URLSearchParams({ _csrf: csrf, token }).toString(),
  });
  return {
    status: response.status,
    text: await response.text(),
    csrf,
    session: cookieOf(response.headers.get('set-cookie'), SESSION_COOKIE),
  };
}

/** Signs in with the form and approves `id` from the session, as the page's script does. */
async function approveAsBrowser(root: string, id: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const signedIn = await signIn(root);
  expect([signedIn.status, signedIn.text]).toEqual([303, '']);
  const response = await fetch(`${root}/inbox/api/suspensions/${encodeURIComponent(id)}/answer`, {
    method: 'POST',
    signal: AbortSignal.timeout(5000),
    headers: {
      'content-type': 'application/json',
      cookie: `${SESSION_COOKIE}=${signedIn.session}; ${CSRF_COOKIE}=${signedIn.csrf}`,
      'x-toolnexus-csrf': signedIn.csrf,
      origin: root,
    },
    body: JSON.stringify({ ok: true, comment: 'checked' }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function pay(runner: AgentRunner): Promise<{ runId: string; id: string }> {
  const result = await runner.run(`pay 2500 from acc-1 to ${SECRET_IBAN}`);
  expect(result.status).toBe('halted');
  return { runId: result.runId, id: result.pending?.id as string };
}

async function signsInAndApproves(root: string, runner: AgentRunner): Promise<void> {
  const { runId, id } = await pay(runner);
  const done = await approveAsBrowser(root, id);
  expect(done.status).toBe(200);
  expect(done.body).toMatchObject({ suspension: { status: 'resolved', answeredBy: { id: 'alice' } }, run: { runId, status: 'done' } });
}

describe('Express with body parsers before the inbox', () => {
  it('express.urlencoded() and express.json(), as Nest installs them', async () => {
    const runner = inboxRunner(store);
    const app = express();
    app.use(express.urlencoded({ extended: true }));
    app.use(express.json());
    app.use('/inbox', inboxOver(runner));
    await signsInAndApproves(await listening(createServer(app)), runner);
  });

  it('express.text() and express.raw() for every type', async () => {
    for (const parser of [express.text({ type: '*/*' }), express.raw({ type: '*/*' })]) {
      const runner = inboxRunner(store);
      const app = express();
      app.use(parser);
      app.use('/inbox', inboxOver(runner));
      await signsInAndApproves(await listening(createServer(app)), runner);
    }
  });

  it('a parser that read the form and kept no token field: the sign-in page says so', async () => {
    const app = express();
    // A parser for another format that swallows the body (here: everything read, nothing kept).
    app.use((request, _response, next) => {
      request.on('data', () => undefined);
      request.on('end', () => {
        (request as { body?: unknown }).body = {};
        next();
      });
    });
    app.use('/inbox', inboxOver(inboxRunner(store)));
    const refused = await signIn(await listening(createServer(app)));
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(
      'Sign-in refused: a body parser before the inbox read the form and handed over no token field (docs/operating.md, &#34;Body parsers&#34;).',
    );
    expect(refused.session).toBeUndefined();
  });

  it('a sign-in from a page whose CSRF cookie is gone: the sign-in page says so and offers the form again', async () => {
    const root = await listening(createServer(express().use('/inbox', inboxOver(inboxRunner(store)))));
    const response = await fetch(`${root}/inbox/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: root },
      body: new URLSearchParams({ _csrf: 'A'.repeat(43), token: TOKENS.alice }).toString(),
    });
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(text).toContain('Sign-in refused: no CSRF token (docs/operating.md, &#34;Authentication and CSRF&#34;)');
    expect(text).toContain('name="token"');
    expect(response.headers.get('set-cookie')).toMatch(/^toolnexus_inbox_csrf=[\w-]{43};/);
  });

  it('a body read by something that kept nothing is a clear 400, not a request that hangs', async () => {
    const runner = inboxRunner(store);
    const app = express();
    app.use((request, _response, next) => {
      request.on('data', () => undefined);
      request.on('end', () => next());
    });
    app.use('/inbox', inboxOver(runner));
    const root = await listening(createServer(app));
    const refused = await signIn(root);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('the request body was read before the inbox saw it and not handed over as request.body');
    const { id } = await pay(runner);
    const answer = await fetch(`${root}/inbox/api/suspensions/${id}/answer`, {
      method: 'POST',
      signal: AbortSignal.timeout(5000),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKENS.alice}` },
      body: '{"ok":true}',
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(/mount the inbox before that body parser/);
  });
});

describe('Fastify', () => {
  it('a route after Fastify’s own content-type parsers, handing the parsed body over', async () => {
    const runner = inboxRunner(store);
    const inbox = inboxOver(runner);
    const app = Fastify();
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) =>
      done(null, parseQuery(body as string)),
    );
    const handler = (
      request: { raw: import('node:http').IncomingMessage; body?: unknown },
      reply: { hijack(): void; raw: import('node:http').ServerResponse },
    ) => {
      reply.hijack();
      inbox(Object.assign(request.raw, { body: request.body }), reply.raw);
    };
    app.all('/inbox', handler);
    app.all('/inbox/*', handler);
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(async () => void (await app.close()));
    await signsInAndApproves(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, runner);
  });
});

describe('Nest under its defaults: NestFactory.create(AppModule) and nothing else', () => {
  function appModule(pendingStore: SuspensionStore & RunStore) {
    @Module({
      imports: [
        ToolnexusModule.forRoot({ model: scriptedModel(), store: pendingStore, closeStoreOnShutdown: false }),
        ToolnexusInboxModule.forRoot({ authorize: authorize() }),
      ],
      providers: [TransferTool, ShippingTool, ConnectTool],
    })
    class AppModule {}
    return AppModule;
  }

  async function start(app: INestApplication): Promise<string> {
    closers.push(() => app.close());
    await app.listen(0, '127.0.0.1');
    return `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  }

  it('on Express', async () => {
    const app = await NestFactory.create(appModule(store), { logger: false });
    const root = await start(app);
    await signsInAndApproves(root, app.get(AgentRunner));
  });

  it('on Fastify', async () => {
    const app = await NestFactory.create(appModule(store), new FastifyAdapter(), { logger: false });
    const root = await start(app);
    await signsInAndApproves(root, app.get(AgentRunner));
  });
});
