/**
 * McpToolSource's OAuth against serveMcp behind a small OAuth server of this test's own on
 * 127.0.0.1 (protected-resource metadata, authorization-server metadata, dynamic client
 * registration, authorization code with PKCE S256, refresh), which forwards /mcp to serveMcp
 * once the bearer token is one it issued. The conformance suite's auth/* scenarios cover the
 * protocol's variants (scripts/mcp-conformance.js); this covers what the host sees.
 */
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { defineTool, pendingOf, Toolkit } from '../../src';
import { MemoryStore } from '../../src/stores/memory';
import { ResumeCoordinator } from '../../src/suspension';
import { McpLoginError, McpLoginStateError, McpToolSource, MemoryOAuthStore, serveMcp, type McpHttpServerHandle } from '../../src/mcp';
import { forwardMcp } from '../fixtures/mcp-forward';
import { EchoTool, OAuthTestFront } from '../fixtures/mcp-oauth-front';

/** The test's authorization server and resource proxy: what it issued, and what it was asked. */
class OAuthFront extends OAuthTestFront {
  readonly access = new Set<string>();
  readonly refresh = new Set<string>();
  readonly issued: string[] = [];
  private readonly codes = new Map<string, { challenge: string; redirect: string }>();
  refusals = 0;
  refreshes = 0;
  consent: 'allow' | 'deny' = 'allow';
  /** Hostile: a tools/call with a good token is refused with the Authorization header quoted back. */
  echoOnCall = false;

  /** Follows the authorization URL as a person would, and returns where the browser is sent back. */
  async login(url: string): Promise<string> {
    const answer = await fetch(url, { redirect: 'manual' });
    return answer.headers.get('location') as string;
  }

