/**
 * The real `chat` SDK and its Google Chat adapter, end to end (docs/channels.md, "How the clicks
 * are tested"): the 2-of-3 finance refund's card goes to a stand-in for the Chat API on
 * 127.0.0.1 (the adapter's `apiUrl`), and each click is a card click event as Google Chat sends
 * it, with a bearer token the adapter verifies itself: a project-number token signed by
 * chat@system.gserviceaccount.com, checked against the issuer certificates the adapter fetches
 * from the URL fixed in its code, served here from a key the test holds (fixed-urls.ts). The
 * service account's access token comes from Google's token endpoint, served here too. An app
 * whose authentication audience is its endpoint URL gets Google's OIDC ID tokens instead, which
 * the adapter checks with google-auth-library's `verifyIdToken` against Google's OIDC
 * certificates (the PEM ones at www.googleapis.com/oauth2/v1/certs), served here the same way.
 */
import { generateKeyPairSync } from 'node:crypto';
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

const PROJECT_NUMBER = '123456789012';
const CHAT_ISSUER = 'chat@system.gserviceaccount.com';
const CERTS_PATH = `/service_accounts/v1/metadata/x509/${CHAT_ISSUER}`;
/** Where google-auth-library's `verifyIdToken` reads Google's OIDC certificates in Node (PEM, by key id). */
const OIDC_CERTS_PATH = '/oauth2/v1/certs';
/** The app's HTTP endpoint URL, the audience of its OIDC tokens when it authenticates so. */
const ENDPOINT = 'https://toolnexus.example/gchat';
const ACCESS_TOKEN = 'ya29.test-access-token';
const SPACE = 'spaces/AAAAFINANCE';

/** Google Chat users of the finance team, and one who maps to nobody. */
const DIRECTORY: Record<string, string> = { 'users/111': 'finance:ann', 'users/222': 'finance:ben', 'users/333': 'finance:cy' };
const principalOf = (user: PlatformUser) => (DIRECTORY[user.id] ? { id: DIRECTORY[user.id]! } : undefined);

interface GoogleCall {
  method: string;
  path: string;
  authorization?: string;
  body: Record<string, unknown>;
  raw: string;
}

let closers: Array<() => Promise<void>>;
let calls: GoogleCall[];
let key: SigningKey;
/** Google's OIDC signing key (the one `https://accounts.google.com` tokens are signed with). */
let oidcKey: SigningKey;
let local: string;
let serviceAccount: string;
let store: MemoryStore;
let coordinator: ResumeCoordinator;
let channels: Channels;
let runs: string;
let dir: string;

/** Chat API calls (posts, updates, private messages), not the certificate or token fetches. */
const api = () => calls.filter((c) => c.path.startsWith('/v1/'));
const posts = () => api().filter((c) => c.method === 'POST' && !c.body.privateMessageViewer);
const privates = () => api().filter((c) => c.method === 'POST' && c.body.privateMessageViewer);
const updates = () => api().filter((c) => c.method === 'PUT' || c.method === 'PATCH');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolnexus-gchat-'));
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
  key = signingKey('chat-key-1');
  oidcKey = signingKey('google-oidc-1');
  let messages = 0;
  // One server for all of Google here: the issuer certificates, the token endpoint, the Chat API.
  const google = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      let body: Record<string, unknown> = {};
      try {
        body = raw && req.headers['content-type']?.includes('json') ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      calls.push({
        method: req.method ?? '',
        path,
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
        body,
        raw,
      });
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.method === 'GET' && path === CERTS_PATH) return reply(200, { [key.kid]: key.pem });
      if (req.method === 'GET' && path === OIDC_CERTS_PATH) return reply(200, { [oidcKey.kid]: oidcKey.pem });
      if (req.method === 'POST' && path === '/token')
        return reply(200, { access_token: ACCESS_TOKEN, expires_in: 3600, token_type: 'Bearer' });
      if (req.method === 'POST' && path === `/v1/${SPACE}/messages`) {
        messages++;
        return reply(200, { name: `${SPACE}/messages/M${messages}`, thread: { name: `${SPACE}/threads/T${messages}` } });
      }
      if ((req.method === 'PUT' || req.method === 'PATCH') && path.startsWith(`/v1/${SPACE}/messages/`))
        return reply(200, { name: path.slice(4) });
      reply(404, { error: { code: 404, message: `no ${req.method} ${path} here` } });
    });
  });
  local = await listening(google, closers);
  const restore = routeHosts(['www.googleapis.com', 'oauth2.googleapis.com'], local);
  closers.push(async () => restore());
  serviceAccount = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  store = new MemoryStore();
  coordinator = refundCoordinator(store);
  channels = await gchatChannels({ googleChatProjectNumber: PROJECT_NUMBER });
  closers.push(() => channels.close());
});

