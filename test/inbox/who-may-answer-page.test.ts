/**
 * The inbox's page and API for who may answer (docs/who-may-answer.md, docs/operating.md
 * "Inbox"): a quorum's progress and signers, a request's escalation as the server's clock says,
 * the edit form of an editable approval (checked by the tool's schema in the page and by its
 * DTO on the server), and the grants tab with revocation judged on the server. An inbox over
 * a SQLite file on 127.0.0.1, a real headless Chromium.
 */
import 'reflect-metadata';
import { IsInt, IsString, Matches, Max, Min } from 'class-validator';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { pendingOf, success, Tool, Toolkit } from 'toolnexus-ts';
import { CSRF_COOKIE, bearerTokens, createInbox, type Inbox, type GrantView, type SuspensionView } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';
import { launchBrowser, type Browser } from '../fixtures/browser';

jest.setTimeout(60_000);

const TOKENS = {
  ann: 'ann-token-0123456789abcdef0123',
  ben: 'ben-token-0123456789abcdef0123',
  clerk: 'clerk-token-0123456789abcdef01',
};
const HOUR = 3_600_000;

class RefundArgs {
  /** A rule the page's form cannot see (no `pattern` in its fields): only the DTO refuses it. */
  @IsString() @Matches(/^ord_/) order!: string;
  @IsInt() @Min(1) @Max(5000) cents!: number;
}

class WireArgs {
  @IsString() to!: string;
  @IsInt() @Min(1) cents!: number;
}

const ledger: Array<{ tool: string; cents: number; order?: string }> = [];

@Tool({
  name: 'refund',
  description: 'Refunds an order',
  args: RefundArgs,
  approval: { prompt: 'Refund it?', editable: true, escalate: { afterMs: HOUR, to: ['boss'] } },
})
class Refund {
  async run(args: RefundArgs) {
    ledger.push({ tool: 'refund', cents: args.cents, order: args.order });
    return success({ refunded: args.cents });
  }
}

@Tool({
  name: 'wire',
  description: 'Wires money',
  args: WireArgs,
  approval: { prompt: 'Wire it?', quorum: { of: 2, from: ['ann', 'ben'] } },
})
class Wire {
  async run(args: WireArgs) {
    ledger.push({ tool: 'wire', cents: args.cents });
    return success({ wired: args.cents });
  }
}

let dir: string;
let store: SqliteStore;
let coordinator: ResumeCoordinator;
let inbox: Inbox;
let server: Server;
let base: string;
let offset = 0;

async function call<T>(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as T };
}

async function ask(tool: string, args: Record<string, unknown>): Promise<string> {
  const result = await coordinator.execute(tool, args);
  const asked = pendingOf(result);
  if (!asked) throw new Error(`${tool} did not ask`);
  return asked.id;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-who-'));
  store = new SqliteStore({ filename: join(dir, 'inbox.db') });
  coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(new Refund(), new Wire()),
    store,
    policy: rulesPolicy([{ principals: ['ann', 'ben'], kinds: ['approval'] }]),
  });
  inbox = createInbox({
    coordinator,
    basePath: '/inbox',
    pollMs: 200,
    // The inbox's clock: what the page is told of escalations (moved by `offset`, never the browser's).
    clock: () => Date.now() + offset,
    authorize: bearerTokens([
      { token: TOKENS.ann, principal: { id: 'ann', name: 'Ann' } },
      { token: TOKENS.ben, principal: { id: 'ben', name: 'Ben' } },
      { token: TOKENS.clerk, principal: { id: 'clerk', name: 'Clerk <b>Carl</b>' } },
    ]),
  });
  server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  inbox?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  ledger.length = 0;
  offset = 0;
});

