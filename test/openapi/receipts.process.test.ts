/**
 * Idempotency keys and receipts end to end (docs/tools.md, "Idempotency keys and receipts";
 * issue 50). A payment API on 127.0.0.1 honours `Idempotency-Key` as Stripe does. An OpenAPI
 * `POST /charges` call is approved in a child process that is SIGKILLed after the request
 * reached the API and the tool recorded its receipt, before the outcome was written. After the
 * takeover the retried request carries the same key and the API charged once; the receipt of
 * the first attempt is in the store, the inbox, the recovery request and the replay's `ctx.receipts`.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf, Toolkit } from 'toolnexus-ts';
import { ResumeCoordinator, type Receipt } from 'toolnexus-ts/suspension';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import { bearerTokens, createInbox, type SuspensionView } from 'toolnexus-ts/inbox';
import { startChild, until } from '../fixtures/children';
import { listening } from '../fixtures/listen';
import { chargeTools, paymentApi, type PaymentApi } from '../fixtures/openapi/charges';

const LEASE_MS = 400;
const TOKEN = 'ops-token-0123456789abcdef';
const PLACE = { runId: 'run-pay-1', callId: 'call-charge-1' };
/** The key every attempt of the call sends: the digest of its run and call id (src/suspension/idempotency.ts). */
const KEY = `tnx_${createHash('sha256').update(`${PLACE.runId}\n${PLACE.callId}`).digest('base64url')}`;
const FIRST_RECEIPT = { system: 'payments', id: 'ch_1', status: 'succeeded', detail: { amount: 4200 }, attempt: 1 };

let dir: string;
let api: PaymentApi;
let baseUrl: string;
const closers: Array<() => Promise<void>> = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-receipts-'));
  api = paymentApi();
  baseUrl = await listening(api.server, closers);
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  rmSync(dir, { recursive: true, force: true });
});

/** A coordinator on the shared file whose toolkit tells what each run of the tool saw in `ctx.receipts`. */
async function coordinatorOn(file: string, idempotent: boolean) {
  const store = new SqliteStore(file);
  closers.push(() => store.close());
  const seen: Array<readonly Receipt[] | undefined> = [];
  const toolkit = new Toolkit({ hooks: { beforeTool: ({ ctx }) => void seen.push(ctx?.receipts) } });
  for (const tool of await chargeTools(baseUrl, { idempotent })) toolkit.register(tool);
  return { store, seen, coordinator: new ResumeCoordinator({ toolkit, store, leaseMs: LEASE_MS }) };
}

/** Suspends the charge, has a child approve it and dies before its outcome: the id, and the call as the crash left it. */
async function chargeAndCrash(file: string, idempotent: boolean) {
  const parts = await coordinatorOn(file, idempotent);
  const asked = await parts.coordinator.execute('createCharge', { body: { amount: 4200, currency: 'eur' } }, {}, PLACE);
  const id = pendingOf(asked)?.id as string;
  expect(id).toBeDefined();
  expect(api.seen).toEqual([]);
  const held = join(dir, 'held');
  const child = startChild('openapi/charge-child.ts', [file, baseUrl, id, String(LEASE_MS)], { HELD_FILE: held });
  await until(() => existsSync(held) || child.hasExited(), 120_000, 'the child to reach the outcome’s write');
  expect(child.hasExited()).toBe(false);
  child.kill('SIGKILL');
  expect((await child.exited).signal).toBe('SIGKILL');
  return { ...parts, id };
}

