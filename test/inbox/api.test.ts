/**
 * The inbox's JSON API over real HTTP on 127.0.0.1, mounted in node:http, Express and Fastify,
 * over a runner on a real SQLite file (docs/operating.md, "Inbox", "Authentication and CSRF",
 * "Per-principal rules").
 */
import 'reflect-metadata';
import express from 'express';
import Fastify from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineTool, pending, pendingOf, success } from 'toolnexus-ts';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import type { AgentRunner } from 'toolnexus-ts/agents';
import {
  bearerTokens,
  createInbox,
  CSRF_COOKIE,
  type Inbox,
  type InboxLogEntry,
  type InboxOptions,
  type SuspensionView,
} from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { inboxRunner, inboxToolkit, SECRET_IBAN, TOKENS } from '../fixtures/inbox/tools';
import { listening as listenOn } from '../fixtures/listen';

interface ErrorBody {
  error: { code: string; message: string; answeredBy?: { id: string; name?: string }; status?: string; problems?: unknown };
}

let dir: string;
let store: SqliteStore;
let runner: AgentRunner;
const closers: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-api-'));
  store = new SqliteStore({ filename: join(dir, 'inbox.db') });
  runner = inboxRunner(store);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const TOKEN_PRINCIPALS = bearerTokens([
  { token: TOKENS.alice, principal: { id: 'alice', name: 'Alice' } },
  { token: TOKENS.bob, principal: { id: 'bob', name: 'Bob' } },
  { token: TOKENS.viewer, principal: { id: 'viewer' } },
]);

function inboxOf(options: Partial<InboxOptions> = {}): Inbox {
  const inbox = createInbox({ runner, authorize: TOKEN_PRINCIPALS, ...options });
  closers.push(async () => inbox.close());
  return inbox;
}

const listening = (server: Server): Promise<string> => listenOn(server, closers);

/** node:http, the inbox at /inbox. */
async function plainServer(options: Partial<InboxOptions> = {}): Promise<string> {
  const inbox = inboxOf({ basePath: '/inbox', ...options });
  return `${await listening(createServer((request, response) => inbox(request, response)))}/inbox`;
}

async function call<T>(
  base: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: T; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: (text.startsWith('{') ? JSON.parse(text) : text) as T, headers: response.headers };
}

async function pay(amount = 2500): Promise<{ runId: string; id: string }> {
  const result = await runner.run(`pay ${amount} from acc-1 to ${SECRET_IBAN}`);
  expect(result.status).toBe('halted');
  return { runId: result.runId, id: result.pending?.id as string };
}

const answer = (base: string, id: string, token: string, body: unknown) =>
  call<ErrorBody & { suspension: SuspensionView; run?: { status: string; text: string } }>(
    base,
    'POST',
    `/api/suspensions/${encodeURIComponent(id)}/answer`,
    { token, body },
  );

