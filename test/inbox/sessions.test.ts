/**
 * The inbox's server-side sessions over real HTTP on 127.0.0.1 (docs/operating.md, "Sessions"):
 * sign-out revokes, idle and absolute expiry on an injected clock, a new session id on every
 * sign-in, a bounded number of sessions, a store shared by two inboxes (replicas), and
 * `trustProxy` for `Secure` cookies behind a TLS-terminating proxy.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRunner } from 'toolnexus-ts/agents';
import { bearerTokens, createInbox, CSRF_COOKIE, MemorySignInStore, SESSION_COOKIE, type InboxOptions } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { inboxRunner, TOKENS } from '../fixtures/inbox/tools';

let dir: string;
let store: SqliteStore;
let runner: AgentRunner;
const closers: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-sessions-'));
  store = new SqliteStore({ filename: join(dir, 'inbox.db') });
  runner = inboxRunner(store);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const tokens = () =>
  bearerTokens([
    { token: TOKENS.alice, principal: { id: 'alice', name: 'Alice' } },
    { token: TOKENS.bob, principal: { id: 'bob', name: 'Bob' } },
  ]);

async function serve(options: Partial<InboxOptions> = {}): Promise<string> {
  const inbox = createInbox({ runner, authorize: tokens(), basePath: '/inbox', ...options });
  const server: Server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    inbox.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/inbox`;
}

function cookieValue(setCookie: string | null, name: string): string | undefined {
  return new RegExp(`(?:^|, )${name}=([^;]*)`).exec(setCookie ?? '')?.[1];
}

/** The page's CSRF token (and its cookie), as a browser would get it. */
async function csrfOf(base: string, headers: Record<string, string> = {}): Promise<{ csrf: string; setCookie: string }> {
  const page = await fetch(`${base}/`, { headers });
  const setCookie = page.headers.get('set-cookie') ?? '';
  return { csrf: cookieValue(setCookie, CSRF_COOKIE) as string, setCookie };
}

/** Signs in with the form; returns the session cookie's value and the whole Set-Cookie. */
async function signIn(base: string, token: string, extra: Record<string, string> = {}) {
  const { csrf } = await csrfOf(base, extra);
  const response = await fetch(`${base}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CSRF_COOKIE}=${csrf}`, ...extra },
    body: new URLSearchParams({ _csrf: csrf, token }).toString(),
  });
  expect(response.status).toBe(303);
  const setCookie = response.headers.get('set-cookie');
  return { session: cookieValue(setCookie, SESSION_COOKIE) as string, setCookie: setCookie ?? '', csrf };
}

async function signOut(base: string, session: string, csrf: string): Promise<number> {
  const response = await fetch(`${base}/logout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${SESSION_COOKIE}=${session}; ${CSRF_COOKIE}=${csrf}` },
    body: new URLSearchParams({ _csrf: csrf }).toString(),
  });
  return response.status;
}

const me = async (base: string, session: string) =>
  (await fetch(`${base}/api/me`, { headers: { cookie: `${SESSION_COOKIE}=${session}` } })).status;

