/**
 * The real `chat` SDK and its Microsoft Teams adapter, end to end (docs/channels.md, "How the
 * clicks are tested"): the 2-of-3 finance refund's Adaptive Card goes to a stand-in for the Bot
 * Framework connector on 127.0.0.1 (the conversation's `serviceUrl`), and each click is an
 * Action.Submit message activity as Teams sends it, with a Bot Framework token the Teams SDK
 * verifies itself: RS256, issuer https://api.botframework.com, audience the app id, `serviceurl`
 * the activity's, its key looked up in the signing keys the SDK fetches from the public cloud's
 * URL (login.botframework.com), served here from a key the test holds (fixed-urls.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pendingOf } from 'toolnexus-ts';
import { MemoryStore } from 'toolnexus-ts/memory';
import { createChannels, type Channels, type PlatformUser } from 'toolnexus-ts/channels';
import type { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { listening } from '../fixtures/listen';
import { jwt, routeHosts, signingKey, type SigningKey } from '../fixtures/channels/fixed-urls';
import { CARD_NUMBER, refundCoordinator } from '../fixtures/channels/refund';

jest.setTimeout(60_000);

const APP_ID = '00000000-0000-4000-8000-00000000a99a';
const KEYS_PATH = '/v1/.well-known/keys';
const CONVERSATION = '19:finance@thread.tacv2';

/** Teams users of the finance team, and one who maps to nobody. */
const DIRECTORY: Record<string, string> = { '29:ann': 'finance:ann', '29:ben': 'finance:ben', '29:cy': 'finance:cy' };
const principalOf = (user: PlatformUser) => (DIRECTORY[user.id] ? { id: DIRECTORY[user.id]! } : undefined);

interface ConnectorCall {
  method: string;
  path: string;
  query: string;
  authorization?: string;
  body: Record<string, unknown>;
  raw: string;
}

let closers: Array<() => Promise<void>>;
let calls: ConnectorCall[];
let key: SigningKey;
let serviceUrl: string;
let store: MemoryStore;
let coordinator: ResumeCoordinator;
let channels: Channels;
let runs: string;
let dir: string;

const activities = () => calls.filter((c) => c.path.startsWith('/v3/conversations/'));
const posts = () => activities().filter((c) => c.method === 'POST' && c.query === '');
const privates = () => activities().filter((c) => c.method === 'POST' && c.query.includes('isTargetedActivity=true'));
const updates = () => activities().filter((c) => c.method === 'PUT');
const shown = (call: ConnectorCall | undefined) => JSON.stringify(call?.body.attachments);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-teams-'));
  runs = join(dir, 'runs.log');
  process.env.REFUND_LOG = runs;
});

afterAll(() => {
  delete process.env.REFUND_LOG;
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  closers = [];
  calls = [];
  // The Teams SDK's app logs to the console through a logger of its own (the adapter passes it
  // none of ours): a deprecation notice for the adapter's `skipAuth: false`, and each refused token.
  const spies = [
    jest.spyOn(console, 'warn').mockImplementation(() => undefined),
    jest.spyOn(console, 'error').mockImplementation(() => undefined),
  ];
  closers.push(async () => spies.forEach((spy) => spy.mockRestore()));
  key = signingKey('bf-key-1');
  let sent = 0;
  // One server for Microsoft here: the Bot Framework's signing keys and the connector API.
  const microsoft = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const [path = '', query = ''] = (req.url ?? '').split('?');
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      calls.push({
        method: req.method ?? '',
        path,
        query,
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        body,
        raw,
      });
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'GET' && path === KEYS_PATH) return reply(200, { keys: [key.jwk] });
      const activity = /^\/v3\/conversations\/[^/]+\/activities(?:\/([^/]+))?$/.exec(path);
      if (activity && req.method === 'POST') return reply(201, { id: `act-${++sent}` });
      if (activity && req.method === 'PUT') return reply(200, { id: decodeURIComponent(activity[1] ?? '') });
      reply(404, { error: { code: 'NotFound', message: `no ${req.method} ${path} here` } });
    });
  });
  const local = await listening(microsoft, closers);
  serviceUrl = `${local}/`;
  const restore = routeHosts(['login.botframework.com'], local);
  closers.push(async () => restore());
  // The bot's own token for the connector, from the adapter's `token` factory (no Entra here).
  const botKey = signingKey('bot');
  const botToken = () =>
    jwt({ aud: 'https://api.botframework.com', appid: APP_ID, exp: Math.floor(Date.now() / 1000) + 3600 }, botKey, 'bot');
  store = new MemoryStore();
  coordinator = refundCoordinator(store);
  channels = await createChannels({
    host: coordinator,
    platforms: { teams: { appId: APP_ID, token: botToken } },
    principalOf,
    route: () => [`teams:${Buffer.from(CONVERSATION).toString('base64url')}:${Buffer.from(serviceUrl).toString('base64url')}`],
  });
  closers.push(() => channels.close());
});

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

