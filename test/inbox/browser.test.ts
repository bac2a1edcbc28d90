/**
 * The inbox page in a real headless Chromium, against an inbox served by a real child process
 * (test/fixtures/inbox/server.ts) over a SQLite file: runs halt on it, approvers answer on the
 * page, the runs resume to `done` in that process, and the page follows every change live.
 * docs/operating.md, "Inbox"; the screenshot it takes is docs/inbox.png when run with
 * UPDATE_SCREENSHOT=1 (otherwise into a temporary folder, so a test run leaves the tree clean).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { launchBrowser, type Browser } from '../fixtures/browser';
import { startChild, until, type Started } from '../fixtures/children';
import { inboxToolkit, SECRET_IBAN, TOKENS } from '../fixtures/inbox/tools';

jest.setTimeout(60_000);

let dir: string;
let child: Started;
let base: string;
let browser: Browser;
let page: Page;

async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await response.json()) as T;
}

async function startRun(message: string): Promise<{ runId: string; pendingId: string }> {
  const run = await control<{ runId: string; status: string; pendingId: string }>('POST', '/test/runs', { message });
  expect(run.status).toBe('halted');
  return run;
}

/** Waits (bounded) until the fixture's run reaches `done`, and returns its final text. */
async function runDone(runId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const run = await control<{ phase?: string; text?: string }>('GET', `/test/runs/${encodeURIComponent(runId)}`);
    if (run.phase === 'done') return run.text ?? '';
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.phase}, not done`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function api(path: string, token: string = TOKENS.alice): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base}/inbox/api/${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, text: await response.text() };
}

/** Waits (bounded) until `locator` matches exactly `n` elements. */
async function countIs(locator: Locator, n: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await locator.count()) !== n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} matches of ${String(locator)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const card = (id: string) => page.locator(`article[data-id="${id}"]`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-browser-'));
  child = startChild('inbox/server.ts', [join(dir, 'inbox.db')]);
  await until(() => child.stdout().includes('\n'), 30_000, 'the inbox server to listen');
  base = (JSON.parse(child.stdout().split('\n')[0] as string) as { url: string }).url;
  browser = await launchBrowser();
  page = await browser.context.newPage();
});

afterAll(async () => {
  await browser?.close();
  child?.kill('SIGTERM');
  await child?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('the inbox page in Chromium', () => {
  it('refuses a request without credentials, and a wrong token', async () => {
    expect((await fetch(`${base}/inbox/api/suspensions`)).status).toBe(401);
    expect((await api('suspensions', 'not-a-token-of-anyone-at-all')).status).toBe(401);
    const response = await page.goto(`${base}/inbox/`);
    expect(response?.status()).toBe(401);
    await expect(page.locator('#token').isVisible()).resolves.toBe(true);
    expect(await page.content()).not.toContain('data-testid="suspension"');
    await page.fill('#token', 'wrong-token-0123456789abcdef');
    await page.click('button[type=submit]');
    await page.waitForSelector('text=That token does not sign anyone in.');
  });

  it('lists a run’s approval live, an approver approves with a reason, and the run resumes to done in the server', async () => {
    await page.fill('#token', TOKENS.alice);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=principal]:has-text("Alice Approver")');
    await page.waitForSelector('#live.on');

    const run = await startRun(`pay 2500 from acc-1 to ${SECRET_IBAN}`);
    // No reload: the event stream tells the page.
    await card(run.pendingId).waitFor();
    const text = await card(run.pendingId).innerText();
    expect(text).toContain('transfer');
    expect(text).toContain('asked by: agent demo-bot');
    expect(text).toContain(`run ${run.runId}`);
    expect(text).toContain('Transfer 2500 from acc-1 to');
    // The expiry counts down: two hours from when the tool asked.
    expect(await card(run.pendingId).locator('.expiry').innerText()).toMatch(/^expires in (1h 59m|2h 0m) \d+s$/);
    expect(await page.content()).not.toContain(SECRET_IBAN);

    await card(run.pendingId).locator('textarea[name=reason]').fill('invoice 7 checked');
    await card(run.pendingId).locator('button.approve').click();
    await card(run.pendingId).waitFor({ state: 'detached' });
    expect(await runDone(run.runId)).toBe('Done: moved 2500 from acc-1');

    await page.click('nav button[data-tab=history]');
    const row = page.locator(`[data-testid=history] tr[data-id="${run.pendingId}"]`);
    await row.waitFor();
    const settled = await row.innerText();
    expect(settled).toContain('resolved');
    expect(settled).toContain('Alice Approver');
    expect(settled).toContain('invoice 7 checked');
    await page.click('nav button[data-tab=open]');
  });

  it('declines with a reason; the run is told why', async () => {
    const run = await startRun(`pay 90000 from acc-1 to ${SECRET_IBAN}`);
    await card(run.pendingId).waitFor();
    await card(run.pendingId).locator('textarea[name=reason]').fill('not in this budget');
    await card(run.pendingId).locator('button.decline').click();
    await card(run.pendingId).waitFor({ state: 'detached' });
    // A refusal never replays the tool: the model is told the request and the approver's words.
    expect(await runDone(run.runId)).toMatch(/^Stopped: declined\/expired: Transfer 90000 .*\(declined: "not in this budget"\)$/);
  });

  it('an input form shows a validation error, then takes the fixed answer', async () => {
    const run = await startRun('ship ORD-7');
    const form = card(run.pendingId).locator('form[data-testid=input-form]');
    await form.waitFor();
    expect(await form.locator('label:has-text("Parcels") .req').count()).toBe(1);
    await form.locator('input[name=parcels]').fill('0');
    await form.locator('button[type=submit]').click();
    await form.locator('.problem[data-field=parcels]:has-text("must be at least 1")').waitFor();
    await form.locator('.problem[data-field=carrier]:has-text("is required")').waitFor();

    // The server checks too: what the page would have refused is refused without it.
    const csrf = (await page.getAttribute('meta[name="toolnexus-csrf"]', 'content')) ?? '';
    const refused = await page.evaluate(
      async ({ id, csrf }) => {
        const response = await fetch(`api/suspensions/${encodeURIComponent(id)}/answer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-toolnexus-csrf': csrf },
          body: JSON.stringify({ ok: true, data: { parcels: 0, carrier: 'Zeppelin' } }),
        });
        return { status: response.status, body: (await response.json()) as { error: { problems: unknown } } };
      },
      { id: run.pendingId, csrf },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.problems).toEqual([
      { field: 'parcels', message: 'must be at least 1' },
      { field: 'carrier', message: 'must be one of DHL, UPS, Post' },
    ]);

    await form.locator('input[name=parcels]').fill('2');
    await form.locator('select[name=carrier]').selectOption('DHL');
    await form.locator('input[name=insured]').check();
    await form.locator('button[type=submit]').click();
    await card(run.pendingId).waitFor({ state: 'detached' });
    expect(await runDone(run.runId)).toBe('Done: {"parcels":2,"carrier":"DHL","insured":true}');
  });

  it('shows a suspension another process recorded in the same store, without a reload', async () => {
    const store = new SqliteStore({ filename: join(dir, 'inbox.db') });
    try {
      const coordinator = new ResumeCoordinator({ toolkit: inboxToolkit(), store });
      const asked = pendingOf(await coordinator.execute('connect', { provider: 'github' }));
      if (!asked) throw new Error('connect did not suspend');
      await card(asked.id).waitFor();
      const link = card(asked.id).locator('a[href="https://auth.example.test/github"]');
      expect(await link.innerText()).toBe('https://auth.example.test/github');
      // Cancelled elsewhere: it leaves the page too.
      await coordinator.cancel(asked.id, 'not needed');
      await card(asked.id).waitFor({ state: 'detached' });
    } finally {
      await store.close();
    }
  });

  it('shows where a request was delivered, a failed delivery with its tries and error (docs/channels.md)', async () => {
    const store = new SqliteStore({ filename: join(dir, 'inbox.db') });
    try {
      const coordinator = new ResumeCoordinator({ toolkit: inboxToolkit(), store });
      const asked = pendingOf(await coordinator.execute('connect', { provider: 'gitlab' }));
      if (!asked) throw new Error('connect did not suspend');
      const row = { callId: asked.id, version: 1, done: false, attempts: 0, dueAt: Date.parse('2030-01-01T12:05:00Z') };
      await store.deliveries.insertDelivery({ ...row, id: `${asked.id} slack:C0FINANCE`, platform: 'slack', target: 'slack:C0FINANCE' });
      await store.deliveries.saveDelivery({
        ...row,
        id: `${asked.id} slack:C0FINANCE`,
        platform: 'slack',
        target: 'slack:C0FINANCE',
        version: 2,
        message: { threadId: 'slack:C0FINANCE:', id: '1700000001.000100' },
      });
      await store.deliveries.insertDelivery({ ...row, id: `${asked.id} email:ann`, platform: 'email', target: 'email:ann' });
      await store.deliveries.saveDelivery({
        ...row,
        id: `${asked.id} email:ann`,
        platform: 'email',
        target: 'email:ann',
        version: 2,
        attempts: 3,
        error: '550 <b>mailbox</b> unavailable',
      });
      // Deliveries announce nothing: the page shows them when it next loads the request.
      await page.reload();
      const list = card(asked.id).locator('[data-testid=deliveries] li');
      await countIs(list, 2);
      expect(await list.nth(0).innerText()).toMatch(/^email:ann: failed 3 times, next try .+: 550 <b>mailbox<\/b> unavailable$/);
      expect(await list.nth(1).innerText()).toBe('slack:C0FINANCE: posted');
      await coordinator.cancel(asked.id, 'not needed');
      await card(asked.id).waitFor({ state: 'detached' });
    } finally {
      await store.close();
    }
  });

  it('refuses a form posted from another origin, and a same-origin post without the CSRF token', async () => {
    const run = await startRun(`pay 10 from acc-1 to ${SECRET_IBAN}`);
    await card(run.pendingId).waitFor();
    const target = `${base}/inbox/api/suspensions/${encodeURIComponent(run.pendingId)}/answer`;
    // Another origin (another port on this host: same site, so the browser sends the cookies).
    const evil: Server = createServer((_request, response) => {
      response.setHeader('content-type', 'text/html');
      response.end(
        `<form id="f" method="post" enctype="text/plain" action="${target}"><input name='{"ok":true,"x":"' value='"}'></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const other = await browser.context.newPage();
      const [response] = await Promise.all([
        other.waitForResponse((r) => r.url() === target),
        other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`),
      ]);
      expect(response.status()).toBe(403);
      expect(await response.text()).toContain('TOOLNEXUS_INBOX_CSRF');
      await other.close();
    } finally {
      evil.closeAllConnections();
      await new Promise((resolve) => evil.close(resolve));
    }
    const bare = await page.evaluate(async (url) => {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ok":true}' });
      return response.status;
    }, target);
    expect(bare).toBe(403);
    expect(JSON.parse((await api(`suspensions/${encodeURIComponent(run.pendingId)}`)).text)).toMatchObject({ status: 'pending' });
  });

  it('never shows a sensitive argument: page, API and log; takes the docs screenshot', async () => {
    await startRun('ship ORD-8');
    await startRun(`pay 4200 from acc-2 to ${SECRET_IBAN}`);
    await page.reload();
    await page.waitForSelector('article[data-testid=suspension] form');
    await page.waitForSelector('#live.on');
    expect(await page.content()).not.toContain(SECRET_IBAN);
    for (const status of ['open', 'settled']) {
      const listed = await api(`suspensions?status=${status}`);
      expect(listed.status).toBe(200);
      expect(listed.text).not.toContain(SECRET_IBAN);
    }
    const log = child.stderr();
    expect(log).toContain('log {"event":"answered"');
    for (const secret of [SECRET_IBAN, TOKENS.alice, TOKENS.bob]) expect(log).not.toContain(secret);
    // Filters: by kind, then by run (the run link on a card sets it).
    await page.selectOption('#kind', 'input');
    await page.locator('article:has(.badge.approval)').first().waitFor({ state: 'detached' });
    expect(await page.locator('article:has(.badge.input)').count()).toBeGreaterThan(0);
    await page.selectOption('#kind', '');
    const runLink = page.locator('article:has(.badge.approval)').first().locator('a[title="show only this run"]');
    const runId = (await runLink.innerText()).replace(/^run /, '');
    await runLink.click();
    await countIs(page.locator('article'), 1);
    expect(await page.locator('article').innerText()).toContain(`run ${runId}`);
    await page.fill('#run', '');
    await page.dispatchEvent('#run', 'change');
    await page.locator('article:has(.badge.input)').first().waitFor();
    await page.locator('#run').blur();
    const shot = process.env.UPDATE_SCREENSHOT === '1' ? join(__dirname, '..', '..', 'docs', 'inbox.png') : join(dir, 'inbox.png');
    expect((await page.screenshot({ path: shot, fullPage: false })).length).toBeGreaterThan(10_000);

    // Signing out ends the cookie session: the page asks for a token again, the API refuses.
    await page.click('button:has-text("Sign out")');
    await page.locator('#token').waitFor();
    const status = await page.evaluate(async () => (await fetch('api/suspensions')).status);
    expect(status).toBe(401);
  });
});