describe('the API', () => {
  it('gives an approver of an editable request its edit form, filled as asked; someone who may not approve gets none', async () => {
    const id = await ask('refund', { order: 'ord_1', cents: 1200 });
    const ann = await call<SuspensionView>('GET', `/inbox/api/suspensions/${id}`, TOKENS.ann);
    expect(ann.body.edit?.values).toEqual({ order: 'ord_1', cents: 1200 });
    expect(ann.body.edit?.fields).toEqual([
      { name: 'order', type: 'string', required: true },
      { name: 'cents', type: 'integer', required: true, minimum: 1, maximum: 5000 },
    ]);
    const clerk = await call<SuspensionView>('GET', `/inbox/api/suspensions/${id}`, TOKENS.clerk);
    expect(clerk.body.actions).toEqual([]);
    expect(clerk.body.edit).toBeUndefined();
  });

  it("says whether a request has escalated by the inbox's clock", async () => {
    const id = await ask('refund', { order: 'ord_2', cents: 100 });
    const before = await call<SuspensionView>('GET', `/inbox/api/suspensions/${id}`, TOKENS.ann);
    expect(before.body.escalation).toMatchObject({ to: ['boss'], escalated: false });
    offset = 2 * HOUR;
    const after = await call<SuspensionView>('GET', `/inbox/api/suspensions/${id}`, TOKENS.ann);
    expect(after.body.escalation).toMatchObject({ to: ['boss'], escalated: true });
  });

  it('revokes a grant for its giver or someone the policy lets approve its tool; refuses anyone else, changing nothing', async () => {
    const grant = await coordinator.grant({ by: { id: 'ann' }, tool: 'refund', scope: 'principal', subject: 'customer:rita' });
    const listed = await call<{ grants: GrantView[] }>('GET', '/inbox/api/grants', TOKENS.clerk);
    expect(listed.body.grants.find((g) => g.id === grant.id)?.mayRevoke).toBe(false);
    const refused = await call<{ error: { code: string } }>('POST', `/inbox/api/grants/${grant.id}/revoke`, TOKENS.clerk, {});
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('TOOLNEXUS_INBOX_FORBIDDEN');
    expect((await coordinator.grants()).find((g) => g.id === grant.id)?.revokedAt).toBeUndefined();

    expect((await call('GET', `/inbox/api/grants/${grant.id}/revoke`, TOKENS.ben)).status).toBe(405);
    expect((await call<{ error: { code: string } }>('POST', '/inbox/api/grants/grant-none/revoke', TOKENS.ben, {})).status).toBe(404);
    const ben = await call<{ grants: GrantView[] }>('GET', '/inbox/api/grants', TOKENS.ben);
    expect(ben.body.grants.find((g) => g.id === grant.id)?.mayRevoke).toBe(true);
    const revoked = await call<{ grant: GrantView }>('POST', `/inbox/api/grants/${grant.id}/revoke`, TOKENS.ben, {});
    expect(revoked.status).toBe(200);
    expect(revoked.body.grant.revokedAt).toEqual(expect.any(String));
    expect((await coordinator.grants()).find((g) => g.id === grant.id)?.revokedAt).toEqual(expect.any(String));
  });

  it('refuses a revocation posted with a browser session but without the page’s CSRF token', async () => {
    const grant = await coordinator.grant({ by: { id: 'ann' }, tool: 'refund', scope: 'principal', subject: 'customer:sam' });
    const page = await fetch(`${base}/inbox/`);
    const csrf = /toolnexus_inbox_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')?.[1] as string;
    const signIn = await fetch(`${base}/inbox/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `${CSRF_COOKIE}=${csrf}` },
      body: new URLSearchParams({ _csrf: csrf, token: TOKENS.ann }).toString(),
    });
    const session = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const post = (headers: Record<string, string>) =>
      call<{ error?: { code: string } }>(
        'POST',
        `/inbox/api/grants/${grant.id}/revoke`,
        '',
        {},
        { cookie: `${session}; ${CSRF_COOKIE}=${csrf}`, ...headers },
      );
    const forged = await post({});
    expect(forged.status).toBe(403);
    expect(forged.body.error?.code).toBe('TOOLNEXUS_INBOX_CSRF');
    expect((await coordinator.grants()).find((g) => g.id === grant.id)?.revokedAt).toBeUndefined();
    expect((await post({ 'x-toolnexus-csrf': csrf })).status).toBe(200);
  });
});

describe('the page, in Chromium', () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await browser.context.newPage();
    await page.goto(`${base}/inbox/`);
    await page.fill('#token', TOKENS.ann);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=principal]:has-text("Ann")');
  });

  afterAll(async () => {
    await browser?.close();
  });

  const card = (id: string) => page.locator(`article[data-id="${id}"]`);

  it('edits an approval: the schema’s bound is checked in the page, the DTO’s rule on the server, and the edit runs once', async () => {
    const id = await ask('refund', { order: 'ord_7', cents: 4000 });
    await page.click('nav button[data-tab=open]');
    await card(id).waitFor();
    await card(id)
      .locator('[data-testid=escalation]')
      .getByText(/escalates to boss at/)
      .waitFor();
    await card(id).locator('summary:has-text("Approve with changes")').click();
    const form = card(id).locator('[data-testid=edit-form]');
    await expect(form.locator('input[name="edit.cents"]').inputValue()).resolves.toBe('4000');

    await form.locator('input[name="edit.cents"]').fill('9000');
    await form.locator('button[type=submit]').click();
    await card(id).locator('.problem[data-field=cents]').getByText('must be at most 5000').waitFor();

    await form.locator('input[name="edit.cents"]').fill('2000');
    await form.locator('input[name="edit.order"]').fill('order-7');
    await form.locator('button[type=submit]').click();
    await card(id)
      .locator('.error')
      .getByText(/order must match/)
      .waitFor();
    expect((await coordinator.get(id))?.status).toBe('pending');
    expect(ledger).toEqual([]);

    await form.locator('input[name="edit.order"]').fill('ord_7');
    await form.locator('button[type=submit]').click();
    await page.locator('[data-testid=outcome]').getByText('refund: resolved by Ann').waitFor();
    expect(ledger).toEqual([{ tool: 'refund', cents: 2000, order: 'ord_7' }]);
    const stored = await coordinator.get(id);
    expect(stored?.answer?.args).toEqual({ order: 'ord_7', cents: 2000 });
    expect(stored?.args).toEqual({ order: 'ord_7', cents: 4000 });
  });

  it('shows a quorum’s progress and who signed, and the second signature runs it once', async () => {
    const id = await ask('wire', { to: 'acme', cents: 700 });
    await card(id).waitFor();
    await card(id).locator('button:has-text("Sign (0 of 2)")').click();
    await card(id).locator('[data-testid=quorum]').getByText('approvals: 1 of 2 (Ann)').waitFor();
    await card(id)
      .locator('[data-testid=signatures]')
      .getByText(/^Ann · /)
      .waitFor();
    expect(ledger).toEqual([]);
    const ben = await call('POST', `/inbox/api/suspensions/${id}/answer`, TOKENS.ben, { ok: true });
    expect(ben.status).toBe(200);
    expect(ledger).toEqual([{ tool: 'wire', cents: 700 }]);
    await card(id).waitFor({ state: 'detached' });
  });

  it('lists grants with what each principal may do, shows their words as text, and revokes one', async () => {
    const grant = await coordinator.grant({
      by: { id: 'ben', name: 'Ben <img src=x>' },
      tool: 'refund',
      scope: 'principal',
      subject: '<img src=x id=injected>',
    });
    await page.click('nav button[data-tab=grants]');
    const row = page.locator(`tr[data-id="${grant.id}"]`);
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('<img src=x id=injected>');
    expect(await page.locator('#injected').count()).toBe(0);
    await expect(page.locator('.filters').isHidden()).resolves.toBe(true);
    await row.locator('button:has-text("Revoke")').click();
    await row.getByText(/^revoked /).waitFor();
    expect((await coordinator.grants()).find((g) => g.id === grant.id)?.revokedAt).toEqual(expect.any(String));
    await expect(row.locator('button').count()).resolves.toBe(0);
  });
});
