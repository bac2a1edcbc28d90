/**
 * McpToolSource's workload identity grant (SEP-1933: the workload's own token as an RFC 7523
 * JWT bearer grant) and DPoP-bound tokens (RFC 9449, SEP-1932), against serveMcp behind an
 * authorization server and resource front of this test's own on 127.0.0.1 that checks what a
 * real one does: the workload token's signature and audience; each DPoP proof's signature by
 * the key in its header, `typ`, `htm`, `htu`, `iat`, a `jti` never seen before, the nonce it
 * asked for, and at the resource the `ath` of the token and the key the token was bound to.
 */
import 'reflect-metadata';
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Toolkit } from '../../src';
import { McpConfigError, McpConnectionError, McpLoginError, McpToolSource, MemoryOAuthStore } from '../../src/mcp';
import { forwardMcp } from '../fixtures/mcp-forward';
import { frontedEcho, OAuthTestFront } from '../fixtures/mcp-oauth-front';

const WORKLOAD_CLIENT = 'billing-worker';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const parse = (part: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;

/** An ES256 JWT signed with node:crypto. */
function signJwt(claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}

/** The header and claims of an ES256 JWT `key` verifies, else `undefined`. */
function verifyJwt(jwt: string, key: KeyObject): { header: Record<string, unknown>; claims: Record<string, unknown> } | undefined {
  const [header, claims, signature] = jwt.split('.');
  if (!header || !claims || !signature) return undefined;
  const ok = verify('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  return ok ? { header: parse(header), claims: parse(claims) } : undefined;
}

/** RFC 7638 thumbprint of an EC public JWK. */
function thumbprintOf(jwk: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');
}

/** What one DPoP proof said, or why it is refused. */
type Proof = { ok: true; jkt: string; nonce?: unknown } | { ok: false; why: string };

/** The workload platform, the MCP server's authorization server and its resource front, on one origin. */
class WorkloadFront extends OAuthTestFront {
  /** The platform's signing key: it issues the workload's identity tokens. */
  readonly platform = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  /** Access tokens issued, with the thumbprint each is bound to (`''`: a Bearer token). */
  readonly tokens = new Map<string, string>();
  readonly grants: Array<{ grant: string; assertion: string; granted: boolean; jkt?: string }> = [];
  /** Every request to /mcp: its scheme and whether its proof held. */
  readonly calls: Array<{ scheme: string; ok: boolean; why?: string }> = [];
  readonly jtis = new Set<string>();
  nonceAtToken: string | undefined;
  nonceAtResource: string | undefined;
  nonceChallenges = { token: 0, resource: 0 };
  /** Token requests are refused with this OAuth error while it is set. */
  refuse: string | undefined;

  /** The workload's identity token, as its platform mounts it: audience this authorization server. */
  workloadToken(audience = this.base): string {
    return signJwt(
      { iss: 'https://platform.example', sub: 'system:serviceaccount:billing:worker', aud: audience, exp: now() + 600 },
      this.platform.privateKey,
    );
  }

  /** RFC 9449 section 4.3, as a resource or token endpoint checks a proof. */
  private proof(req: IncomingMessage, htu: string, accessToken?: string): Proof {
    const header = req.headers.dpop;
    if (typeof header !== 'string') return { ok: false, why: 'no proof' };
    const [head] = header.split('.');
    const jwk = head ? (parse(head).jwk as Record<string, unknown> | undefined) : undefined;
    if (!jwk || 'd' in jwk) return { ok: false, why: 'no public jwk' };
    const jwt = verifyJwt(header, createPublicKey({ key: jwk as never, format: 'jwk' }));
    if (!jwt || jwt.header.typ !== 'dpop+jwt') return { ok: false, why: 'bad signature or typ' };
    const { htm, htu: claimed, iat, jti, ath, nonce } = jwt.claims;
    if (htm !== req.method || claimed !== htu) return { ok: false, why: `htm/htu ${String(htm)} ${String(claimed)}` };
    if (typeof iat !== 'number' || Math.abs(now() - iat) > 300) return { ok: false, why: 'iat' };
    if (typeof jti !== 'string' || this.jtis.has(jti)) return { ok: false, why: 'jti replayed' };
    this.jtis.add(jti);
    if (accessToken !== undefined && ath !== createHash('sha256').update(accessToken).digest('base64url')) return { ok: false, why: 'ath' };
    return { ok: true, jkt: thumbprintOf(jwk), nonce };
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void =>
      void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(200, { resource: `${this.base}/mcp`, authorization_servers: [this.base] });
    if (url.pathname === '/.well-known/oauth-authorization-server')
      return json(200, {
        issuer: this.base,
        authorization_endpoint: `${this.base}/authorize`,
        token_endpoint: `${this.base}/token`,
        response_types_supported: ['code'],
        grant_types_supported: [JWT_BEARER],
        token_endpoint_auth_methods_supported: ['none'],
        dpop_signing_alg_values_supported: ['ES256'],
      });
    let body = '';
    for await (const chunk of req) body += (chunk as Buffer).toString('utf8');
    if (url.pathname === '/token') {
      const form = Object.fromEntries(new URLSearchParams(body));
      const assertion = form.assertion ?? '';
      const workload = verifyJwt(assertion, this.platform.publicKey);
      const grant = form.grant_type ?? '';
      const refused = this.refuse;
      const good =
        grant === JWT_BEARER && form.client_id === WORKLOAD_CLIENT && workload?.claims.aud === this.base && refused === undefined;
      if (!good) {
        this.grants.push({ grant, assertion, granted: false });
        // Hostile touch: the refusal quotes the assertion back.
        return json(400, { error: refused ?? 'invalid_grant', error_description: `no grant for ${assertion}` });
      }
      let jkt = '';
      if (req.headers.dpop !== undefined) {
        const proof = this.proof(req, `${this.base}/token`);
        if (!proof.ok) return json(400, { error: 'invalid_dpop_proof', error_description: proof.why });
        if (this.nonceAtToken !== undefined && proof.nonce !== this.nonceAtToken) {
          this.nonceChallenges.token++;
          return json(400, { error: 'use_dpop_nonce' }, { 'dpop-nonce': this.nonceAtToken });
        }
        jkt = proof.jkt;
      }
      const token = `at-${randomBytes(12).toString('hex')}`;
      this.tokens.set(token, jkt);
      this.grants.push({ grant, assertion, granted: true, jkt });
      return json(200, { access_token: token, token_type: jkt ? 'DPoP' : 'Bearer', expires_in: 3600 });
    }
    if (url.pathname === '/mcp') {
      const [scheme = '', token = ''] = (req.headers.authorization ?? '').split(' ');
      const metadata = `resource_metadata="${this.base}/.well-known/oauth-protected-resource/mcp"`;
      const bound = this.tokens.get(token);
      if (bound === undefined) return json(401, { error: 'invalid_token' }, { 'www-authenticate': `DPoP ${metadata}` });
      if (bound === '') {
        this.calls.push({ scheme, ok: scheme === 'Bearer' });
        if (scheme !== 'Bearer') return json(401, { error: 'invalid_token' }, { 'www-authenticate': `Bearer ${metadata}` });
      } else {
        const proof = this.proof(req, `${this.base}/mcp`, token);
        const held = scheme === 'DPoP' && proof.ok && proof.jkt === bound;
        this.calls.push({ scheme, ok: held, ...(proof.ok ? {} : { why: proof.why }) });
        if (!held) return json(401, { error: 'invalid_token' }, { 'www-authenticate': `DPoP error="invalid_dpop_proof", ${metadata}` });
        if (this.nonceAtResource !== undefined && proof.ok && proof.nonce !== this.nonceAtResource) {
          this.nonceChallenges.resource++;
          return json(
            401,
            { error: 'use_dpop_nonce' },
            { 'www-authenticate': `DPoP error="use_dpop_nonce", ${metadata}`, 'dpop-nonce': this.nonceAtResource },
          );
        }
      }
      forwardMcp(this.upstream, req, res, body);
      return;
    }
    json(404, { error: 'not_found' });
  }
}

function now(): number {
  return Math.floor(Date.now() / 1000);
}

describe('McpToolSource: workload identity (JWT bearer) and DPoP-bound tokens, against serveMcp on 127.0.0.1', () => {
  const setup = frontedEcho((upstream) => new WorkloadFront(upstream));

  it('binds the workload token to the client key: proofs at the token endpoint and on every request, both nonces answered, the key kept across a restart', async () => {
    setup.front.nonceAtToken = `as-${randomBytes(6).toString('hex')}`;
    setup.front.nonceAtResource = `rs-${randomBytes(6).toString('hex')}`;
    const store = new MemoryOAuthStore();
    let reads = 0;
    // DPoP is switched on by the server's own config entry, the grant by the source's option.
    const sourceOf = (): McpToolSource =>
      new McpToolSource({
        config: { mcpServers: { remote: { type: 'http', url: `${setup.front.base}/mcp`, oauth: { dpop: true } } } },
        oauth: {
          grant: 'jwt_bearer',
          store,
          clientId: WORKLOAD_CLIENT,
          assertion: () => {
            reads++;
            return setup.front.workloadToken();
          },
        },
      });
    const first = sourceOf();
    let report: Awaited<ReturnType<McpToolSource['connect']>>;
    try {
      report = await first.connect();
      expect(report.failed).toEqual([]);
      expect(report.connected).toEqual([{ server: 'remote', tools: ['remote_echo'] }]);
      const toolkit = new Toolkit();
      first.register(toolkit);
      expect(await toolkit.execute('remote_echo', { text: 'bound' })).toEqual({ output: 'echo: bound', isError: false });
    } finally {
      await first.close();
    }
    const kept = store.get('remote', 'dpop') as { alg: string; jwk: Record<string, unknown> };
    expect(kept.alg).toBe('ES256');
    const thumbprint = thumbprintOf(kept.jwk);
    // The token endpoint asked for its nonce once; the retry carried it and got a token bound to the kept key.
    expect(setup.front.nonceChallenges.token).toBe(1);
    const granted = setup.front.grants.filter((grant) => grant.granted);
    expect(granted.map(({ grant, jkt }) => ({ grant, jkt }))).toEqual([{ grant: JWT_BEARER, jkt: thumbprint }]);
    expect(reads).toBeGreaterThanOrEqual(1);
    // Every request presented the token with the DPoP scheme and a proof that held; the resource's nonce was answered.
    expect(setup.front.calls.length).toBeGreaterThan(1);
    expect(setup.front.calls.every((call) => call.scheme === 'DPoP' && call.ok)).toBe(true);
    expect(setup.front.nonceChallenges.resource).toBe(1);
    expect(setup.echo.runs).toBe(1);

    // A restarted process on the same store presents the same token with the same key: no new grant.
    const grantsBefore = setup.front.grants.length;
    const second = sourceOf();
    try {
      expect((await second.connect()).connected).toEqual([{ server: 'remote', tools: ['remote_echo'] }]);
      const toolkit = new Toolkit();
      second.register(toolkit);
      expect(await toolkit.execute('remote_echo', { text: 'again' })).toEqual({ output: 'echo: again', isError: false });
    } finally {
      await second.close();
    }
    expect(setup.front.grants.length).toBe(grantsBefore);
    expect(setup.front.calls.every((call) => call.scheme === 'DPoP' && call.ok)).toBe(true);
    expect(setup.echo.runs).toBe(2);
    // The private key never reaches what the host is told.
    expect(JSON.stringify(report)).not.toContain(String(kept.jwk.d));
  });

  it('gives the workload token as a Bearer grant without DPoP; a refused one fails the server with the refusal, never quoting the token, and tries no other grant', async () => {
    const store = new MemoryOAuthStore();
    const tokens: string[] = [];
    const sourceOf = (): McpToolSource =>
      new McpToolSource({
        config: { mcpServers: { remote: { type: 'http', url: `${setup.front.base}/mcp` } } },
        oauth: {
          grant: 'jwt_bearer',
          store,
          clientId: WORKLOAD_CLIENT,
          assertion: () => {
            const token = setup.front.workloadToken();
            tokens.push(token);
            return token;
          },
        },
      });
    const refusedSource = sourceOf();
    try {
      setup.front.refuse = 'unauthorized_client';
      const refused = await refusedSource.connect();
      const failure = refused.failed[0]?.error;
      expect(failure).toBeInstanceOf(McpLoginError);
      expect(failure?.message).toMatch(
        /^server remote: the authorization server refused the urn:ietf:params:oauth:grant-type:jwt-bearer grant: unauthorized_client: no grant for \*\*\*/,
      );
      for (const token of tokens) expect(JSON.stringify({ message: failure?.message, stack: failure?.stack })).not.toContain(token);
      // The SDK asks once more after unauthorized_client, with the token read anew; never another grant.
      expect(setup.front.grants.length).toBeGreaterThanOrEqual(1);
      expect(setup.front.grants.length).toBeLessThanOrEqual(2);
      expect(setup.front.grants.every((grant) => grant.grant === JWT_BEARER && !grant.granted)).toBe(true);
      expect(store.get('remote', 'dpop')).toBeUndefined();
    } finally {
      await refusedSource.close();
    }
    setup.front.refuse = undefined;
    setup.front.grants.length = 0;

    // Once the authorization server takes it, the token is a plain Bearer one, read anew for this grant.
    const source = sourceOf();
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([{ server: 'remote', tools: ['remote_echo'] }]);
      const toolkit = new Toolkit();
      source.register(toolkit);
      expect(await toolkit.execute('remote_echo', { text: 'plain' })).toEqual({ output: 'echo: plain', isError: false });
      const granted = setup.front.grants.filter((grant) => grant.granted);
      expect(granted).toHaveLength(1);
      expect(granted[0]!.jkt).toBe('');
      expect(granted[0]!.assertion).toBe(tokens[tokens.length - 1]);
      expect(setup.front.calls.every((call) => call.scheme === 'Bearer' && call.ok)).toBe(true);
    } finally {
      await source.close();
    }
  });

  it('refuses a config whose oauth.dpop is not a boolean, and a jwt_bearer grant without an assertion function', async () => {
    const store = new MemoryOAuthStore();
    const badConfig = new McpToolSource({
      config: { mcpServers: { remote: { type: 'http', url: `${setup.front.base}/mcp`, oauth: { dpop: 'yes' } } } },
      oauth: { grant: 'jwt_bearer', store, clientId: WORKLOAD_CLIENT, assertion: () => setup.front.workloadToken() },
    });
    const noAssertion = new McpToolSource({
      config: { mcpServers: { remote: { type: 'http', url: `${setup.front.base}/mcp` } } },
      oauth: { grant: 'jwt_bearer', store, clientId: WORKLOAD_CLIENT, assertion: 'a-token' as unknown as () => string },
    });
    try {
      const bad = await badConfig.connect();
      expect(bad.failed[0]?.error).toBeInstanceOf(McpConfigError);
      expect(bad.failed[0]?.error.message).toContain('oauth.dpop must be true or false');
      const none = await noAssertion.connect();
      // A grant the options cannot make fails its server when it connects, as any other option a provider refuses.
      expect(none.failed[0]?.error).toBeInstanceOf(McpConnectionError);
      expect(none.failed[0]?.error.message).toContain('assertion');
      expect(setup.front.grants).toEqual([]);
    } finally {
      await badConfig.close();
      await noAssertion.close();
    }
  });
});
