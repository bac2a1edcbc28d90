/**
 * SEP-2352 (MCP 2026-07-28): a server that moves to another authorization server. After its
 * protected-resource metadata names the new one and it refuses the old one's tokens,
 * McpToolSource reads that metadata again, registers at the new authorization server and asks
 * for a login there, never presenting what the old one issued (credentials are keyed by issuer).
 * serveMcp sits behind a front of this test's own on 127.0.0.1 that serves the metadata and
 * both authorization servers (issuers with a path: /as1, /as2).
 */
import 'reflect-metadata';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pendingOf, Toolkit } from '../../src';
import { McpToolSource, MemoryOAuthStore } from '../../src/mcp';
import { forwardMcp } from '../fixtures/mcp-forward';
import { frontedEcho, OAuthTestFront } from '../fixtures/mcp-oauth-front';

type As = 'as1' | 'as2';

/** What one authorization server registered, and which client ids reached its endpoints. */
interface AsRecord {
  registered: string[];
  seen: string[];
  tokens: Set<string>;
  codes: Map<string, string>;
}

class MovingFront extends OAuthTestFront {
  current: As = 'as1';
  readonly servers: Record<As, AsRecord> = {
    as1: { registered: [], seen: [], tokens: new Set(), codes: new Map() },
    as2: { registered: [], seen: [], tokens: new Set(), codes: new Map() },
  };

  /** A person follows the authorization URL and consents; where the browser is sent back. */
  async consent(url: string): Promise<string> {
    const answer = await fetch(url, { redirect: 'manual' });
    return answer.headers.get('location') as string;
  }

  protected async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void =>
      void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (url.pathname.startsWith('/.well-known/oauth-protected-resource'))
      return json(200, { resource: `${this.base}/mcp`, authorization_servers: [`${this.base}/${this.current}`] });
    const metadata = /^\/\.well-known\/oauth-authorization-server\/(as[12])$/.exec(url.pathname);
    if (metadata) {
      const issuer = `${this.base}/${metadata[1]}`;
      return json(200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        authorization_response_iss_parameter_supported: true,
      });
    }
    let body = '';
    for await (const chunk of req) body += (chunk as Buffer).toString('utf8');
    const endpoint = /^\/(as[12])\/(register|authorize|token)$/.exec(url.pathname);
    if (endpoint) {
      const as = endpoint[1] as As;
      const record = this.servers[as];
      const issuer = `${this.base}/${as}`;
      if (endpoint[2] === 'register') {
        const clientId = `${as}-client-${randomBytes(4).toString('hex')}`;
        record.registered.push(clientId);
        return json(201, { ...(JSON.parse(body) as object), client_id: clientId, token_endpoint_auth_method: 'none' });
      }
      if (endpoint[2] === 'authorize') {
        record.seen.push(url.searchParams.get('client_id') ?? '');
        const redirect = new URL(url.searchParams.get('redirect_uri') as string);
        const code = `code-${randomBytes(8).toString('hex')}`;
        record.codes.set(code, url.searchParams.get('code_challenge') ?? '');
        redirect.searchParams.set('code', code);
        redirect.searchParams.set('state', url.searchParams.get('state') ?? '');
        redirect.searchParams.set('iss', issuer);
        res.writeHead(302, { location: redirect.href }).end();
        return;
      }
      const form = new URLSearchParams(body);
      record.seen.push(form.get('client_id') ?? '');
      const challenge = record.codes.get(form.get('code') ?? '');
      const verified = createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url');
      if (challenge === undefined || challenge !== verified) return json(400, { error: 'invalid_grant' });
      const token = `${as}-at-${randomBytes(12).toString('hex')}`;
      record.tokens.add(token);
      return json(200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    if (url.pathname === '/mcp') {
      const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      // Only the current authorization server's tokens are taken: the old one's are refused once the server moved.
      if (!this.servers[this.current].tokens.has(token))
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
}

describe('McpToolSource when the MCP server moves to another authorization server (SEP-2352)', () => {
  const setup = frontedEcho((upstream) => new MovingFront(upstream));

  it('reads the metadata again, registers at the new authorization server, logs in there, and never shows it the old credentials', async () => {
    const store = new MemoryOAuthStore();
    const source = new McpToolSource({
      config: { mcpServers: { remote: { type: 'http', url: `${setup.front.base}/mcp` } } },
      oauth: { store, redirectUrl: 'http://127.0.0.1:1/callback' },
    });
    try {
      const report = await source.connect();
      const login = report.needsLogin[0];
      expect(login?.url.startsWith(`${setup.front.base}/as1/authorize`)).toBe(true);
      await source.finishLogin('remote', await setup.front.consent(login!.url));
      const toolkit = new Toolkit();
      source.register(toolkit);
      expect(await toolkit.execute('remote_echo', { text: 'before' })).toEqual({ output: 'echo: before', isError: false });
      const [oldClient] = setup.front.servers.as1.registered;

      // The server moves: its metadata names as2, and as1's tokens are refused.
      setup.front.current = 'as2';
      const moved = await toolkit.execute('remote_echo', { text: 'after' });
      const request = pendingOf(moved);
      expect(request?.kind).toBe('authorization');
      expect(request?.url?.startsWith(`${setup.front.base}/as2/authorize`)).toBe(true);
      expect(setup.front.servers.as2.registered).toHaveLength(1);
      expect(setup.echo.runs).toBe(1);

      await source.finishLogin('remote', await setup.front.consent(request!.url!));
      expect(await toolkit.execute('remote_echo', { text: 'after' })).toEqual({ output: 'echo: after', isError: false });
      expect(setup.echo.runs).toBe(2);
      // as1's client never reached as2; the registration kept is as2's, stamped with its issuer.
      expect(setup.front.servers.as2.seen.length).toBeGreaterThanOrEqual(2);
      expect(setup.front.servers.as2.seen.every((id) => id === setup.front.servers.as2.registered[0])).toBe(true);
      expect(setup.front.servers.as2.seen).not.toContain(oldClient);
      expect(store.get('remote', 'client')).toMatchObject({
        client_id: setup.front.servers.as2.registered[0],
        issuer: `${setup.front.base}/as2`,
      });
    } finally {
      await source.close();
    }
  });
});
