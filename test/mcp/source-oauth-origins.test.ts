/**
 * OAuth discovery against a hostile MCP server on 127.0.0.1 that points the client at another
 * port of 127.0.0.1 (its challenge's resource_metadata, its metadata's authorization server, a
 * redirect) or serves another issuer's metadata: the client refuses with a typed error naming
 * the origin and the option, and the other port receives no request. See docs/mcp.md, "OAuth".
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpOAuthIssuerError, McpOAuthOriginError, McpToolSource, MemoryOAuthStore } from '../../src/mcp';

interface Host {
  base: string;
  seen: string[];
  server: Server;
}

const hosts: Host[] = [];
async function host(handler: (path: string, res: ServerResponse, base: string) => void): Promise<Host> {
  const seen: string[] = [];
  const entry: Host = { base: '', seen, server: createServer() };
  entry.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    seen.push(req.url ?? '');
    handler(new URL(req.url ?? '/', entry.base).pathname, res, entry.base);
  });
  await new Promise<void>((resolve) => entry.server.listen(0, '127.0.0.1', resolve));
  entry.base = `http://127.0.0.1:${(entry.server.address() as AddressInfo).port}`;
  hosts.push(entry);
  return entry;
}
afterEach(async () => {
  for (const { server } of hosts.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The other port: a well-behaved authorization server, which must hear nothing unless allowed. */
async function elsewhere(): Promise<Host> {
  return host((path, res, base) => {
    if (path.startsWith('/.well-known/oauth-protected-resource')) return json(res, 200, { resource: base, authorization_servers: [base] });
    if (path === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        response_types_supported: ['code'],
      });
    json(res, 400, { error: 'invalid_request' });
  });
}

/** The hostile MCP server: every /mcp request 401, discovery as `discovery` says. */
async function hostile(discovery: (path: string, res: ServerResponse, base: string) => boolean): Promise<Host> {
  return host((path, res, base) => {
    if (discovery(path, res, base)) return;
    if (path === '/mcp') return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
    json(res, 404, { error: 'not_found' });
  });
}

async function connect(mcp: Host, allowedOrigins?: string[] | ((origin: string) => boolean)): Promise<Error | undefined> {
  const source = new McpToolSource({
    config: { mcpServers: { h: { type: 'http', url: `${mcp.base}/mcp` } } },
    oauth: {
      grant: 'client_credentials',
      store: new MemoryOAuthStore(),
      clientId: 'c',
      clientSecret: 's',
      ...(allowedOrigins ? { allowedOrigins } : {}),
    },
  });
  try {
    const report = await source.connect();
    expect(report.connected).toEqual([]);
    return report.failed[0]?.error;
  } finally {
    await source.close();
  }
}

describe("OAuth discovery stays on the MCP server's origin", () => {
  it("refuses the challenge's resource_metadata on another port", async () => {
    const other = await elsewhere();
    const mcp = await host((path, res) => {
      if (path === '/mcp')
        return json(res, 401, {}, { 'www-authenticate': `Bearer resource_metadata="${other.base}/.well-known/oauth-protected-resource"` });
      json(res, 404, {});
    });
    const error = await connect(mcp);
    expect(error).toBeInstanceOf(McpOAuthOriginError);
    expect(error).toMatchObject({ code: 'TOOLNEXUS_MCP_OAUTH_ORIGIN', server: 'h', origin: other.base });
    expect(error?.message).toBe(
      `server h: OAuth refused to reach ${other.base}, not the server's origin (allow it with oauth.allowedOrigins)`,
    );
    expect(other.seen).toEqual([]);
  });

  it('refuses an authorization server on another port named by the protected-resource metadata, unless allowed', async () => {
    const other = await elsewhere();
    const mcp = await hostile((path, res, base) => {
      if (!path.startsWith('/.well-known/oauth-protected-resource')) return false;
      json(res, 200, { resource: `${base}/mcp`, authorization_servers: [other.base] });
      return true;
    });
    const error = await connect(mcp);
    expect(error).toBeInstanceOf(McpOAuthOriginError);
    expect(error?.message).toBe(
      `server h: OAuth refused to reach ${other.base}, not the server's origin (allow it with oauth.allowedOrigins)`,
    );
    expect(other.seen).toEqual([]);

    // Named by the host, the same authorization server is asked.
    const allowed = await connect(mcp, [other.base]);
    expect(allowed).not.toBeInstanceOf(McpOAuthOriginError);
    expect(other.seen).toContain('/.well-known/oauth-authorization-server');
    const asked = other.seen.length;
    const decided = await connect(mcp, (origin) => origin === other.base);
    expect(decided).not.toBeInstanceOf(McpOAuthOriginError);
    expect(other.seen.length).toBeGreaterThan(asked);
  });

  it('never follows a redirect to another origin', async () => {
    const other = await elsewhere();
    const mcp = await hostile((path, res) => {
      if (!path.startsWith('/.well-known/oauth-protected-resource')) return false;
      res.writeHead(302, { location: `${other.base}/.well-known/oauth-protected-resource` }).end();
      return true;
    });
    const error = await connect(mcp);
    expect(error).toBeInstanceOf(McpOAuthOriginError);
    expect(error?.message).toBe(
      `server h: OAuth refused a redirect from ${mcp.base} to ${other.base}, not the server's origin (allow it with oauth.allowedOrigins)`,
    );
    expect(other.seen).toEqual([]);
  });

  it('refuses authorization-server metadata naming another issuer, and its endpoints on another port', async () => {
    const other = await elsewhere();
    const mcp = await hostile((path, res, base) => {
      if (path.startsWith('/.well-known/oauth-protected-resource')) {
        json(res, 200, { resource: `${base}/mcp`, authorization_servers: [base] });
        return true;
      }
      if (path !== '/.well-known/oauth-authorization-server') return false;
      json(res, 200, {
        issuer: other.base,
        authorization_endpoint: `${other.base}/authorize`,
        token_endpoint: `${other.base}/token`,
        response_types_supported: ['code'],
      });
      return true;
    });
    const error = await connect(mcp);
    expect(error).toBeInstanceOf(McpOAuthIssuerError);
    expect(error).toMatchObject({ code: 'TOOLNEXUS_MCP_OAUTH_ISSUER', issuer: other.base });
    expect(error?.message).toBe(
      `server h: the authorization-server metadata at ${mcp.base}/.well-known/oauth-authorization-server names issuer ${other.base}, not where it was fetched from; it is not used`,
    );
    expect(other.seen).toEqual([]);
  });

  it("takes root metadata naming an issuer with a path on the server's own origin (MCP 2025-03-26 servers)", async () => {
    const mcp = await hostile((path, res, base) => {
      if (path !== '/.well-known/oauth-authorization-server') return false;
      json(res, 200, {
        issuer: `${base}/oauth`,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        response_types_supported: ['code'],
      });
      return true;
    });
    const error = await connect(mcp);
    expect(error).not.toBeInstanceOf(McpOAuthIssuerError);
    expect(mcp.seen).toContain('/token');
  });
});
