/**
 * The inbox page in a real headless Chromium against an inbox in its own process
 * (test/fixtures/inbox/server.ts, a SQLite file): what a person types survives live updates
 * (text and focus, in an approval's reason and in an input form), the approver sees what came
 * of an answer, and signing out revokes the session so a copied cookie is refused.
 * docs/operating.md, "Live updates", "Sessions".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SESSION_COOKIE } from 'toolnexus-ts/inbox';
import { launchBrowser, type Browser } from '../fixtures/browser';
import { startChild, until, type Started } from '../fixtures/children';
import { SECRET_IBAN, TOKENS } from '../fixtures/inbox/tools';

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

async function runDone(runId: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const run = await control<{ phase?: string; text?: string }>('GET', `/test/runs/${encodeURIComponent(runId)}`);
    if (run.phase === 'done') return run.text ?? '';
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.phase}, not done`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const card = (id: string) => page.locator(`article[data-id="${id}"]`);
/** The focused element's name and value, read in the page. */
const focused = () =>
  page.evaluate(() => {
    // Runs in the page; typed loosely since this project's tsconfig has no DOM library.
    const doc = (globalThis as unknown as { document: { activeElement: ActiveField | null } }).document;
    const active = doc.activeElement;
    return { name: active?.name, value: active?.value, card: active?.closest('article')?.getAttribute('data-id') };
  });

interface ActiveField {
  name?: string;
  value?: string;
  closest(selector: string): { getAttribute(name: string): string | null } | null;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-live-'));
  child = startChild('inbox/server.ts', [join(dir, 'inbox.db')]);
  await until(() => child.stdout().includes('\n'), 30_000, 'the inbox server to listen');
  base = (JSON.parse(child.stdout().split('\n')[0] as string) as { url: string }).url;
  browser = await launchBrowser();
  page = await browser.context.newPage();
  await page.goto(`${base}/inbox/`);
  await page.fill('#token', TOKENS.alice);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-testid=principal]:has-text("Alice Approver")');
  await page.waitForSelector('#live.on');
});

afterAll(async () => {
  await browser?.close();
  child?.kill('SIGTERM');
  await child?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('the inbox page keeps what a person types', () => {
  it('a reason being typed keeps its text and focus when another suspension arrives; Decline sends it to the model', async () => {
    const first = await startRun(`pay 700 from acc-1 to ${SECRET_IBAN}`);
    const reason = card(first.pendingId).locator('textarea[name=reason]');
    await reason.click();
    await page.keyboard.type('wrong cost centre');

    // Another suspension arrives over the live stream and the list is redrawn.
    const second = await startRun('ship ORD-31');
    await card(second.pendingId).waitFor();
    expect(await focused()).toEqual({ name: 'reason', value: 'wrong cost centre', card: first.pendingId });
    // Typing goes on where it was.
    await page.keyboard.type(', ask finance');
    expect(await reason.inputValue()).toBe('wrong cost centre, ask finance');

    await card(first.pendingId).locator('button.decline').click();
    await card(first.pendingId).waitFor({ state: 'detached' });
    // The model-side result carries the reason.
    expect(await runDone(first.runId)).toMatch(/\(declined: "wrong cost centre, ask finance"\)$/);
    // The approver sees what came of it, redacted as the list is.
    const outcome = page.locator('[data-testid=outcome]');
    await outcome.waitFor();
    expect(await outcome.locator('h2').innerText()).toBe('transfer: declined by Alice Approver');
    const output = await outcome.locator('[data-testid=outcome-output]').innerText();
    expect(output).toContain('wrong cost centre, ask finance');
    expect(output).toContain('[redacted]');
    expect(await page.content()).not.toContain(SECRET_IBAN);
  });

  it('an input form being filled keeps its values and focus across a live update, then submits them', async () => {
    const run = await startRun('ship ORD-32');
    const form = card(run.pendingId).locator('form[data-testid=input-form]');
    await form.waitFor();
    await form.locator('select[name=carrier]').selectOption('UPS');
    await form.locator('input[name=insured]').check();
    await form.locator('input[name=note]').click();
    await page.keyboard.type('fragile');

    const other = await startRun(`pay 11 from acc-1 to ${SECRET_IBAN}`);
    await card(other.pendingId).waitFor();
    expect(await focused()).toEqual({ name: 'note', value: 'fragile', card: run.pendingId });
    await page.keyboard.type(', this side up');
    await form.locator('input[name=parcels]').fill('3');
    expect(await form.locator('select[name=carrier]').inputValue()).toBe('UPS');
    expect(await form.locator('input[name=insured]').isChecked()).toBe(true);

    await form.locator('button[type=submit]').click();
    await card(run.pendingId).waitFor({ state: 'detached' });
    expect(await runDone(run.runId)).toBe('Done: {"parcels":3,"carrier":"UPS","insured":true,"note":"fragile, this side up"}');
    const outcome = page.locator('[data-testid=outcome]');
    expect(await outcome.locator('h2').innerText()).toBe('shipping: resolved by Alice Approver');
    expect(await outcome.locator('[data-testid=outcome-output]').innerText()).toBe(
      '{"parcels":3,"carrier":"UPS","insured":true,"note":"fragile, this side up"}',
    );
    expect(await outcome.locator('[data-testid=outcome-run]').innerText()).toBe(`run ${run.runId}: done`);
  });

  it('after Approve the approver sees the tool’s result, not only "Nothing waits for an answer."', async () => {
    const run = await startRun(`pay 2500 from acc-1 to ${SECRET_IBAN}`);
    await card(run.pendingId).locator('button.approve').click();
    await card(run.pendingId).waitFor({ state: 'detached' });
    const outcome = page.locator('[data-testid=outcome]');
    await outcome.locator('h2:has-text("transfer: resolved by Alice Approver")').waitFor();
    expect(await outcome.locator('[data-testid=outcome-output]').innerText()).toBe('moved 2500 from acc-1');
    await outcome.locator('button:has-text("Dismiss")').click();
    expect(await outcome.isVisible()).toBe(false);
  });
});

describe('signing out in Chromium', () => {
  it('revokes the session: the cookie copied before sign-out is refused after it', async () => {
    const captured = (await browser.context.cookies(`${base}/inbox/`)).find((c) => c.name === SESSION_COOKIE);
    expect(captured?.value).toMatch(/^[\w-]{43}$/);
    expect(captured?.httpOnly).toBe(true);
    const withCopy = () => fetch(`${base}/inbox/api/suspensions`, { headers: { cookie: `${SESSION_COOKIE}=${captured?.value}` } });
    expect((await withCopy()).status).toBe(200);

    await page.click('button:has-text("Sign out")');
    await page.locator('#token').waitFor();
    expect((await withCopy()).status).toBe(401);
    // Signing in again gives another session id; the revoked one stays refused.
    await page.fill('#token', TOKENS.alice);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=principal]');
    const next = (await browser.context.cookies(`${base}/inbox/`)).find((c) => c.name === SESSION_COOKIE);
    expect(next?.value).not.toBe(captured?.value);
    expect((await withCopy()).status).toBe(401);
  });
});