describe('inbox sessions', () => {
  it('sign-out revokes the session: a copy of the cookie taken before is refused', async () => {
    const base = await serve();
    const { session, csrf } = await signIn(base, TOKENS.alice);
    expect(await me(base, session)).toBe(200);
    // A proxy's own Basic credentials beside the cookie do not hide the session; a wrong bearer token is not rescued by it.
    const withHeader = (authorization: string) =>
      fetch(`${base}/api/me`, { headers: { cookie: `${SESSION_COOKIE}=${session}`, authorization } });
    expect((await withHeader('Basic cHJveHk6cHJveHk=')).status).toBe(200);
    expect((await withHeader('Bearer not-a-token-of-anyone-at-all')).status).toBe(401);
    expect(await signOut(base, session, csrf)).toBe(303);
    expect(await me(base, session)).toBe(401);
  });

  it('every sign-in gets a new session id that is not derived from the token, and ends the one it replaces', async () => {
    const base = await serve();
    const first = await signIn(base, TOKENS.alice);
    const second = await signIn(base, TOKENS.alice);
    expect(first.session).toMatch(/^[\w-]{43}$/);
    expect(second.session).not.toBe(first.session);
    // Both are live: two browsers of the same person.
    expect([await me(base, first.session), await me(base, second.session)]).toEqual([200, 200]);
    // Signing in again from a browser that holds a session replaces it.
    const { csrf } = await csrfOf(base);
    const again = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: `${SESSION_COOKIE}=${first.session}; ${CSRF_COOKIE}=${csrf}`,
      },
      body: new URLSearchParams({ _csrf: csrf, token: TOKENS.bob }).toString(),
    });
    const third = cookieValue(again.headers.get('set-cookie'), SESSION_COOKIE) as string;
    expect(await me(base, first.session)).toBe(401);
    const who = await fetch(`${base}/api/me`, { headers: { cookie: `${SESSION_COOKIE}=${third}` } });
    expect(((await who.json()) as { principal: { id: string } }).principal.id).toBe('bob');
  });

  it('expires an idle session and, however used, an old one, on the injected clock', async () => {
    let now = Date.parse('2026-01-01T08:00:00Z');
    const base = await serve({ clock: () => now, signIns: { idleMs: 10 * 60_000, maxAgeMs: 60 * 60_000 } });
    const idle = await signIn(base, TOKENS.alice);
    expect(idle.setCookie).toContain('Max-Age=3600');
    now += 9 * 60_000;
    expect(await me(base, idle.session)).toBe(200);
    now += 9 * 60_000; // 9 minutes after its last use: still live
    expect(await me(base, idle.session)).toBe(200);
    now += 10 * 60_000; // 10 minutes unused
    expect(await me(base, idle.session)).toBe(401);

    const busy = await signIn(base, TOKENS.alice);
    for (let minute = 5; minute < 60; minute += 5) {
      now += 5 * 60_000;
      expect(await me(base, busy.session)).toBe(200);
    }
    now += 5 * 60_000; // used all along, but an hour after sign-in
    expect(await me(base, busy.session)).toBe(401);
  });

  it('keeps a bounded number of sessions: past the bound the least recently used one ends', async () => {
    let now = Date.parse('2026-01-01T08:00:00Z');
    const sessions = new MemorySignInStore({ maxSignIns: 2 });
    const base = await serve({ clock: () => now, signIns: { store: sessions } });
    const a = await signIn(base, TOKENS.alice);
    const b = await signIn(base, TOKENS.bob);
    now += 2 * 60_000; // a use is recorded once a minute at most
    expect(await me(base, a.session)).toBe(200);
    const c = await signIn(base, TOKENS.bob);
    expect(sessions.size).toBe(2);
    expect([await me(base, a.session), await me(base, b.session), await me(base, c.session)]).toEqual([200, 401, 200]);
    expect(() => new MemorySignInStore({ maxSignIns: 0 })).toThrow(/maxSignIns must be a positive integer/);
  });

  it('two replicas sharing one session store: signed in on one, used and signed out on the other', async () => {
    const shared = new MemorySignInStore();
    const one = await serve({ signIns: { store: shared } });
    const two = await serve({ signIns: { store: shared } });
    const { session, csrf } = await signIn(one, TOKENS.alice);
    expect(await me(two, session)).toBe(200);
    // The CSRF cookie is per browser, not per replica: the same token passes on both.
    expect(await signOut(two, session, csrf)).toBe(303);
    expect(await me(one, session)).toBe(401);
    // Without a shared store, each replica knows only its own sessions.
    const alone = await serve();
    expect(await me(alone, (await signIn(one, TOKENS.alice)).session)).toBe(401);
  });

  it('a session ends when its token is no longer accepted', async () => {
    const shared = new MemorySignInStore();
    const before = await serve({ signIns: { store: shared } });
    const { session } = await signIn(before, TOKENS.alice);
    // The same store, the token list changed (alice's token rotated out).
    const after = await serve({
      signIns: { store: shared },
      authorize: bearerTokens([{ token: TOKENS.bob, principal: { id: 'bob' } }]),
    });
    expect(await me(before, session)).toBe(200);
    expect(await me(after, session)).toBe(401);
  });

  it('trustProxy: behind a TLS-terminating proxy (X-Forwarded-Proto: https) cookies are Secure; without it the header is not believed', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    const trusting = await serve({ trustProxy: true });
    expect((await csrfOf(trusting, https)).setCookie).toMatch(/; Secure/);
    expect((await signIn(trusting, TOKENS.alice, https)).setCookie).toMatch(/^toolnexus_inbox_session=[\w-]{43};.*; Secure; Max-Age=/);
    expect((await signIn(trusting, TOKENS.alice, { forwarded: 'for=10.0.0.1;proto=https' })).setCookie).toContain('; Secure');
    // Plain HTTP through the same proxy: no Secure, or the browser would drop the cookie.
    expect((await signIn(trusting, TOKENS.alice, { 'x-forwarded-proto': 'http' })).setCookie).not.toContain('Secure');

    const plain = await serve();
    expect((await csrfOf(plain, https)).setCookie).not.toContain('Secure');
    expect((await signIn(plain, TOKENS.alice, https)).setCookie).not.toContain('Secure');
    expect(() => createInbox({ runner, authorize: tokens(), trustProxy: 'yes' as never })).toThrow(/trustProxy must be true or false/);
    expect(() => createInbox({ runner, authorize: tokens(), signIns: { idleMs: 5 } })).toThrow(/signIns.idleMs must be/);
    expect(() => createInbox({ runner, authorize: () => ({ id: 'x' }), signIns: {} })).toThrow(
      /signIns applies to the bearer-token sign-in/,
    );
    expect(() => createInbox({ runner, authorize: tokens(), signIns: { store: {} as never } })).toThrow(
      /signIns.store needs a create\(\) method/,
    );
  });
});
