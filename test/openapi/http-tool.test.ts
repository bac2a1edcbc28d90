/**
 * httpTool (upstream toolnexus SPEC §7), against servers on 127.0.0.1. The first case ports
 * upstream's JS test "httpTool: placeholder, env header, GET query, non-2xx"
 * (js/test/unit.test.ts) and the Python tests test_http_tool_placeholder_env_header_query and
 * test_http_tool_non_2xx_is_error (python/tests/test_unit.py): same routes, same results.
 */
import 'reflect-metadata';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IsInt, IsString, Min } from 'class-validator';
import { Toolkit, pendingOf } from 'toolnexus-ts';
import { ResumeCoordinator } from 'toolnexus-ts/suspension';
import { MemoryStore } from 'toolnexus-ts/memory';
import { httpTool } from 'toolnexus-ts/openapi';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: Server[] = [];
async function serve(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handle(req, res, body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const env = { TN_TEST_TOKEN: 'tok-123' };

describe('httpTool (upstream SPEC §7)', () => {
  it('fills {placeholders}, reads ${ENV} headers, sends GET arguments as the query; a non-2xx is `HTTP <status>: <body>`', async () => {
    const api = await serve((req, res) => {
      if (req.url?.startsWith('/posts/1')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: 1, auth: req.headers.authorization, q: req.url }));
      } else res.writeHead(404).end('nope');
    });
    const ok = httpTool({
      name: 'get_post',
      description: 'Gets a post',
      method: 'GET',
      url: `${api.url}/posts/{id}`,
      headers: { Authorization: 'Bearer ${TN_TEST_TOKEN}' },
      inputSchema: { type: 'object', properties: { id: { type: 'integer' }, expand: { type: 'string' } }, required: ['id'] },
      env,
    });
    const toolkit = new Toolkit().register(ok);
    const result = await toolkit.execute('get_post', { id: 1, expand: 'author' });
    expect(result.isError).toBe(false);
    expect(result.metadata).toEqual({ status: 200 });
    expect(api.seen[0]).toMatchObject({ method: 'GET', url: '/posts/1?expand=author' });
    expect(api.seen[0]?.headers.authorization).toBe('Bearer tok-123');
    // The server echoed the token: the model never sees it.
    expect(JSON.parse(result.output)).toEqual({ id: 1, auth: 'Bearer [redacted]', q: '/posts/1?expand=author' });

    const bad = httpTool({
      name: 'b',
      description: '',
      method: 'GET',
      url: `${api.url}/posts/{id}`,
      inputSchema: { type: 'object', properties: { id: { type: 'integer' } } },
    });
    const missing = await new Toolkit().register(bad).execute('b', { id: 999 });
    expect(missing).toEqual({ output: 'HTTP 404: nope', isError: true, metadata: { status: 404 } });
  });

  it('sends the arguments left after the placeholders as a JSON body, and `query` ones in the query', async () => {
    const api = await serve((_req, res) => res.writeHead(201).end('created'));
    class NewOrder {
      @IsString() customer!: string;
      @IsInt() @Min(1) quantity!: number;
      @IsString() dryRun!: string;
    }
    const tool = httpTool({
      name: 'create_order',
      description: 'Creates an order',
      method: 'post',
      url: `${api.url}/shops/{customer}/orders`,
      args: NewOrder,
      query: ['dryRun'],
    });
    const toolkit = new Toolkit().register(tool);
    expect(await toolkit.execute('create_order', { customer: 'a b', quantity: 2, dryRun: 'no' })).toEqual({
      output: 'created',
      isError: false,
      metadata: { status: 201 },
    });
    expect(api.seen[0]).toMatchObject({ method: 'POST', url: '/shops/a%20b/orders?dryRun=no', body: '{"quantity":2}' });
    expect(api.seen[0]?.headers['content-type']).toBe('application/json');
    // The DTO is the Toolkit's: a quantity of 0 never leaves the process.
    const refused = await toolkit.execute('create_order', { customer: 'a', quantity: 0, dryRun: 'no' });
    expect(refused.isError).toBe(true);
    expect(api.seen).toHaveLength(1);
  });

  it('names a missing environment variable, never a value, and sends nothing', async () => {
    const api = await serve((_req, res) => res.end('ok'));
    const tool = httpTool({
      name: 't',
      description: '',
      method: 'GET',
      url: `${api.url}/x`,
      headers: { 'x-api-key': '${TN_MISSING_KEY}' },
      env: {},
    });
    const result = await new Toolkit().register(tool).execute('t', {});
    expect(result.isError).toBe(true);
    expect(result.output).toContain('the header x-api-key needs the environment variable TN_MISSING_KEY, which is not set');
    expect(api.seen).toHaveLength(0);
  });

  it('keeps credentials on their origin: a redirect elsewhere drops Authorization and every ${ENV} header', async () => {
    const elsewhere = await serve((_req, res) => res.end('landed'));
    const api = await serve((req, res) => {
      if (req.url === '/same') res.writeHead(302, { location: '/final' }).end();
      else if (req.url === '/away') res.writeHead(307, { location: `${elsewhere.url}/landing` }).end();
      else res.end('final');
    });
    const headers = { Authorization: 'Bearer ${TN_TEST_TOKEN}', 'x-api-key': '${TN_TEST_TOKEN}', accept: 'text/plain' };
    const same = httpTool({ name: 's', description: '', method: 'GET', url: `${api.url}/same`, headers, env });
    expect((await new Toolkit().register(same).execute('s', {})).output).toBe('final');
    expect(api.seen[1]?.headers.authorization).toBe('Bearer tok-123');
    const away = httpTool({ name: 'a', description: '', method: 'GET', url: `${api.url}/away`, headers, env });
    expect((await new Toolkit().register(away).execute('a', {})).output).toBe('landed');
    expect(elsewhere.seen[0]?.headers.authorization).toBeUndefined();
    expect(elsewhere.seen[0]?.headers['x-api-key']).toBeUndefined();
    expect(elsewhere.seen[0]?.headers.accept).toBe('text/plain');
  });

  it('bounds the response, follows at most five redirects, and times out', async () => {
    const api = await serve((req, res) => {
      if (req.url === '/big') res.end('x'.repeat(5000));
      else if (req.url?.startsWith('/loop')) res.writeHead(302, { location: `/loop${String(Number(req.url.slice(5) || '0') + 1)}` }).end();
      else if (req.url === '/slow') setTimeout(() => res.end('late'), 2000);
      else res.end('ok');
    });
    const tool = (name: string, path: string, over: object = {}) =>
      httpTool({ name, description: '', method: 'GET', url: `${api.url}${path}`, ...over });
    const toolkit = new Toolkit().register(
      tool('big', '/big', { maxResponseBytes: 1000 }),
      tool('loop', '/loop'),
      tool('slow', '/slow', { timeoutMs: 200 }),
    );
    expect((await toolkit.execute('big', {})).output).toBe(`GET ${api.url}: the response is larger than maxResponseBytes (1000 bytes)`);
    expect((await toolkit.execute('loop', {})).output).toBe(`GET ${api.url}: more than 5 redirects`);
    expect((await toolkit.execute('slow', {})).output).toBe(`GET ${api.url}: no answer within 200 ms`);
  });

  it('asks before a call that changes something when told to, and sends it once, after the approval', async () => {
    const api = await serve((_req, res) => res.end('deleted'));
    const tool = httpTool({
      name: 'delete_user',
      description: '',
      method: 'DELETE',
      url: `${api.url}/users/{id}`,
      approval: { prompt: 'Delete the user?' },
      inputSchema: { type: 'object', properties: { id: { type: 'string' } } },
    });
    const toolkit = new Toolkit().register(tool);
    const coordinator = new ResumeCoordinator({ toolkit, store: new MemoryStore() });
    const asked = await coordinator.execute('delete_user', { id: 'u1' });
    expect(pendingOf(asked)).toMatchObject({ kind: 'approval', prompt: 'Delete the user?' });
    expect(api.seen).toHaveLength(0);
    const done = await coordinator.resolve({ id: pendingOf(asked)!.id, ok: true });
    expect(done).toEqual({ output: 'deleted', isError: false, metadata: { status: 200 } });
    expect(api.seen.map((s) => `${s.method} ${s.url}`)).toEqual(['DELETE /users/u1']);
  });
});