/** Suspends a refund asked by finance:cy and delivers its card: the call's id and the card's activity id. */
async function refund(): Promise<{ id: string; activity: string }> {
  const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  return { id, activity: `act-${posts().length}` };
}

/** A token as the Bot Framework signs it for this app. */
function botFrameworkToken(signer: { privateKey: SigningKey['privateKey'] } = key, claims: Record<string, unknown> = {}): string {
  const now = Math.floor(Date.now() / 1000);
  return jwt(
    { iss: 'https://api.botframework.com', aud: APP_ID, serviceurl: serviceUrl, nbf: now, iat: now, exp: now + 300, ...claims },
    signer,
    key.kid,
  );
}

let clicks = 0;
/** A click on the card's Approve (Action.Submit), as Teams posts it to the bot's messaging endpoint. */
async function click(
  user: string,
  id: string,
  activity: string,
  token = botFrameworkToken(),
  actionId = 'toolnexus.approve',
): Promise<Response> {
  const body = {
    type: 'message',
    id: `click-${++clicks}`,
    timestamp: new Date().toISOString(),
    serviceUrl,
    channelId: 'msteams',
    from: { id: user, name: user },
    conversation: { id: `${CONVERSATION};messageid=${activity}`, conversationType: 'channel', isGroup: true, tenantId: 'tenant-1' },
    recipient: { id: `28:${APP_ID}`, name: 'toolnexus' },
    replyToId: activity,
    value: { actionId, value: id },
    channelData: { tenant: { id: 'tenant-1' } },
  };
  return channels.handle(
    'teams',
    new Request('https://toolnexus.example/api/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }),
  );
}

function runsOfTheTool(): string[] {
  try {
    return readFileSync(runs, 'utf8').trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

it("posts the card to the conversation as an Adaptive Card, with the bot's token", async () => {
  const { id } = await refund();
  expect(posts()).toHaveLength(1);
  const card = shown(posts()[0]);
  for (const text of ['Refund 25000 cents to ACME?', 'finance:cy', '0 of 2 (finance)', 'toolnexus.approve', 'toolnexus.decline', id]) {
    expect(card).toContain(text);
  }
  expect(posts()[0]!.authorization).toMatch(/^Bearer ey/);
});

it("two verified finance clicks approve it once: the keys come from the SDK's own URL, the tool runs once, the card is updated", async () => {
  const { id, activity } = await refund();
  const before = runsOfTheTool().length;
  expect((await click('29:ann', id, activity)).status).toBe(200);
  expect(calls.filter((c) => c.path === KEYS_PATH).length).toBeGreaterThanOrEqual(1);
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  expect(updates().at(-1)?.path).toBe(`/v3/conversations/${CONVERSATION}/activities/${activity}`);
  expect(shown(updates().at(-1))).toContain('1 of 2 (finance)');
  expect((await click('29:ben', id, activity)).status).toBe(200);
  const settled = await store.get(id);
  expect(settled?.status).toBe('resolved');
  expect(settled?.outcome?.output).toBe('{"refunded":25000}');
  expect(runsOfTheTool().slice(before)).toEqual([`${process.pid} finance:ann,finance:ben`]);
  expect(shown(updates().at(-1))).toContain('Approved by both finance:ann and finance:ben');
  expect(shown(updates().at(-1))).not.toContain('toolnexus.approve');
  await click('29:ann', id, activity);
  expect(await store.get(id)).toEqual(settled);
  expect(runsOfTheTool().slice(before)).toHaveLength(1);
  for (const call of calls) expect(call.raw).not.toContain(CARD_NUMBER);
});

it('a token signed by another key, for another app, from another issuer or for another service URL is 401 and changes nothing', async () => {
  const { id, activity } = await refund();
  const before = await store.get(id);
  const forger = signingKey(key.kid); // the same key id, another key
  const refused = [
    botFrameworkToken(forger),
    botFrameworkToken(key, { aud: 'another-app' }),
    botFrameworkToken(key, { iss: 'https://sts.example' }),
    botFrameworkToken(key, { serviceurl: 'https://smba.example/' }),
    'not-a-token',
  ];
  for (const token of refused) expect((await click('29:ann', id, activity, token)).status).toBe(401);
  expect(await store.get(id)).toEqual(before);
  expect(updates()).toHaveLength(0);
  expect(privates()).toHaveLength(0);
});

it('refuses an unmapped user privately, and stores nothing', async () => {
  const { id, activity } = await refund();
  expect((await click('29:stranger', id, activity)).status).toBe(200);
  const told = privates();
  expect(told).toHaveLength(1);
  expect(told[0]!.raw).toContain('29:stranger');
  expect(told[0]!.raw).toContain('not mapped');
  expect((await store.get(id))?.signatures ?? []).toEqual([]);
});

/** Suspends an editable refund (one approver) asked by finance:cy and delivers its card. */
async function editableRefund(): Promise<{ id: string; activity: string }> {
  const result = await coordinator.execute('refund_editable', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  return { id, activity: `act-${posts().length}` };
}

/** An invoke activity as Teams posts it to the bot's messaging endpoint (a dialog's fetch or submit), with a Bot Framework token. */
async function invoke(
  name: 'task/fetch' | 'task/submit',
  user: string,
  value: Record<string, unknown>,
  replyToId?: string,
): Promise<Response> {
  const body = {
    type: 'invoke',
    name,
    id: `invoke-${++clicks}`,
    timestamp: new Date().toISOString(),
    serviceUrl,
    channelId: 'msteams',
    from: { id: user, name: user },
    conversation: {
      id: replyToId === undefined ? CONVERSATION : `${CONVERSATION};messageid=${replyToId}`,
      conversationType: 'channel',
      isGroup: true,
      tenantId: 'tenant-1',
    },
    recipient: { id: `28:${APP_ID}`, name: 'toolnexus' },
    ...(replyToId === undefined ? {} : { replyToId }),
    value: { ...value, context: { theme: 'default' } },
    channelData: { tenant: { id: 'tenant-1' } },
  };
  return channels.handle(
    'teams',
    new Request('https://toolnexus.example/api/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${botFrameworkToken()}` },
      body: JSON.stringify(body),
    }),
  );
}

interface AdaptiveElement {
  type: string;
  id?: string;
  value?: string;
  text?: string;
  data?: Record<string, unknown>;
}

/** The dialog a task/fetch invoke was answered with (the Adaptive Card of a task module's `continue`), if any. */
async function dialogOf(
  response: Response,
): Promise<{ title: string; body: AdaptiveElement[]; submit: Record<string, unknown> } | undefined> {
  const text = await response.text();
  if (text === '') return undefined;
  const task = (JSON.parse(text) as { task?: { type: string; value: { title: string; card: { content: Record<string, unknown> } } } }).task;
  if (task?.type !== 'continue') return undefined;
  const content = task.value.card.content as { body: AdaptiveElement[]; actions?: AdaptiveElement[] };
  return { title: task.value.title, body: content.body, submit: content.actions?.[0]?.data ?? {} };
}

/** A click on the card's Edit, as Teams sends it for a button marked task/fetch: an invoke whose `replyToId` is the card. */
async function openEdit(user: string, id: string, activity: string) {
  const response = await invoke(
    'task/fetch',
    user,
    { data: { actionId: 'toolnexus.edit', value: id, msteams: { type: 'task/fetch' } } },
    activity,
  );
  expect(response.status).toBe(200);
  return dialogOf(response);
}

/** The dialog submitted: Teams merges the inputs' values into the submit action's data (no `replyToId`). */
async function submitEdit(user: string, submit: Record<string, unknown>, values: Record<string, string>): Promise<Response> {
  return invoke('task/submit', user, { data: { ...submit, ...values } });
}

describe('Edit through Teams’ dialog', () => {
  it('the card offers Edit as a task/fetch button; the dialog holds the fields with their values, never the @Sensitive card', async () => {
    const { id, activity } = await editableRefund();
    const card = shown(posts()[0]);
    expect(card).toContain('toolnexus.edit');
    expect(card).toContain('task/fetch');
    const dialog = (await openEdit('29:ann', id, activity))!;
    expect(dialog.title).toBe('Edit and approve');
    expect(dialog.body.filter((e) => e.type === 'Input.Text').map((e) => [e.id, e.value])).toEqual([
      ['customer', 'ACME'],
      ['cents', '25000'],
    ]);
    expect(dialog.submit.__callbackId).toBe(`toolnexus.edit:${id}`);
    for (const call of calls) expect(call.raw).not.toContain(CARD_NUMBER);
  });

  it('an allowed user edits and approves: the tool runs once with the edited arguments, the card shows it', async () => {
    const { id, activity } = await editableRefund();
    const before = runsOfTheTool().length;
    const dialog = (await openEdit('29:ann', id, activity))!;
    const submitted = await submitEdit('29:ann', dialog.submit, { customer: 'ACME', cents: '20000' });
    expect(submitted.status).toBe(200);
    // Nothing to show: the dialog closes.
    expect(await dialogOf(submitted)).toBeUndefined();
    const settled = await store.get(id);
    expect(settled).toMatchObject({ status: 'resolved', answeredBy: { id: 'finance:ann' }, comment: 'edited in teams' });
    expect(settled?.answer?.args).toEqual({ customer: 'ACME', cents: 20_000, card: CARD_NUMBER });
    expect(settled?.outcome?.output).toContain('{"refunded":20000}');
    expect(runsOfTheTool().length - before).toBe(1);
    expect(shown(updates().at(-1))).toContain('Approved by finance:ann');
    expect(shown(updates().at(-1))).not.toContain('toolnexus.edit');
    // The same submission again (a retried invoke, or a second approver's): the call stays as it was.
    const again = await submitEdit('29:ben', dialog.submit, { customer: 'ACME', cents: '1' });
    expect(JSON.stringify(await dialogOf(again))).toContain('already answered');
    expect(await store.get(id)).toEqual(settled);
    expect(runsOfTheTool().length - before).toBe(1);
    for (const call of calls) expect(call.raw).not.toContain(CARD_NUMBER);
  });

  it('a refused user is shown no dialog, and their submission changes nothing', async () => {
    const { id, activity } = await editableRefund();
    const before = await store.get(id);
    // The requester may not approve their own request (separation of duties): told privately, no dialog.
    expect(await openEdit('29:cy', id, activity)).toBeUndefined();
    expect(privates().at(-1)?.raw).toContain('You may not answer this request');
    expect(await openEdit('29:stranger', id, activity)).toBeUndefined();
    expect(privates().at(-1)?.raw).toContain('not mapped');
    // A dialog opened by ann, submitted by cy or by a stranger: refused in the dialog.
    const dialog = (await openEdit('29:ann', id, activity))!;
    expect(JSON.stringify(await dialogOf(await submitEdit('29:cy', dialog.submit, { customer: 'ACME', cents: '100' })))).toContain(
      'You may not answer this request',
    );
    expect(JSON.stringify(await dialogOf(await submitEdit('29:stranger', dialog.submit, { customer: 'ACME', cents: '100' })))).toContain(
      'not mapped',
    );
    // A submission naming a call whose card was never posted to Teams: closed, nothing answered.
    const other = pendingOf(
      await coordinator.execute('refund_editable', { customer: 'ACME', cents: 5, card: CARD_NUMBER }, undefined, {
        principal: { id: 'finance:cy' },
      }),
    )!.id;
    const forged = await submitEdit(
      '29:ann',
      { ...dialog.submit, __callbackId: `toolnexus.edit:${other}` },
      { customer: 'ACME', cents: '1' },
    );
    expect(forged.status).toBe(200);
    expect((await store.get(other))?.status).toBe('pending');
    expect(await store.get(id)).toEqual(before);
    expect(updates()).toHaveLength(0);
  });

  it('a value that is not its type, or one the DTO refuses, gets a clear error in the dialog, and nothing is stored', async () => {
    const { id, activity } = await editableRefund();
    const before = await store.get(id);
    const dialog = (await openEdit('29:ann', id, activity))!;
    const notNumber = JSON.stringify(await dialogOf(await submitEdit('29:ann', dialog.submit, { customer: 'ACME', cents: 'lots' })));
    expect(notNumber).toContain('cents');
    expect(notNumber).toContain('must be a whole number');
    const refused = JSON.stringify(await dialogOf(await submitEdit('29:ann', dialog.submit, { customer: 'ACME', cents: '0' })));
    expect(refused).toMatch(/invalid: .*cents/);
    expect(await store.get(id)).toEqual(before);
    expect(updates()).toHaveLength(0);
  });
});
