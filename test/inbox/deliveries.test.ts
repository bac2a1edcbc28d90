/**
 * Delivery failures visible in the inbox (docs/channels.md, "What is stored"): the JSON view of
 * one suspension lists where the channels delivered it, over real HTTP on 127.0.0.1, on a real
 * SQLite file whose delivery failed.
 */
import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRunner } from 'toolnexus-ts/agents';
import { bearerTokens, createInbox, type SuspensionView } from 'toolnexus-ts/inbox';
import { SqliteStore } from 'toolnexus-ts/sqlite';
import type { DeliveryStore } from '../../src/deliveries/store';
import { inboxRunner, SECRET_IBAN, TOKENS } from '../fixtures/inbox/tools';
import { listening } from '../fixtures/listen';

let dir: string;
let store: SqliteStore;
let runner: AgentRunner;
const closers: Array<() => Promise<void>> = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tnx-inbox-deliveries-'));
  store = new SqliteStore({ filename: join(dir, 'inbox.db') });
  runner = inboxRunner(store);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function inboxUrl(): Promise<string> {
  const inbox = createInbox({
    runner,
    authorize: bearerTokens([
      { token: TOKENS.bob, principal: { id: 'bob' } },
      { token: TOKENS.viewer, principal: { id: 'viewer' } },
    ]),
  });
  closers.push(async () => inbox.close());
  return listening(
    createServer((request, response) => inbox(request, response)),
    closers,
  );
}

async function get<T>(base: string, path: string, token: string = TOKENS.bob): Promise<T> {
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

describe('deliveries in the inbox', () => {
  it('GET /api/suspensions/<id> lists each delivery: posted, failed with its tries, next try and bounded one-line error', async () => {
    const result = await runner.run(`pay 2500 from acc-1 to ${SECRET_IBAN}`);
    const id = result.pending?.id as string;
    const base = await inboxUrl();
    // Nothing delivered yet: no deliveries field.
    expect((await get<SuspensionView>(base, `/api/suspensions/${encodeURIComponent(id)}`)).deliveries).toBeUndefined();

    const deliveries = (store as unknown as { deliveries: DeliveryStore }).deliveries;
    const at = Date.parse('2030-01-01T12:05:00.000Z');
    const row = { callId: id, version: 1, done: false, attempts: 0, dueAt: at };
    await deliveries.insertDelivery({ ...row, id: `${id} slack:C0FINANCE`, platform: 'slack', target: 'slack:C0FINANCE' });
    await deliveries.saveDelivery({
      ...row,
      id: `${id} slack:C0FINANCE`,
      platform: 'slack',
      target: 'slack:C0FINANCE',
      version: 2,
      message: { threadId: 'slack:C0FINANCE:', id: '1700000001.000100' },
      shown: 'key',
      leaseUntil: at,
    });
    await deliveries.insertDelivery({ ...row, id: `${id} email:ann`, platform: 'email', target: 'email:ann' });
    await deliveries.saveDelivery({
      ...row,
      id: `${id} email:ann`,
      platform: 'email',
      target: 'email:ann',
      version: 2,
      attempts: 3,
      error: `550 mailbox unavailable\u001b[2J\n${'x'.repeat(2000)}`,
    });

    const view = await get<SuspensionView>(base, `/api/suspensions/${encodeURIComponent(id)}`);
    expect(view.deliveries).toHaveLength(2);
    const [mail, slack] = view.deliveries!;
    expect(slack).toEqual({
      platform: 'slack',
      target: 'slack:C0FINANCE',
      posted: true,
      final: false,
      attempts: 0,
      nextAttemptAt: '2030-01-01T12:05:00.000Z',
    });
    expect(mail).toMatchObject({ platform: 'email', target: 'email:ann', posted: false, final: false, attempts: 3 });
    expect(mail!.nextAttemptAt).toBe('2030-01-01T12:05:00.000Z');
    expect(mail!.error).toMatch(/^550 mailbox unavailable \[2J x+…$/);
    expect(mail!.error!.length).toBeLessThanOrEqual(300);
    // Nothing of the stored row beyond the view: no message id, card key, lease or version.
    const raw = JSON.stringify(view.deliveries);
    for (const hidden of ['1700000001', 'shown', 'leaseUntil', 'version', 'threadId']) expect(raw).not.toContain(hidden);

    // The list the page renders carries them too.
    const listed = await get<{ suspensions: SuspensionView[] }>(base, '/api/suspensions');
    expect(listed.suspensions.find((s) => s.id === id)?.deliveries).toEqual(view.deliveries);

    // A delivery brought to the outcome is final, with no next try.
    const slackRow = (await deliveries.getDelivery(`${id} slack:C0FINANCE`))!;
    await deliveries.saveDelivery({ ...slackRow, version: slackRow.version + 1, done: true });
    const after = await get<SuspensionView>(base, `/api/suspensions/${encodeURIComponent(id)}`);
    expect(after.deliveries?.find((d) => d.platform === 'slack')).toEqual({
      platform: 'slack',
      target: 'slack:C0FINANCE',
      posted: true,
      final: true,
      attempts: 0,
    });
  });
  it('shows the error only to a viewer who may act on the call, and lists deliveries of open calls only', async () => {
    const result = await runner.run(`pay 2500 from acc-1 to ${SECRET_IBAN}`);
    const id = result.pending?.id as string;
    const base = await inboxUrl();
    const deliveries = (store as unknown as { deliveries: DeliveryStore }).deliveries;
    const row = { callId: id, version: 1, done: false, attempts: 0, dueAt: Date.parse('2030-01-01T12:05:00.000Z') };
    await deliveries.insertDelivery({ ...row, id: `${id} email:ann`, platform: 'email', target: 'email:ann' });
    const failed = { ...row, id: `${id} email:ann`, platform: 'email', target: 'email:ann', version: 2, attempts: 3 };
    await deliveries.saveDelivery({ ...failed, error: '421 see https://mail.internal.example/queue?id=7' });
    const path = `/api/suspensions/${encodeURIComponent(id)}`;

    // Bob may answer: he sees the transport's words.
    const answerer = await get<SuspensionView>(base, path);
    expect(answerer.actions).toContain('answer');
    expect(answerer.deliveries?.[0]?.error).toContain('mail.internal.example');
    // The viewer may not act on it: the delivery's state, never its error text.
    const viewer = await get<SuspensionView>(base, path, TOKENS.viewer);
    expect(viewer.actions).toEqual([]);
    expect(viewer.deliveries).toEqual([
      { platform: 'email', target: 'email:ann', posted: false, final: false, attempts: 3, nextAttemptAt: '2030-01-01T12:05:00.000Z' },
    ]);
    const listed = await get<{ suspensions: SuspensionView[] }>(base, '/api/suspensions', TOKENS.viewer);
    expect(JSON.stringify(listed)).not.toContain('mail.internal.example');

    // Settled, the call's view carries no deliveries (history lists them nowhere).
    await runner.coordinator.cancel(id, 'not needed', { by: { id: 'bob' } });
    const settled = await get<SuspensionView>(base, path);
    expect(settled.status).not.toBe('pending');
    expect(settled.deliveries).toBeUndefined();
  });
});