describe('path parameters stay inside their segment (issue 45)', () => {
  const tenantFiles = (base: string) =>
    httpTool({
      name: 'read_file',
      description: 'Reads a tenant file',
      method: 'GET',
      url: `${base}/api/tenants/{tenant}/files/{file}`,
      inputSchema: { type: 'object', properties: { tenant: { type: 'string' }, file: { type: 'string' } } },
    });
  const DOTS = ['..', '.', '%2e%2e', '%2E.', '.%2e', '%2e', '%252e%252e'];

  it('refuses a dot segment, raw or percent-encoded: an error result, and the request is never sent', async () => {
    const api = await serve((_req, res) => res.writeHead(200).end('served'));
    const toolkit = new Toolkit().register(tenantFiles(api.url));
    for (const tenant of DOTS) {
      const result = await toolkit.execute('read_file', { tenant, file: 'payroll' });
      expect(result.isError).toBe(true);
      expect(result.output).toContain('the path parameter tenant may not be "." or ".."');
    }
    expect(api.seen).toEqual([]);
  });

  it('percent-encodes `/`, `?`, `#` and `%` so a value stays one segment', async () => {
    const api = await serve((_req, res) => res.writeHead(200).end('served'));
    const toolkit = new Toolkit().register(tenantFiles(api.url));
    expect((await toolkit.execute('read_file', { tenant: '../../admin', file: 'a/b?c#d%2e' })).output).toBe('served');
    expect((await toolkit.execute('read_file', { tenant: 'acme', file: '..a' })).output).toBe('served');
    expect(api.seen.map((s) => s.url)).toEqual(['/api/tenants/..%2F..%2Fadmin/files/a%2Fb%3Fc%23d%252e', '/api/tenants/acme/files/..a']);
  });
});