describe('mounting', () => {
  async function exercise(base: string, outside: string): Promise<void> {
    const { runId, id } = await pay();
    expect((await call(base, 'GET', '/api/suspensions')).status).toBe(401);
    const page = await call<string>(base, 'GET', '/');
    expect(page.status).toBe(401);
    expect(page.body).toContain('name="token"');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-/);
    const listed = await call<{ suspensions: SuspensionView[] }>(base, 'GET', '/api/suspensions', { token: TOKENS.bob });
    expect(listed.status).toBe(200);
    expect(listed.body.suspensions.map((s) => [s.id, s.tool, s.kind, s.runId])).toEqual([[id, 'transfer', 'approval', runId]]);
    const done = await answer(base, id, TOKENS.bob, { ok: true });
    expect(done.status).toBe(200);
    expect(done.body.run).toEqual({ runId, status: 'done', text: 'Done: moved 2500 from acc-1' });
    expect(done.body.suspension).toMatchObject({ status: 'resolved', answeredBy: { id: 'bob', name: 'Bob' } });
    // The host's own routes still answer.
    expect((await call<string>(outside, 'GET', '/health')).body).toBe('ok');
  }

  it('in node:http, with basePath', async () => {
    const inbox = inboxOf({ basePath: '/inbox' });
    const root = await listening(
      createServer((request, response) => {
        if (request.url === '/health') return void response.end('ok');
        inbox(request, response);
      }),
    );
    await exercise(`${root}/inbox`, root);
    expect((await call(root, 'GET', '/elsewhere')).status).toBe(404);
  });

  it('in Express, with app.use (the mount path is found on its own)', async () => {
    const app = express();
    app.get('/health', (_request, response) => void response.send('ok'));
    app.use('/inbox', inboxOf());
    const root = await listening(createServer(app));
    await exercise(`${root}/inbox`, root);
    // /inbox without the slash redirects to the page's own URL, so its relative links work.
    const bare = await fetch(`${root}/inbox`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([308, '/inbox/']);
  });

  it('in Express after express.json(), which has read the body already', async () => {
    const app = express();
    app.use(express.json());
    app.use('/inbox', inboxOf());
    const root = await listening(createServer(app));
    const { id } = await pay();
    expect((await answer(`${root}/inbox`, id, TOKENS.alice, { ok: false, reason: 'declined', comment: 'no' })).status).toBe(200);
    expect((await runner.coordinator.get(id))?.status).toBe('declined');
  });

  it('in Fastify, on the raw request and reply from an onRequest hook', async () => {
    const inbox = inboxOf({ basePath: '/inbox' });
    const app = Fastify();
    app.addHook('onRequest', (request, reply, done) => {
      if (request.url !== '/inbox' && !request.url.startsWith('/inbox/')) return done();
      reply.hijack();
      inbox(request.raw, reply.raw);
    });
    app.get('/health', () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(async () => {
      await app.close();
    });
    const root = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    await exercise(`${root}/inbox`, root);
  });
});

describe('answering', () => {
  it('two approvers racing on one suspension: one wins, the other gets 409 naming the winner', async () => {
    const base = await plainServer();
    for (const [a, b] of [
      [{ ok: true }, { ok: true }],
      [{ ok: true }, { ok: false, reason: 'declined', comment: 'too much' }],
    ]) {
      const { id } = await pay();
      const [first, second] = await Promise.all([answer(base, id, TOKENS.alice, a), answer(base, id, TOKENS.bob, b)]);
      const results = [
        { who: 'alice', ...first },
        { who: 'bob', ...second },
      ];
      const won = results.filter((r) => r.status === 200);
      const lost = results.filter((r) => r.status !== 200);
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      const winner = won[0]?.who;
      const stored = await runner.coordinator.get(id);
      expect(stored?.answeredBy?.id).toBe(winner);
      expect(lost[0]?.status).toBe(409);
      expect(lost[0]?.body.error).toMatchObject({ code: 'TOOLNEXUS_ANSWERED_BY_OTHER', answeredBy: { id: winner } });
      expect(lost[0]?.body.error.message).toContain(`already answered by ${winner === 'alice' ? 'Alice' : 'Bob'}`);
    }
  });

  it('records the principal and the comment; the history shows them, newest first; a retry by the same principal is 200', async () => {
    const base = await plainServer();
    const first = await pay(100);
    const second = await pay(200);
    expect((await answer(base, first.id, TOKENS.alice, { ok: true, comment: 'checked invoice' })).status).toBe(200);
    const declined = await answer(base, second.id, TOKENS.bob, { ok: false, reason: 'declined', comment: 'over budget' });
    expect(declined.body.run?.text).toContain('(declined: "over budget")');
    expect((await answer(base, first.id, TOKENS.alice, { ok: true, comment: 'checked invoice' })).status).toBe(200);

    const history = await call<{ suspensions: SuspensionView[] }>(base, 'GET', '/api/suspensions?status=settled', { token: TOKENS.viewer });
    expect(history.body.suspensions.map((s) => [s.id, s.status, s.answeredBy?.id, s.comment])).toEqual([
      [second.id, 'declined', 'bob', 'over budget'],
      [first.id, 'resolved', 'alice', 'checked invoice'],
    ]);
    expect(history.body.suspensions[0]?.answeredAt).toEqual(expect.any(String));
    const declinedOnly = await call<{ suspensions: SuspensionView[] }>(base, 'GET', '/api/suspensions?status=declined', {
      token: TOKENS.viewer,
    });
    expect(declinedOnly.body.suspensions.map((s) => s.id)).toEqual([second.id]);
  });

  it('maps errors to 400, 404, 405, 409, 410 and 413, changing nothing', async () => {
    const expiring = defineTool({
      name: 'expiring',
      description: 'asks with a deadline already close',
      run: (_args: unknown, ctx) =>
        ctx?.answer ? success('ran') : pending({ kind: 'approval', prompt: 'quick!', expiresAt: new Date(Date.now() + 30).toISOString() }),
    });
    runner.toolkit.register(expiring);
    const base = await plainServer({ maxBodyBytes: 1024 });
    const { id } = await pay();
    const path = `/api/suspensions/${id}/answer`;
    const cases: Array<[string, RequestInit & { token?: string }, number, string]> = [
      ['not JSON', { body: '{"ok": tru' }, 400, 'TOOLNEXUS_INBOX_BAD_REQUEST'],
      ['not an object', { body: '[1]' }, 400, 'TOOLNEXUS_INBOX_BAD_REQUEST'],
      ['no ok', { body: '{"data":{}}' }, 400, 'TOOLNEXUS_INVALID_ANSWER'],
      ['another id', { body: '{"id":"pnd-x","ok":true}' }, 400, 'TOOLNEXUS_INVALID_ANSWER'],
      ['a bad reason', { body: '{"ok":false,"reason":"bored"}' }, 400, 'TOOLNEXUS_INVALID_ANSWER'],
      ['a long comment', { body: JSON.stringify({ ok: true, comment: 'x'.repeat(600) }) }, 400, 'TOOLNEXUS_INBOX_BAD_REQUEST'],
      ['too large', { body: JSON.stringify({ ok: true, data: { pad: 'x'.repeat(5000) } }) }, 413, 'TOOLNEXUS_INBOX_BODY_TOO_LARGE'],
    ];
    for (const [what, init, status, code] of cases) {
      const response = await call<ErrorBody>(base, 'POST', path, { token: TOKENS.alice, body: init.body as string });
      expect([what, response.status, response.body.error.code]).toEqual([what, status, code]);
    }
    const form = await call<ErrorBody>(base, 'POST', path, {
      token: TOKENS.alice,
      body: 'ok=true',
      headers: { 'content-type': 'text/plain' },
    });
    expect(form.status).toBe(400);
    expect((await runner.coordinator.get(id))?.status).toBe('pending');

    expect((await answer(base, 'pnd-forged', TOKENS.alice, { ok: true })).body.error.code).toBe('TOOLNEXUS_UNKNOWN_SUSPENSION');
    expect((await answer(base, 'pnd-forged', TOKENS.alice, { ok: true })).status).toBe(404);
    expect((await call(base, 'DELETE', `/api/suspensions/${id}`, { token: TOKENS.alice })).status).toBe(405);

    expect((await answer(base, id, TOKENS.alice, { ok: true })).status).toBe(200);
    const late = await answer(base, id, TOKENS.bob, { ok: false, reason: 'declined' });
    expect([late.status, late.body.error.code, late.body.error.answeredBy?.id]).toEqual([409, 'TOOLNEXUS_ANSWERED_BY_OTHER', 'alice']);
    const contradicting = await answer(base, id, TOKENS.alice, { ok: false, reason: 'declined' });
    expect([contradicting.status, contradicting.body.error.code]).toEqual([409, 'TOOLNEXUS_ALREADY_RESOLVED']);

    const asked = pendingOf(await runner.coordinator.execute('expiring', {}));
    await new Promise((resolve) => setTimeout(resolve, 60));
    const expired = await answer(base, asked?.id as string, TOKENS.alice, { ok: true });
    expect([expired.status, expired.body.error.code]).toEqual([410, 'TOOLNEXUS_SUSPENSION_EXPIRED']);
    expect((await answer(base, asked?.id as string, TOKENS.bob, { ok: true })).status).toBe(410);
  });

  it('checks an input answer against the request’s schema on the server', async () => {
    const base = await plainServer();
    const result = await runner.run('ship ORD-1');
    const id = result.pending?.id as string;
    const bad = await answer(base, id, TOKENS.alice, { ok: true, data: { parcels: 2.5, carrier: 'Zeppelin', insured: 'yes', extra: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.problems).toEqual([
      { field: 'extra', message: 'is not a field of this form' },
      { field: 'parcels', message: 'must be a whole number' },
      { field: 'carrier', message: 'must be one of DHL, UPS, Post' },
      { field: 'insured', message: 'must be true or false' },
    ]);
    expect((await answer(base, id, TOKENS.alice, { ok: true, data: {} })).body.error.problems).toEqual([
      { field: 'parcels', message: 'is required' },
      { field: 'carrier', message: 'is required' },
    ]);
    const good = await answer(base, id, TOKENS.alice, { ok: true, data: { parcels: 1, carrier: 'UPS' } });
    expect(good.body.run).toMatchObject({ status: 'done', text: 'Done: {"parcels":1,"carrier":"UPS"}' });
  });

  it('cancels with a reason; the run is told', async () => {
    const base = await plainServer();
    const { id } = await pay();
    const cancelled = await call<{ suspension: SuspensionView; run: { text: string } }>(base, 'POST', `/api/suspensions/${id}/cancel`, {
      token: TOKENS.alice,
      body: { reason: 'duplicate request' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.suspension).toMatchObject({ status: 'cancelled', answeredBy: { id: 'alice' }, comment: 'duplicate request' });
    expect(cancelled.body.run.text).toContain('duplicate request');
  });
});

describe('cancelling a run (docs/agents.md, "Cancel")', () => {
  it('cancels a halted run: its request settles cancelled, the run ends cancelled and nothing continues it', async () => {
    const base = await plainServer();
    const { runId, id } = await pay();
    const done = await call<{ runId: string; status: string }>(base, 'POST', `/api/runs/${encodeURIComponent(runId)}/cancel`, {
      token: TOKENS.alice,
      body: { reason: 'the customer withdrew' },
    });
    expect(done).toMatchObject({ status: 200, body: { runId, status: 'cancelled' } });
    const view = await call<SuspensionView>(base, 'GET', `/api/suspensions/${id}`, { token: TOKENS.alice });
    expect(view.body).toMatchObject({ status: 'cancelled', answeredBy: { id: 'alice' } });
    expect((await store.loadRun(runId))?.state).toMatchObject({ phase: 'cancelled', stop: { reason: 'the customer withdrew' } });
    expect((await answer(base, id, TOKENS.bob, { ok: true })).status).toBeGreaterThanOrEqual(400);
    expect((await call(base, 'POST', '/api/runs/no-such-run/cancel', { token: TOKENS.alice, body: {} })).status).toBe(404);
    expect((await call(base, 'GET', `/api/runs/${encodeURIComponent(runId)}/cancel`, { token: TOKENS.alice })).status).toBe(405);
  });
});

describe('safe by default', () => {
  it('needs an authorize option; a bad one is refused when the inbox is built', () => {
    expect(() => createInbox({ runner } as unknown as InboxOptions)).toThrow(/needs authorize/);
    expect(() => bearerTokens([{ token: 'short', principal: { id: 'a' } }])).toThrow(/at least 16 characters/);
  });

  it('per-principal rules: a viewer sees but may not answer; rules by kind and tool; a function rule', async () => {
    runner = inboxRunner(
      store,
      rulesPolicy([
        { principals: ['alice'], kinds: ['approval'], tools: ['transfer'] },
        { principals: ['bob'], kinds: ['input'], actions: ['answer'] },
      ]),
    );
    const base = await plainServer();
    const { id } = await pay();
    const shipping = (await runner.run('ship ORD-2')).pending?.id as string;
    const seen = await call<SuspensionView>(base, 'GET', `/api/suspensions/${id}`, { token: TOKENS.viewer });
    expect([seen.status, seen.body.actions]).toEqual([200, []]);
    expect((await call<SuspensionView>(base, 'GET', `/api/suspensions/${id}`, { token: TOKENS.alice })).body.actions).toEqual([
      'answer',
      'cancel',
    ]);
    expect((await call<SuspensionView>(base, 'GET', `/api/suspensions/${shipping}`, { token: TOKENS.bob })).body.actions).toEqual([
      'answer',
    ]);
    for (const [token, target] of [
      [TOKENS.viewer, id],
      [TOKENS.bob, id],
      [TOKENS.alice, shipping],
    ] as const) {
      const refused = await answer(base, target, token, { ok: false, reason: 'declined' });
      expect([refused.status, refused.body.error.code]).toEqual([403, 'TOOLNEXUS_ANSWER_REFUSED']);
    }
    const bobCancels = await call<ErrorBody>(base, 'POST', `/api/suspensions/${shipping}/cancel`, { token: TOKENS.bob, body: {} });
    expect(bobCancels.status).toBe(403);
    expect((await runner.coordinator.list({ status: 'pending' })).length).toBe(2);

    runner = inboxRunner(store, ({ principal, call, action }) =>
      action === 'answer' && principal.id === 'bob' && (call.args as { amount: number }).amount < 1000
        ? 'allow'
        : { deny: 'over the limit' },
    );
    const limit = await plainServer();
    const small = await pay(500);
    const large = await pay(5000);
    expect((await answer(limit, large.id, TOKENS.bob, { ok: true })).status).toBe(403);
    expect((await answer(limit, small.id, TOKENS.bob, { ok: true })).status).toBe(200);
  });

  it('CSRF: a cookie-signed-in post needs the page’s token and its own origin; a bearer post needs neither', async () => {
    const base = await plainServer();
    const { id } = await pay();
    const page = await fetch(`${base}/`);
    const csrf = /toolnexus_inbox_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1] as string;
    expect(csrf).toMatch(/^[\w-]{43}$/);
    const signIn = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CSRF_COOKIE}=${csrf}` },
      body: new URLSearchParams({ _csrf: csrf, token: TOKENS.alice }).toString(),
    });
    expect(signIn.status).toBe(303);
    const setCookie = signIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^toolnexus_inbox_session=[\w-]{43}; Path=\/inbox; SameSite=Strict; HttpOnly; Max-Age=28800$/);
    expect(setCookie).not.toContain(TOKENS.alice);
    const session = setCookie.split(';')[0] as string;
    const cookies = `${session}; ${CSRF_COOKIE}=${csrf}`;
    const post = (headers: Record<string, string>) =>
      call<ErrorBody>(base, 'POST', `/api/suspensions/${id}/answer`, { body: { ok: true }, headers: { cookie: cookies, ...headers } });

    expect((await call(base, 'GET', '/api/suspensions', { headers: { cookie: cookies } })).status).toBe(200);
    expect((await post({})).body.error.code).toBe('TOOLNEXUS_INBOX_CSRF');
    expect((await post({ 'x-toolnexus-csrf': 'A'.repeat(43) })).status).toBe(403);
    expect((await post({ 'x-toolnexus-csrf': csrf, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ 'x-toolnexus-csrf': csrf, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await runner.coordinator.get(id))?.status).toBe('pending');
    const ok = await post({ 'x-toolnexus-csrf': csrf, origin: base.replace(/\/inbox$/, '') });
    expect(ok.status).toBe(200);
    // A sign-in without the CSRF field is refused as well.
    const forged = await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CSRF_COOKIE}=${csrf}` },
      body: new URLSearchParams({ token: TOKENS.alice }).toString(),
    });
    expect(forged.status).toBe(403);
  });

  it("'none-local-only' answers loopback requests to a loopback host, nothing through a proxy or for another host name", async () => {
    const base = await plainServer({ authorize: 'none-local-only' });
    expect((await call(base, 'GET', '/api/me')).body).toEqual({ principal: { id: 'local', name: 'local user' } });
    const proxied = await call<ErrorBody>(base, 'GET', '/api/me', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect([proxied.status, proxied.body.error.code]).toEqual([403, 'TOOLNEXUS_INBOX_FORBIDDEN']);
    const rebound = await new Promise<number>((resolve, reject) => {
      // fetch will not send another Host header; node:http will.
      const url = new URL(`${base}/api/me`);
      const request = httpRequest(
        { host: '127.0.0.1', port: url.port, path: url.pathname, headers: { host: 'evil.example' } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(rebound).toBe(403);
  });

  it('redacts @Sensitive() fields in the API and the log, and never logs a token', async () => {
    const entries: InboxLogEntry[] = [];
    const base = await plainServer({ log: (entry) => entries.push(entry) });
    const { id } = await pay();
    const shown = await call<string>(base, 'GET', `/api/suspensions/${id}`, { token: TOKENS.alice });
    const text = JSON.stringify(shown.body);
    expect(text).not.toContain(SECRET_IBAN);
    expect((shown.body as unknown as SuspensionView).args).toEqual({ amount: 2500, from: 'acc-1', toIban: '[redacted]' });
    expect((shown.body as unknown as SuspensionView).prompt).toBe('Transfer 2500 from acc-1 to [redacted]?');
    await answer(base, id, TOKENS.bob, { ok: true });
    await answer(base, id, TOKENS.alice, { ok: true });
    expect(entries.map((e) => [e.event, e.principal?.id, e.status])).toEqual([
      ['answered', 'bob', 'resolved'],
      ['refused', 'alice', 'TOOLNEXUS_ANSWERED_BY_OTHER'],
    ]);
    const logged = JSON.stringify(entries);
    for (const secret of [SECRET_IBAN, TOKENS.alice, TOKENS.bob]) expect(logged).not.toContain(secret);
  });
});

describe('live updates', () => {
  it('the event stream announces a suspension another process recorded in the same store', async () => {
    const base = await plainServer({ pollMs: 50 });
    const controller = new AbortController();
    const response = await fetch(`${base}/api/events`, {
      headers: { authorization: `Bearer ${TOKENS.viewer}` },
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    const read = async (until: string) => {
      const deadline = Date.now() + 5000;
      while (!seen.includes(until)) {
        if (Date.now() > deadline) throw new Error(`no ${until} in ${seen}`);
        const { value } = await reader.read();
        seen += Buffer.from(value ?? new Uint8Array()).toString('utf8');
      }
    };
    await read(': connected');
    // Another store on the same file: what another process would hold.
    const other = new SqliteStore({ filename: join(dir, 'inbox.db') });
    try {
      await new ResumeCoordinator({ toolkit: inboxToolkit(), store: other }).execute('connect', { provider: 'github' });
      await read('event: change');
    } finally {
      controller.abort();
      await other.close();
    }
    expect((await call(base, 'GET', '/api/events')).status).toBe(401);
  });
});