  private issue(): Record<string, unknown> {
    const accessToken = `at-${randomBytes(12).toString('hex')}`;
    const refreshToken = `rt-${randomBytes(12).toString('hex')}`;
    this.access.add(accessToken);
    this.refresh.add(refreshToken);
    this.issued.push(accessToken, refreshToken);
    return { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, refresh_token: refreshToken };
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(200, { resource: `${this.base}/mcp`, authorization_servers: [this.base] });
    if (url.pathname === '/.well-known/oauth-authorization-server')
      return json(200, {
        issuer: this.base,
        authorization_endpoint: `${this.base}/authorize`,
        token_endpoint: `${this.base}/token`,
        registration_endpoint: `${this.base}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      });
    const body = await new Promise<string>((resolve) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => resolve(text));
    });
    if (url.pathname === '/register') {
      const metadata = JSON.parse(body) as Record<string, unknown>;
      return json(201, { ...metadata, client_id: `client-${randomBytes(4).toString('hex')}`, token_endpoint_auth_method: 'none' });
    }
    if (url.pathname === '/authorize') {
      const redirect = new URL(url.searchParams.get('redirect_uri') as string);
      const state = url.searchParams.get('state');
      if (state) redirect.searchParams.set('state', state);
      if (this.consent === 'deny') {
        this.refusals++;
        redirect.searchParams.set('error', 'access_denied');
      } else {
        if (url.searchParams.get('code_challenge_method') !== 'S256') return json(400, { error: 'invalid_request' });
        const code = `code-${randomBytes(8).toString('hex')}`;
        this.codes.set(code, { challenge: url.searchParams.get('code_challenge') as string, redirect: redirect.href });
        redirect.searchParams.set('code', code);
      }
      res.writeHead(302, { location: redirect.href }).end();
      return;
    }
    if (url.pathname === '/token') {
      const form = new URLSearchParams(body);
      if (form.get('grant_type') === 'authorization_code') {
        const code = this.codes.get(form.get('code') ?? '');
        this.codes.delete(form.get('code') ?? '');
        const verified = createHash('sha256')
          .update(form.get('code_verifier') ?? '')
          .digest('base64url');
        if (!code || verified !== code.challenge) return json(400, { error: 'invalid_grant' });
        return json(200, this.issue());
      }
      if (form.get('grant_type') === 'refresh_token') {
        if (!this.refresh.delete(form.get('refresh_token') ?? '')) return json(400, { error: 'invalid_grant' });
        this.refreshes++;
        return json(200, this.issue());
      }
      return json(400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/mcp') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      if (!this.access.has(token))
        return json(
          401,
          // A hostile touch: the refusal quotes the header it got back to the client.
          { error: 'invalid_token', error_description: `not a token of ours: ${req.headers.authorization ?? 'none'}` },
          { 'www-authenticate': `Bearer resource_metadata="${this.base}/.well-known/oauth-protected-resource/mcp"` },
        );
      if (this.echoOnCall && body.includes('"tools/call"'))
        return json(500, { error: 'server_error', error_description: `I got ${req.headers.authorization ?? ''}` });
      forwardMcp(this.upstream, req, res, body);
      return;
    }
    json(404, { error: 'not_found' });
  }
}

describe('McpToolSource with OAuth: serveMcp behind an authorization server on 127.0.0.1', () => {
  let served: McpHttpServerHandle;
  let front: OAuthFront;
  let echo: EchoTool;

  beforeEach(async () => {
    echo = new EchoTool();
    served = await serveMcp(new Toolkit().register(echo), { transport: 'http', host: '127.0.0.1', port: 0 });
    front = new OAuthFront(new URL(served.url));
    await front.start();
  });

  afterEach(async () => {
    await front.stop();
    await served.close();
  });

  const sourceWith = (store: MemoryOAuthStore): McpToolSource =>
    new McpToolSource({
      config: { mcpServers: { remote: { type: 'http', url: `${front.base}/mcp` } } },
      oauth: { store, redirectUrl: 'http://127.0.0.1:1/callback', clientName: 'toolnexus test' },
    });

  /** Connected and logged in, its tools in a toolkit behind a coordinator; then both tokens revoked, so the next call needs a login. */
  const loggedInThenRevoked = async (source: McpToolSource) => {
    const report = await source.connect();
    await source.finishLogin('remote', await front.login(report.needsLogin[0]!.url));
    const toolkit = new Toolkit();
    source.register(toolkit);
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    front.access.clear();
    front.refresh.clear();
    return { toolkit, coordinator };
  };

  /** Every text a host may see, none of which may carry a token. */
  const tokenFree = (...texts: unknown[]): void => {
    const all = JSON.stringify(texts);
    for (const secret of front.issued) expect(all).not.toContain(secret);
  };

  it('reports the login connect() needs, finishes it with the redirect, and refreshes an expired token silently', async () => {
    const store = new MemoryOAuthStore();
    const source = sourceWith(store);
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([]);
      expect(report.failed).toEqual([]);
      expect(report.needsLogin).toHaveLength(1);
      const url = new URL(report.needsLogin[0]!.url);
      expect(url.origin + url.pathname).toBe(`${front.base}/authorize`);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('resource')).toBe(`${front.base}/mcp`);

      const tools = await source.finishLogin('remote', await front.login(url.href));
      expect(tools).toEqual(['remote_echo']);
      const toolkit = new Toolkit();
      source.register(toolkit);
      const first = await toolkit.execute('remote_echo', { text: 'one' });
      expect(first).toMatchObject({ isError: false, output: 'echo: one' });

      // The access token expires: the next call refreshes it without anyone logging in.
      front.access.clear();
      const second = await toolkit.execute('remote_echo', { text: 'two' });
      expect(second).toMatchObject({ isError: false, output: 'echo: two' });
      expect(front.refreshes).toBe(1);
      expect(echo.runs).toBe(2);
      expect(typeof store.get('remote', 'tokens')).toBe('object');
      tokenFree(report, first, second);
    } finally {
      await source.close();
    }
  });

  it('a call whose tokens are gone suspends as an authorization request; the answer with the code replays it once', async () => {
    const source = sourceWith(new MemoryOAuthStore());
    try {
      // Both tokens revoked: refresh fails, so a person must log in again.
      const { coordinator } = await loggedInThenRevoked(source);
      const suspended = await coordinator.execute('remote_echo', { text: 'again' }, {}, { callId: 'call_1', runId: 'run_1' });
      const request = pendingOf(suspended);
      expect(request).toMatchObject({ kind: 'authorization', data: { mcpServer: 'remote' } });
      expect(request!.url).toContain(`${front.base}/authorize`);
      expect(echo.runs).toBe(0);

      const redirect = await front.login(request!.url!);
      const done = await coordinator.resolve({ id: request!.id, ok: true, data: { redirect } });
      expect(done).toMatchObject({ isError: false, output: 'echo: again' });
      expect(echo.runs).toBe(1);
      // Answered twice, it is not run twice.
      await expect(coordinator.resolve({ id: request!.id, ok: true, data: { redirect } })).resolves.toEqual(done);
      expect(echo.runs).toBe(1);
      tokenFree(suspended, done);
      // The one-time code was consumed by the replay, not kept in the store (docs/design.md, glossary: "consumed").
      const kept = await coordinator.get(request!.id);
      expect(kept?.answer).toEqual({ id: request!.id, ok: true, data: { redirect: '[consumed]' } });
      expect(JSON.stringify(kept)).not.toContain(new URL(redirect).searchParams.get('code'));
    } finally {
      await source.close();
    }
  });

  it('a refused consent is a clear McpLoginError; a declined login request ends the call without running it', async () => {
    const source = sourceWith(new MemoryOAuthStore());
    try {
      const report = await source.connect();
      front.consent = 'deny';
      const back = await front.login(report.needsLogin[0]!.url);
      const refused = await source.finishLogin('remote', back).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(McpLoginError);
      expect((refused as Error).message).toBe('server remote: login not completed: the consent was refused');
      expect(front.refusals).toBe(1);

      // The same refusal on a suspended call's replay, by the answer's redirect.
      front.consent = 'allow';
      const redo = sourceWith(new MemoryOAuthStore());
      try {
        const { coordinator } = await loggedInThenRevoked(redo);
        const request = pendingOf(await coordinator.execute('remote_echo', { text: 'no' }, {}, { callId: 'c2', runId: 'r2' }))!;
        front.consent = 'deny';
        const denied = await coordinator.resolve({ id: request.id, ok: true, data: { redirect: await front.login(request.url!) } });
        expect(denied).toMatchObject({ isError: true });
        expect(denied.output).toContain('the consent was refused');
        const declined = pendingOf(await coordinator.execute('remote_echo', { text: 'no' }, {}, { callId: 'c3', runId: 'r3' }))!;
        const ended = await coordinator.resolve({ id: declined.id, ok: false, reason: 'declined' });
        // The coordinator ends a declined request itself: the tool is not replayed.
        expect(ended).toMatchObject({ isError: true });
        expect(ended.output).toContain('(declined)');
        expect(echo.runs).toBe(0);
        tokenFree(denied, ended);
      } finally {
        await redo.close();
      }
    } finally {
      await source.close();
    }
  });

  it('a token the server quotes back in a failure is redacted, and finishLogin without a login under way is refused', async () => {
    const source = sourceWith(new MemoryOAuthStore());
    try {
      const report = await source.connect();
      await source.finishLogin('remote', await front.login(report.needsLogin[0]!.url));
      const toolkit = new Toolkit();
      source.register(toolkit);
      front.echoOnCall = true;
      const result = await toolkit.execute('remote_echo', { text: 'x' });
      expect(result.isError).toBe(true);
      expect(result.output).toContain('I got Bearer ***');
      tokenFree(result);
      await expect(source.finishLogin('nobody', 'code-1')).rejects.toThrow('server nobody: no login is under way for it');
    } finally {
      await source.close();
    }
  });

  it("a server's own oauth in the config: its scope is asked, false never logs in, and without the option it is a clear failure", async () => {
    const url = `${front.base}/mcp`;
    const oauth = { store: new MemoryOAuthStore(), redirectUrl: 'http://127.0.0.1:1/callback' };
    const source = new McpToolSource({
      config: { mcpServers: { scoped: { url, oauth: { scope: 'crm:read' } }, off: { type: 'http', url, oauth: false } } },
      oauth,
    });
    const bare = new McpToolSource({ config: { mcpServers: { scoped: { type: 'http', url, oauth: true } } } });
    try {
      const report = await source.connect();
      expect(report.needsLogin.map((login) => login.server)).toEqual(['scoped']);
      expect(new URL(report.needsLogin[0]!.url).searchParams.get('scope')).toBe('crm:read');
      expect(report.failed.map((failed) => failed.server)).toEqual(['off']);
      expect(report.failed[0]!.error.message).toContain('HTTP 401');
      const without = await bare.connect();
      expect(without.failed[0]!.error.message).toBe(
        'server scoped: its config asks for oauth, but this McpToolSource has no oauth option (a store and a redirect URL)',
      );
    } finally {
      await source.close();
      await bare.close();
    }
  });

  /** `redirect` with its `state` replaced (or removed, with `undefined`). */
  const withState = (redirect: string, state: string | undefined): string => {
    const url = new URL(redirect);
    if (state === undefined) url.searchParams.delete('state');
    else url.searchParams.set('state', state);
    return url.href;
  };

  it("a redirect whose state is missing or another login's is refused, nothing is stored, and the right one still finishes the login", async () => {
    const store = new MemoryOAuthStore();
    const source = sourceWith(store);
    const other = sourceWith(new MemoryOAuthStore());
    try {
      const report = await source.connect();
      const state = new URL(report.needsLogin[0]!.url).searchParams.get('state');
      expect(state).toMatch(/^[\w-]{43}$/);
      expect(store.get('remote', 'state')).toBe(state);
      // Each login has its own.
      const theirs = new URL((await other.connect()).needsLogin[0]!.url).searchParams.get('state');
      expect(theirs).not.toBe(state);

      const redirect = await front.login(report.needsLogin[0]!.url);
      const forged = await source.finishLogin('remote', withState(redirect, theirs!)).catch((error: unknown) => error);
      expect(forged).toBeInstanceOf(McpLoginStateError);
      expect(forged).toMatchObject({
        code: 'TOOLNEXUS_MCP_LOGIN_STATE',
        message: "server remote: the redirect's state is not the one of the login under way; refused",
      });
      await expect(source.finishLogin('remote', withState(redirect, undefined))).rejects.toThrow(
        'server remote: the redirect carries no state, so it cannot be tied to this login; refused',
      );
      // A forged refusal cannot end the login either.
      const deny = new URL(withState(redirect, theirs!));
      deny.searchParams.delete('code');
      deny.searchParams.set('error', 'access_denied');
      await expect(source.finishLogin('remote', deny.href)).rejects.toBeInstanceOf(McpLoginStateError);
      expect(store.get('remote', 'tokens')).toBeUndefined();
      expect(front.issued).toEqual([]);

      await expect(source.finishLogin('remote', redirect)).resolves.toEqual(['remote_echo']);
      expect(typeof store.get('remote', 'tokens')).toBe('object');
      // The state is good for one redirect: the same one again is refused.
      expect(store.get('remote', 'state')).toBeUndefined();
      await expect(source.finishLogin('remote', redirect)).rejects.toBeInstanceOf(McpLoginStateError);
      tokenFree(report, forged);
    } finally {
      await source.close();
      await other.close();
    }
  });

  it("a bare code is taken from the host's own finishLogin, never from a request's answer", async () => {
    const source = sourceWith(new MemoryOAuthStore());
    try {
      const { toolkit, coordinator } = await loggedInThenRevoked(source);
      const request = pendingOf(await coordinator.execute('remote_echo', { text: 'bare' }, {}, { callId: 'c1', runId: 'r1' }))!;
      const code = new URL(await front.login(request.url!)).searchParams.get('code')!;
      const refused = await coordinator.resolve({ id: request.id, ok: true, data: { code } });
      expect(refused).toMatchObject({ isError: true });
      expect(refused.output).toContain('a login request is answered with the redirect URL (data.redirect), whose state is checked');
      expect(echo.runs).toBe(0);

      // The host hands the same code over itself: taken (it is still unused), and the call runs.
      await expect(source.finishLogin('remote', code)).resolves.toEqual(['remote_echo']);
      await expect(toolkit.execute('remote_echo', { text: 'now' })).resolves.toMatchObject({ isError: false, output: 'echo: now' });
      expect(echo.runs).toBe(1);
    } finally {
      await source.close();
    }
  });

  it("a login finished after register renames another server's tool its tools now collide with, where register put it", async () => {
    // Served as `gh_enterprise` (login needed), its `echo` collides with the open server `gh`'s `enterprise_echo`.
    const open = await serveMcp(new Toolkit().register(defineTool({ name: 'enterprise_echo', description: 'a copy', run: () => 'open' })), {
      transport: 'http',
      host: '127.0.0.1',
      port: 0,
    });
    const source = new McpToolSource({
      config: { mcpServers: { gh_enterprise: { type: 'http', url: `${front.base}/mcp` }, gh: { type: 'http', url: open.url } } },
      oauth: { store: new MemoryOAuthStore(), redirectUrl: 'http://127.0.0.1:1/callback', clientName: 'toolnexus test' },
    });
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([{ server: 'gh', tools: ['gh_enterprise_echo'] }]);
      const toolkit = new Toolkit();
      source.register(toolkit);

      const names = await source.finishLogin('gh_enterprise', await front.login(report.needsLogin[0]!.url));
      expect(names).toEqual([expect.stringMatching(/^gh_enterprise_echo_[0-9a-f]{8}$/)]);
      const openName = source.toolDefinitions().find((tool) => tool.name !== names[0])!.name;
      expect(openName).toMatch(/^gh_enterprise_echo_[0-9a-f]{8}$/);
      expect(toolkit.has('gh_enterprise_echo')).toBe(false);
      expect(
        toolkit
          .tools()
          .map((tool) => tool.name)
          .sort(),
      ).toEqual([names[0], openName].sort());
      await expect(toolkit.execute(names[0]!, { text: 'hi' })).resolves.toMatchObject({ output: 'echo: hi' });
      await expect(toolkit.execute(openName, {})).resolves.toMatchObject({ output: 'open' });
    } finally {
      await source.close();
      await open.close();
    }
  });
});