/** The channels with the Google Chat adapter, verifying requests as `verify` says (a project number, an endpoint URL). */
function gchatChannels(verify: Record<string, unknown>): Promise<Channels> {
  return createChannels({
    host: coordinator,
    platforms: {
      gchat: {
        ...verify,
        credentials: { client_email: 'toolnexus@test-project.iam.gserviceaccount.com', private_key: serviceAccount },
        apiUrl: local,
      },
    },
    principalOf,
    route: () => [`gchat:${SPACE}`],
  });
}

afterEach(async () => {
  for (const close of closers.reverse()) await close();
});

/** Suspends a refund asked by finance:cy and delivers its card: the call's id and the card's message name. */
async function refund(): Promise<{ id: string; message: string }> {
  const result = await coordinator.execute('refund', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  return { id, message: `${SPACE}/messages/M${posts().length}` };
}

/** A project-number token as Google Chat signs it (`iss` its service account, `aud` the project number). */
function chatToken(signer: { privateKey: SigningKey['privateKey'] } = key, audience = PROJECT_NUMBER): string {
  const now = Math.floor(Date.now() / 1000);
  return jwt({ iss: CHAT_ISSUER, aud: audience, iat: now, exp: now + 300 }, signer, key.kid);
}

/** A click on a card's button, as Google Chat posts it to the app's HTTP endpoint (whose URL is the button's function, when configured). */
async function click(
  user: string,
  id: string,
  message: string,
  token = chatToken(),
  actionId = 'toolnexus.approve',
  invokedFunction = actionId,
): Promise<Response> {
  const sender = { name: user, displayName: user, type: 'HUMAN' };
  const event = {
    commonEventObject: { invokedFunction, parameters: { actionId, value: id } },
    chat: {
      user: sender,
      eventTime: new Date().toISOString(),
      buttonClickedPayload: {
        space: { name: SPACE, type: 'SPACE' },
        message: { name: message, thread: { name: `${SPACE}/threads/T1` } },
        user: sender,
      },
    },
  };
  return channels.handle(
    'gchat',
    new Request('https://toolnexus.example/gchat', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(event),
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

const shown = (call: GoogleCall | undefined) => JSON.stringify(call?.body.cardsV2);

it('posts the card to the space as a Card v2, with the access token from the token endpoint', async () => {
  const { id } = await refund();
  expect(posts()).toHaveLength(1);
  const card = shown(posts()[0]);
  for (const text of ['Refund 25000 cents to ACME?', 'finance:cy', '0 of 2 (finance)', 'toolnexus.approve', 'toolnexus.decline', id]) {
    expect(card).toContain(text);
  }
  expect(posts()[0]!.authorization).toBe(`Bearer ${ACCESS_TOKEN}`);
  expect(calls.some((c) => c.path === '/token')).toBe(true);
});

it("two verified finance clicks approve it once: the certificates come from the adapter's own URL, the tool runs once, the card is updated", async () => {
  const { id, message } = await refund();
  const before = runsOfTheTool().length;
  expect((await click('users/111', id, message)).status).toBe(200);
  expect(calls.filter((c) => c.path === CERTS_PATH)).toHaveLength(1);
  expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
  expect(shown(updates().at(-1))).toContain('1 of 2 (finance)');
  expect((await click('users/222', id, message)).status).toBe(200);
  const settled = await store.get(id);
  expect(settled?.status).toBe('resolved');
  expect(settled?.outcome?.output).toBe('{"refunded":25000}');
  expect(runsOfTheTool().slice(before)).toEqual([`${process.pid} finance:ann,finance:ben`]);
  expect(shown(updates().at(-1))).toContain('Approved by both finance:ann and finance:ben');
  expect(shown(updates().at(-1))).not.toContain('toolnexus.approve');
  // The same click again: the call stays as it was, and the tool does not run again.
  await click('users/111', id, message);
  expect(await store.get(id)).toEqual(settled);
  expect(runsOfTheTool().slice(before)).toHaveLength(1);
  for (const call of calls) expect(call.raw).not.toContain(CARD_NUMBER);
});

it('a token signed by another key, or for another project, is 401 and changes nothing', async () => {
  const { id, message } = await refund();
  const before = await store.get(id);
  const forger = signingKey(key.kid); // the same key id, another key
  expect((await click('users/111', id, message, chatToken(forger))).status).toBe(401);
  expect((await click('users/111', id, message, chatToken(key, '999999999999'))).status).toBe(401);
  expect((await click('users/111', id, message, 'not-a-token')).status).toBe(401);
  expect(await store.get(id)).toEqual(before);
  expect(updates()).toHaveLength(0);
  expect(privates()).toHaveLength(0);
});

it('refuses an unmapped user privately, and stores nothing', async () => {
  const { id, message } = await refund();
  expect((await click('users/999', id, message)).status).toBe(200);
  const told = privates();
  expect(told).toHaveLength(1);
  expect(told[0]!.body.privateMessageViewer).toEqual({ name: 'users/999' });
  expect(told[0]!.raw).toContain('not mapped');
  expect((await store.get(id))?.signatures ?? []).toEqual([]);
});

it('offers no Edit on an editable approval: the adapter opens no dialog; a forged Edit click is told to approve or decline as it is', async () => {
  const result = await coordinator.execute('refund_editable', { customer: 'ACME', cents: 25_000, card: CARD_NUMBER }, undefined, {
    principal: { id: 'finance:cy' },
  });
  const id = pendingOf(result)!.id;
  await channels.refresh(id);
  const card = shown(posts().at(-1));
  expect(card).toContain('toolnexus.approve');
  expect(card).not.toContain('toolnexus.edit');
  const before = await store.get(id);
  expect((await click('users/111', id, `${SPACE}/messages/M${posts().length}`, chatToken(), 'toolnexus.edit')).status).toBe(200);
  expect(privates().at(-1)?.raw).toContain('Editing is not available here');
  expect(await store.get(id)).toEqual(before);
});

describe('an app authenticating with its endpoint URL as audience', () => {
  beforeEach(async () => {
    // The same Google stand-in, the adapter given `endpointUrl` instead of a project number.
    await channels.close();
    channels = await gchatChannels({ endpointUrl: ENDPOINT });
  });

  /** An OIDC ID token as Google signs it for the Chat app's endpoint URL. */
  function oidcToken(signer: { privateKey: SigningKey['privateKey'] } = oidcKey, claims: Record<string, unknown> = {}): string {
    const now = Math.floor(Date.now() / 1000);
    return jwt(
      { iss: 'https://accounts.google.com', aud: ENDPOINT, email: CHAT_ISSUER, email_verified: true, iat: now, exp: now + 300, ...claims },
      signer,
      oidcKey.kid,
    );
  }

  const approve = (user: string, id: string, message: string, token = oidcToken()) =>
    click(user, id, message, token, 'toolnexus.approve', ENDPOINT);

  it("two verified clicks settle it once: Google's OIDC certificates come from google-auth-library's own URL, the tool runs once", async () => {
    const { id, message } = await refund();
    // A button's function is the endpoint URL, as Google Chat requires of an HTTP endpoint app.
    expect(shown(posts().at(-1))).toContain(ENDPOINT);
    const before = runsOfTheTool().length;
    expect((await approve('users/111', id, message)).status).toBe(200);
    expect(calls.filter((c) => c.path === OIDC_CERTS_PATH).length).toBeGreaterThanOrEqual(1);
    expect(calls.filter((c) => c.path === CERTS_PATH)).toHaveLength(0);
    expect((await store.get(id))?.signatures?.map((s) => s.by.id)).toEqual(['finance:ann']);
    expect((await approve('users/222', id, message)).status).toBe(200);
    const settled = await store.get(id);
    expect(settled?.status).toBe('resolved');
    expect(runsOfTheTool().slice(before)).toEqual([`${process.pid} finance:ann,finance:ben`]);
    expect(shown(updates().at(-1))).toContain('Approved by both finance:ann and finance:ben');
    // The same click again: the call stays as it was, and the tool does not run again.
    expect((await approve('users/111', id, message)).status).toBe(200);
    expect(await store.get(id)).toEqual(settled);
    expect(runsOfTheTool().slice(before)).toHaveLength(1);
    for (const call of calls) expect(call.raw).not.toContain(CARD_NUMBER);
  });

  it('a token for another audience, from another issuer or sender, unverified, signed by another key, or a project-number token is 401 and changes nothing', async () => {
    const { id, message } = await refund();
    const before = await store.get(id);
    const forger = signingKey(oidcKey.kid); // the same key id, another key
    const refused = [
      oidcToken(oidcKey, { aud: 'https://elsewhere.example/gchat' }),
      oidcToken(oidcKey, { aud: PROJECT_NUMBER }),
      oidcToken(oidcKey, { iss: 'https://sts.example' }),
      oidcToken(oidcKey, { email: 'someone@example.com' }),
      oidcToken(oidcKey, { email_verified: false }),
      oidcToken(forger),
      // Signed by the Chat issuer's own key for the project: not accepted by an endpoint-URL app.
      chatToken(),
      'not-a-token',
    ];
    for (const token of refused) expect((await approve('users/111', id, message, token)).status).toBe(401);
    expect(await store.get(id)).toEqual(before);
    expect(updates()).toHaveLength(0);
    expect(privates()).toHaveLength(0);
  });
});
