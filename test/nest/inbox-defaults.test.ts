/**
 * The new user's path (docs/operating.md, "Inbox", Nest): an app booted with
 * `NestFactory.create(AppModule)` and nothing else (Nest's default body parsers on), the inbox
 * signed into and used in a real headless Chromium: a run's approval approved on the page, the
 * outcome shown, the run done. On Express and on Fastify.
 */
import 'reflect-metadata';
import { Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentRunner, type RunStore } from 'toolnexus-ts/agents';
import { bearerToken } from 'toolnexus-ts/inbox';
import { ToolnexusInboxModule, ToolnexusModule } from 'toolnexus-ts/nest';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { launchBrowser, type Browser } from '../fixtures/browser';
import { ConnectTool, scriptedModel, SECRET_IBAN, ShippingTool, TOKENS, TransferTool } from '../fixtures/inbox/tools';

jest.setTimeout(60_000);
// Once in a full CI run on Node 24 (2 cores, Chromium and two jest workers) the Fastify case
// hung past 60 s and did not recur in isolation. Every step without a timeout of its own is now
// bounded and named (`step`), so a hang fails saying where; one retry keeps that rare stall of
// the machine from failing CI while its log shows which step it was.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

/** `work`, or an error naming `what` if it takes longer than 15 s. */
async function step<T>(what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in 15 s`)), 15_000);
  });
  try {
    return await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
}

let dir: string;
let browser: Browser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-nest-inbox-'));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

function appModule(file: string) {
  @Module({
    imports: [
      ToolnexusModule.forRoot({ model: scriptedModel(), store: new SqliteStore({ filename: file }) }),
      ToolnexusInboxModule.forRoot({ authorize: bearerToken(TOKENS.alice, { id: 'alice', name: 'Alice Approver' }) }),
    ],
    providers: [TransferTool, ShippingTool, ConnectTool],
  })
  class AppModule {}
  return AppModule;
}

async function signInAndApprove(app: INestApplication): Promise<void> {
  await step('app.listen', app.listen(0, '127.0.0.1'));
  const root = `http://127.0.0.1:${((app.getHttpServer() as Server).address() as AddressInfo).port}`;
  const runner = app.get(AgentRunner);
  const run = await step('runner.run', runner.run(`pay 2500 from acc-1 to ${SECRET_IBAN}`));
  expect(run.status).toBe('halted');

  const page = await step('newPage', browser.context.newPage());
  try {
    expect((await page.goto(`${root}/inbox/`))?.status()).toBe(401);
    await page.fill('#token', TOKENS.alice);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=principal]:has-text("Alice Approver")');
    const card = page.locator(`article[data-id="${run.pending?.id as string}"]`);
    await card.locator('textarea[name=reason]').fill('invoice checked');
    await card.locator('button.approve').click();
    await card.waitFor({ state: 'detached' });
    const outcome = page.locator('[data-testid=outcome]');
    await outcome.locator('h2:has-text("transfer: resolved by Alice Approver")').waitFor();
    expect(await outcome.locator('[data-testid=outcome-output]').innerText()).toBe('moved 2500 from acc-1');
    expect(await outcome.locator('[data-testid=outcome-run]').innerText()).toBe(`run ${run.runId}: done`);
    expect(await page.content()).not.toContain(SECRET_IBAN);
    const checkpoint = await (app.get(AgentRunner).coordinator.store as unknown as RunStore).loadRun(run.runId);
    expect([checkpoint?.state.phase, checkpoint?.state.text]).toEqual(['done', 'Done: moved 2500 from acc-1']);
  } finally {
    await step('page.close', page.close());
    await step('app.close', app.close());
  }
}

describe('ToolnexusInboxModule under NestFactory.create(AppModule), in Chromium', () => {
  it('on Express', async () => {
    await signInAndApprove(await step('NestFactory.create', NestFactory.create(appModule(join(dir, 'express.db')), { logger: false })));
  });

  it('on Fastify', async () => {
    const file = join(dir, `fastify-${Date.now()}.db`);
    await signInAndApprove(await step('NestFactory.create', NestFactory.create(appModule(file), new FastifyAdapter(), { logger: false })));
  });
});