it('a charge whose process died before its outcome is charged once, and its receipt reaches the inbox, the recovery request and the replay', async () => {
  const file = join(dir, 'pay.db');
  const { store, coordinator, seen, id } = await chargeAndCrash(file, false);
  // The request reached the API with the call's key, and the receipt was written before the outcome.
  expect(api.seen).toEqual([{ key: KEY, charged: true }]);
  const crashed = (await store.get(id))!;
  expect(crashed.status).toBe('resolving');
  expect(crashed.outcome).toBeUndefined();
  expect(crashed.receipts).toEqual([{ ...FIRST_RECEIPT, at: expect.any(String) as string }]);

  const inbox = createInbox({ coordinator, authorize: bearerTokens([{ token: TOKEN, principal: { id: 'ops' } }]) });
  closers.push(async () => inbox.close());
  const inboxUrl = await listening(
    createServer((req, res) => void inbox(req, res)),
    closers,
  );
  const view = async (suspension: string): Promise<SuspensionView> => {
    const response = await fetch(`${inboxUrl}/api/suspensions/${encodeURIComponent(suspension)}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as SuspensionView;
  };
  expect((await view(id)).receipts).toEqual([{ ...FIRST_RECEIPT, at: crashed.receipts![0]!.at }]);

  // The lease lapses on SQLite's clock (this host's); the takeover rule asks a person, naming what the API said.
  await until(() => Date.now() > Date.parse(crashed.leaseUntil!) + 100, 30_000, 'the dead holder’s lease to lapse');
  const [taken] = await coordinator.recoverLapsed();
  expect(taken?.status).toBe('taken');
  const recovery = pendingOf(taken?.status === 'taken' ? taken.outcome : { output: '', isError: true })!;
  expect(recovery.kind).toBe('recovery');
  expect(recovery.prompt).toContain('it ran: payments says ch_1 succeeded (attempt 1)');
  expect(recovery.data?.receipts).toEqual([{ ...FIRST_RECEIPT, at: crashed.receipts![0]!.at }]);
  expect((await view(recovery.id)).receipts).toEqual([{ ...FIRST_RECEIPT, at: crashed.receipts![0]!.at }]);
  expect(api.seen).toHaveLength(1);

  // Approved, the replay sees the first attempt's receipt and sends the same key: the API answers the first charge.
  const outcome = await coordinator.resolve({ id: recovery.id, ok: true });
  expect(outcome.isError).toBe(false);
  expect(JSON.parse(outcome.output)).toMatchObject({ id: 'ch_1', status: 'succeeded' });
  expect(seen.at(-1)).toEqual([{ ...FIRST_RECEIPT, at: crashed.receipts![0]!.at }]);
  expect(api.seen).toEqual([
    { key: KEY, charged: true },
    { key: KEY, charged: false },
  ]);
  expect(api.charges).toEqual([{ id: 'ch_1', amount: 4200 }]);
  const settled = (await store.get(recovery.id))!;
  expect(settled.status).toBe('resolved');
  expect(settled.receipts?.map((r) => r.id)).toEqual(['ch_1', 'ch_1']);
}, 180_000);

it('an idempotent charge is replayed by the takeover with the same key and the earlier receipt in ctx.receipts, charged once', async () => {
  const file = join(dir, 'pay-idem.db');
  const { store, coordinator, seen, id } = await chargeAndCrash(file, true);
  const crashed = (await store.get(id))!;
  expect(crashed.receipts).toEqual([{ ...FIRST_RECEIPT, at: expect.any(String) as string }]);
  await until(() => Date.now() > Date.parse(crashed.leaseUntil!) + 100, 30_000, 'the dead holder’s lease to lapse');
  const [taken] = await coordinator.recoverLapsed();
  expect(taken?.status).toBe('taken');
  expect(seen).toEqual([undefined, [{ ...FIRST_RECEIPT, at: crashed.receipts![0]!.at }]]);
  expect(api.seen).toEqual([
    { key: KEY, charged: true },
    { key: KEY, charged: false },
  ]);
  expect(api.charges).toHaveLength(1);
  const settled = (await store.get(id))!;
  expect(settled).toMatchObject({ status: 'resolved', fence: 2 });
  expect(settled.receipts?.map((r) => [r.id, r.attempt])).toEqual([
    ['ch_1', 1],
    ['ch_1', 2],
  ]);
}, 180_000);
