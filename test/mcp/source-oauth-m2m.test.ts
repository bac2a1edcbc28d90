/**
 * McpToolSource's OAuth grants that need no person (client_credentials with a secret or a
 * private key, enterprise cross-app access) and the bound on every OAuth response, against
 * serveMcp behind an authorization server and an identity provider of this test's own on
 * 127.0.0.1. The authorization server checks what a real one does: the Basic header, the
 * client assertion's signature with the client's public key, the ID-JAG's signature with the
 * IdP's key, its audience and resource.
 */
import 'reflect-metadata';
import { createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IsString } from 'class-validator';
import { Tool, Toolkit } from '../../src';
import {
  McpLoginError,
  McpOAuthResponseTooLargeError,
  McpToolSource,
  MemoryOAuthStore,
  serveMcp,
  type McpHttpServerHandle,
  type McpOAuthOptions,
} from '../../src/mcp';
import { forwardMcp } from '../fixtures/mcp-forward';

class EchoArgs {
  @IsString()
  text!: string;
}

@Tool({ name: 'echo', description: 'Says the text back', args: EchoArgs })
class EchoTool {
  runs = 0;
  run(args: EchoArgs): string {
    this.runs++;
    return `echo: ${args.text}`;
  }
}

const CLIENT_ID = 'robot-7';
const CLIENT_SECRET = `cs-${randomBytes(12).toString('hex')}`;
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An ES256 JWT signed with node:crypto (JWS wants the raw r||s signature). */
function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64({ alg: 'ES256', ...header })}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The claims and header of a JWT whose ES256 signature `key` verifies; `undefined` otherwise. */
function verifyJwt(jwt: string, key: KeyObject): { header: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  const [header, claims, signature] = jwt.split('.');
  if (!header || !claims || !signature) return undefined;
  const ok = verify('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!ok) return undefined;
  const parse = (part: string): Record<string, unknown> =>
    JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: parse(header), claims: parse(claims) };
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += (chunk as Buffer).toString('utf8');
  return text;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** The enterprise identity provider: exchanges the ID tokens it issued for ID-JAGs (RFC 8693). */
class IdentityProvider {
  readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  readonly exchanges: Array<Record<string, string>> = [];
  readonly issued: string[] = [];
  refuse = false;
  /** Hostile: the exchange's answer is this many bytes. */
  hugeBytes = 0;
  base = '';
  private server!: Server;

  async start(): Promise<void> {
    ({ server: this.server, base: this.base } = await listen((req, res) => this.handle(req, res)));
  }

  stop(): Promise<void> {
    return stop(this.server);
  }

  /** The signed-in user's ID token, as the IdP's login would have given it. */
  idToken(): string {
    const token = signJwt(
      {},
      { iss: this.base, sub: 'dana@example.com', aud: 'toolnexus-at-idp', exp: Math.floor(Date.now() / 1000) + 3600 },
      this.keys.privateKey,
    );
    this.issued.push(token);
    return token;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
    this.exchanges.push(form);
    const json = (status: number, body: unknown): void =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const idToken = verifyJwt(form.subject_token ?? '', this.keys.publicKey);
    if (this.refuse || !idToken || form.grant_type !== 'urn:ietf:params:oauth:grant-type:token-exchange')
      // Hostile touch: the refusal quotes the subject token back.
      return json(400, { error: 'invalid_grant', error_description: `not a token of ours: ${form.subject_token ?? ''}` });
    const jag = signJwt(
      { typ: 'oauth-id-jag+jwt' },
      {
        iss: this.base,
        sub: idToken.claims.sub,
        aud: form.audience,
        resource: form.resource,
        client_id: CLIENT_ID,
        exp: Math.floor(Date.now() / 1000) + 300,
      },
      this.keys.privateKey,
    );
    this.issued.push(jag);
    if (this.hugeBytes > 0) return json(200, { access_token: jag, filler: 'x'.repeat(this.hugeBytes) });
    json(200, { access_token: jag, issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag', token_type: 'N_A' });
  }
}

/** The MCP server's authorization server and resource proxy: client_credentials and JWT bearer grants. */
class MachineFront {
  readonly access = new Set<string>();
  readonly issued: string[] = [];
  /** What the token endpoint was asked, and whether it granted. */
  readonly grants: Array<{ grant: string; granted: boolean; assertion?: string }> = [];
  readonly clientKeys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** The IdP whose ID-JAGs the jwt-bearer grant takes. */
  idp: IdentityProvider | undefined;
  /** Hostile: the metadata document never ends, or the token response is this many bytes. */
  endlessMetadata = false;
  hugeTokenBytes = 0;
  base = '';
  private server!: Server;

  constructor(
    private readonly upstream: URL,
    private readonly auth: 'client_secret_basic' | 'private_key_jwt',
  ) {}

  async start(): Promise<void> {
    ({ server: this.server, base: this.base } = await listen((req, res) => this.handle(req, res)));
  }

  stop(): Promise<void> {
    return stop(this.server);
  }

  private issue(): Record<string, unknown> {
    const token = `at-${randomBytes(12).toString('hex')}`;
    this.access.add(token);
    this.issued.push(token);
    return { access_token: token, token_type: 'Bearer', expires_in: 60 };
  }

  /** client_secret_basic: the Basic header names this client and its secret. */
  private basicOk(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Basic ')) return false;
    const [id, secret] = Buffer.from(header.slice(6), 'base64').toString('utf8').split(':').map(decodeURIComponent);
    return id === CLIENT_ID && secret === CLIENT_SECRET;
  }

  /** private_key_jwt: the assertion is signed by the client's key, by and about the client, for this server. */
  private assertionOk(form: Record<string, string>): boolean {
    if (form.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') return false;
    const jwt = verifyJwt(form.client_assertion ?? '', createPublicKey(this.clientKeys.privateKey));
    if (!jwt) return false;
    const { iss, sub, aud, exp } = jwt.claims;
    return (
      iss === CLIENT_ID &&
      sub === CLIENT_ID &&
      (aud === this.base || aud === `${this.base}/`) &&
      typeof exp === 'number' &&
      exp * 1000 > Date.now()
    );
  }

  /** RFC 7523 with an ID-JAG: the IdP's signature, its type, audience, resource and client. */
  private jagOk(form: Record<string, string>): boolean {
    if (!this.idp) return false;
    const jwt = verifyJwt(form.assertion ?? '', this.idp.keys.publicKey);
    if (!jwt || jwt.header.typ !== 'oauth-id-jag+jwt') return false;
    const { aud, resource, client_id: client } = jwt.claims;
    return aud === this.base && resource === `${this.base}/mcp` && client === CLIENT_ID;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void =>
      void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(200, { resource: `${this.base}/mcp`, authorization_servers: [this.base] });
    if (url.pathname === '/.well-known/oauth-authorization-server') {
      if (this.endlessMetadata) return this.endless(res);
      return json(200, {
        issuer: this.base,
        authorization_endpoint: `${this.base}/authorize`,
        token_endpoint: `${this.base}/token`,
        response_types_supported: ['code'],
        grant_types_supported: this.idp ? [JWT_BEARER] : ['client_credentials'],
        token_endpoint_auth_methods_supported: [this.auth],
        ...(this.auth === 'private_key_jwt' ? { token_endpoint_auth_signing_alg_values_supported: ['ES256'] } : {}),
      });
    }
    const body = await bodyOf(req);
    if (url.pathname === '/token') {
      const form = Object.fromEntries(new URLSearchParams(body));
      const grant = form.grant_type ?? '';
      const client = this.auth === 'private_key_jwt' ? this.assertionOk(form) : this.basicOk(req);
      const granted = client && (grant === 'client_credentials' ? !this.idp : grant === JWT_BEARER && this.jagOk(form));
      this.grants.push({ grant, granted, ...(form.client_assertion ? { assertion: form.client_assertion } : {}) });
      if (!client)
        // Hostile touch: the refusal quotes the credentials it got back.
        return json(401, {
          error: 'invalid_client',
          error_description: `who is ${req.headers.authorization ?? form.client_assertion ?? ''}?`,
        });
      if (!granted) return json(400, { error: 'invalid_grant', error_description: 'that grant is not for this client' });
      if (this.hugeTokenBytes > 0) {
        const filler = 'x'.repeat(this.hugeTokenBytes);
        return json(200, { ...this.issue(), filler });
      }
      return json(200, this.issue());
    }
    if (url.pathname === '/mcp') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      if (!this.access.has(token))
        return json(
          401,
          { error: 'invalid_token' },
          { 'www-authenticate': `Bearer resource_metadata="${this.base}/.well-known/oauth-protected-resource/mcp"` },
        );
      forwardMcp(this.upstream, req, res, body);
      return;
    }
    json(404, { error: 'not_found' });
  }

  /** A JSON document that never ends: 64 KiB chunks until the client hangs up. */
  private endless(res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"resource":"');
    const chunk = 'a'.repeat(64 * 1024);
    const more = (): void => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', more);
    };
    res.on('close', () => res.removeAllListeners('drain'));
    more();
  }
}

describe('McpToolSource OAuth without a person: client_credentials, cross-app access, bounded responses', () => {
  let served: McpHttpServerHandle;
  let echo: EchoTool;
  const fronts: Array<{ stop(): Promise<void> }> = [];

  beforeEach(async () => {
    echo = new EchoTool();
    served = await serveMcp(new Toolkit().register(echo), { transport: 'http', host: '127.0.0.1', port: 0 });
  });

  afterEach(async () => {
    for (const front of fronts.splice(0)) await front.stop();
    await served.close();
  });

  async function frontWith(auth: 'client_secret_basic' | 'private_key_jwt'): Promise<MachineFront> {
    const front = new MachineFront(new URL(served.url), auth);
    await front.start();
    fronts.push(front);
    return front;
  }

  const sourceFor = (front: MachineFront, oauth: McpOAuthOptions): McpToolSource =>
    new McpToolSource({ config: { mcpServers: { remote: { type: 'http', url: `${front.base}/mcp` } } }, oauth });

  /** The canary: no secret, key, assertion or token in anything a host may see. */
  const secretFree = (secrets: string[], ...texts: unknown[]): void => {
    const all = JSON.stringify(texts.map((text) => (text instanceof Error ? { message: text.message, stack: text.stack } : text)));
    for (const secret of [CLIENT_SECRET, Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64'), ...secrets])
      expect(all).not.toContain(secret);
  };

  it('client_credentials with client_secret_basic: connects with nobody, keeps the token in the store, and takes a new one when it expires', async () => {
    const front = await frontWith('client_secret_basic');
    const store = new MemoryOAuthStore();
    const source = sourceFor(front, { grant: 'client_credentials', store, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
    try {
      const report = await source.connect();
      expect(report).toMatchObject({ connected: [{ server: 'remote', tools: ['remote_echo'] }], failed: [], needsLogin: [] });
      expect(front.grants).toEqual([{ grant: 'client_credentials', granted: true }]);
      const stored = store.get('remote', 'tokens') as Record<string, unknown>;
      expect(stored.access_token).toBe(front.issued[0]);

      const toolkit = new Toolkit();
      source.register(toolkit);
      const first = await toolkit.execute('remote_echo', { text: 'one' });
      expect(first).toMatchObject({ isError: false, output: 'echo: one' });
      // The token expires (the server forgets it): the next call is granted a new one silently.
      front.access.clear();
      const second = await toolkit.execute('remote_echo', { text: 'two' });
      expect(second).toMatchObject({ isError: false, output: 'echo: two' });
      expect(front.grants.map((grant) => grant.granted)).toEqual([true, true]);
      expect((store.get('remote', 'tokens') as Record<string, unknown>).access_token).toBe(front.issued[1]);
      expect(echo.runs).toBe(2);
      secretFree(front.issued, report, first, second);
    } finally {
      await source.close();
    }
  });

  it('client_credentials with private_key_jwt: the server verifies the signed assertion with the public key', async () => {
    const front = await frontWith('private_key_jwt');
    const pem = front.clientKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const source = sourceFor(front, {
      grant: 'client_credentials',
      store: new MemoryOAuthStore(),
      clientId: CLIENT_ID,
      privateKey: pem,
      algorithm: 'ES256',
    });
    try {
      const report = await source.connect();
      expect(report.failed).toEqual([]);
      expect(report.connected).toEqual([{ server: 'remote', tools: ['remote_echo'] }]);
      expect(front.grants).toHaveLength(1);
      expect(front.grants[0]).toMatchObject({ grant: 'client_credentials', granted: true });
      const toolkit = new Toolkit();
      source.register(toolkit);
      front.access.clear();
      const result = await toolkit.execute('remote_echo', { text: 'signed' });
      expect(result).toMatchObject({ isError: false, output: 'echo: signed' });
      // A new assertion for the new grant: each is signed afresh.
      expect(front.grants.map((grant) => grant.granted)).toEqual([true, true]);
      expect(front.grants[0]!.assertion).not.toBe(front.grants[1]!.assertion);
      secretFree([pem, ...front.issued, ...front.grants.map((grant) => grant.assertion!)], report, result);
    } finally {
      await source.close();
    }
  });

  it('a refused grant is a clear McpLoginError with no secret, key or assertion in it, even when the server quotes them back', async () => {
    const basic = await frontWith('client_secret_basic');
    const jwt = await frontWith('private_key_jwt');
    const otherKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const wrongSecret = `${CLIENT_SECRET}-old`;
    const bySecret = sourceFor(basic, {
      grant: 'client_credentials',
      store: new MemoryOAuthStore(),
      clientId: CLIENT_ID,
      clientSecret: wrongSecret,
    });
    const byKey = sourceFor(jwt, {
      grant: 'client_credentials',
      store: new MemoryOAuthStore(),
      clientId: CLIENT_ID,
      privateKey: otherKey,
      algorithm: 'ES256',
    });
    try {
      for (const [source, front] of [
        [bySecret, basic],
        [byKey, jwt],
      ] as const) {
        const report = await source.connect();
        expect(report.connected).toEqual([]);
        const error = report.failed[0]!.error;
        expect(error).toBeInstanceOf(McpLoginError);
        expect((error as McpLoginError).code).toBe('TOOLNEXUS_MCP_LOGIN');
        expect(error.message).toMatch(/^server remote: the authorization server refused the client_credentials grant: .*who is/);
        expect(front.grants.every((grant) => !grant.granted)).toBe(true);
        secretFree(
          [
            wrongSecret,
            Buffer.from(`${CLIENT_ID}:${wrongSecret}`).toString('base64'),
            otherKey,
            ...front.grants.flatMap((grant) => grant.assertion ?? []),
          ],
          report,
          error,
        );
      }
      expect(echo.runs).toBe(0);
    } finally {
      await bySecret.close();
      await byKey.close();
    }
  });

  it('client_credentials needs exactly one of clientSecret and privateKey', async () => {
    const front = await frontWith('client_secret_basic');
    const source = sourceFor(front, { grant: 'client_credentials', store: new MemoryOAuthStore(), clientId: CLIENT_ID });
    try {
      const report = await source.connect();
      expect(report.failed[0]!.error.message).toBe(
        'server remote: the client_credentials grant takes exactly one of clientSecret and privateKey',
      );
    } finally {
      await source.close();
    }
  });

  it('cross-app access: the ID token is exchanged at the IdP for an ID-JAG, which the authorization server grants on', async () => {
    const front = await frontWith('client_secret_basic');
    const idp = new IdentityProvider();
    await idp.start();
    fronts.push(idp);
    front.idp = idp;
    const idTokens: string[] = [];
    const source = sourceFor(front, {
      grant: 'cross_app',
      store: new MemoryOAuthStore(),
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      idToken: () => {
        idTokens.push(idp.idToken());
        return idTokens[idTokens.length - 1]!;
      },
      idpTokenEndpoint: `${idp.base}/token`,
      idpClientId: 'toolnexus-at-idp',
    });
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([{ server: 'remote', tools: ['remote_echo'] }]);
      expect(idp.exchanges).toHaveLength(1);
      expect(idp.exchanges[0]).toMatchObject({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: idTokens[0],
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
        audience: front.base,
        resource: `${front.base}/mcp`,
        client_id: 'toolnexus-at-idp',
      });
      expect(front.grants).toEqual([{ grant: JWT_BEARER, granted: true }]);
      const toolkit = new Toolkit();
      source.register(toolkit);
      // Expired: a new ID-JAG from a fresh ID token, and a new grant.
      front.access.clear();
      const result = await toolkit.execute('remote_echo', { text: 'enterprise' });
      expect(result).toMatchObject({ isError: false, output: 'echo: enterprise' });
      expect(idp.exchanges).toHaveLength(2);
      expect(front.grants.map((grant) => grant.granted)).toEqual([true, true]);
      secretFree([...idp.issued, ...front.issued], report, result);

      // The IdP refuses (and quotes the ID token back): a clear error without the token.
      idp.refuse = true;
      front.access.clear();
      const refused = await toolkit.execute('remote_echo', { text: 'no' });
      expect(refused.isError).toBe(true);
      expect(refused.output).toContain('the identity provider refused the token exchange: invalid_grant');
      expect(echo.runs).toBe(1);
      secretFree([...idp.issued, ...front.issued], refused);
    } finally {
      await source.close();
    }
  });

  it('an endless authorization-server metadata document stops at the 1 MiB bound with a typed error naming the server and the limit', async () => {
    const front = await frontWith('client_secret_basic');
    front.endlessMetadata = true;
    const source = sourceFor(front, {
      grant: 'client_credentials',
      store: new MemoryOAuthStore(),
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
    });
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([]);
      const error = report.failed[0]!.error;
      expect(error).toBeInstanceOf(McpOAuthResponseTooLargeError);
      expect(error).toMatchObject({ code: 'TOOLNEXUS_MCP_OAUTH_RESPONSE_TOO_LARGE', server: 'remote', limitBytes: 1024 * 1024 });
      expect(error.message).toBe(
        `server remote: ${front.base}/.well-known/oauth-authorization-server sent an OAuth response larger than 1048576 bytes (the oauth.maxResponseBytes limit); reading stopped`,
      );
      expect(front.grants).toEqual([]);
    } finally {
      await source.close();
    }
  });

  it('a token response over maxResponseBytes is refused the same way, and nothing is stored', async () => {
    const front = await frontWith('client_secret_basic');
    front.hugeTokenBytes = 200_000;
    const store = new MemoryOAuthStore();
    const source = sourceFor(front, {
      grant: 'client_credentials',
      store,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      maxResponseBytes: 64 * 1024,
    });
    try {
      const report = await source.connect();
      const error = report.failed[0]!.error;
      expect(error).toBeInstanceOf(McpOAuthResponseTooLargeError);
      expect(error.message).toBe(
        `server remote: ${front.base}/token sent an OAuth response larger than 65536 bytes (the oauth.maxResponseBytes limit); reading stopped`,
      );
      expect(store.get('remote', 'tokens')).toBeUndefined();
      secretFree(front.issued, report, error);
    } finally {
      await source.close();
    }
  });

  it("the identity provider's answer is bounded too", async () => {
    const front = await frontWith('client_secret_basic');
    const idp = new IdentityProvider();
    await idp.start();
    fronts.push(idp);
    front.idp = idp;
    idp.hugeBytes = 100_000;
    const source = sourceFor(front, {
      grant: 'cross_app',
      store: new MemoryOAuthStore(),
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      idToken: () => idp.idToken(),
      idpTokenEndpoint: `${idp.base}/token`,
      maxResponseBytes: 32 * 1024,
    });
    try {
      const report = await source.connect();
      const error = report.failed[0]!.error;
      expect(error).toBeInstanceOf(McpOAuthResponseTooLargeError);
      expect(error.message).toBe(
        `server remote: ${idp.base}/token sent an OAuth response larger than 32768 bytes (the oauth.maxResponseBytes limit); reading stopped`,
      );
      expect(front.grants).toEqual([]);
      secretFree(idp.issued, report, error);
    } finally {
      await source.close();
    }
  });
});
