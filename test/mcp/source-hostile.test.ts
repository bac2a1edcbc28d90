/**
 * McpToolSource against a hostile MCP server on 127.0.0.1 (test/fixtures/mcp-hostile-server.ts):
 * configured secrets never come back in a report, an error or a result, even when the server
 * quotes them; endless `tools/list` pages end in a clear error within the page and time limits;
 * tool names never collide, and a server's tools are taken (and registered) all or nothing.
 */
import { inspect } from 'node:util';
import { Toolkit, defineTool } from '../../src';
import { McpToolSource } from '../../src/mcp';
import { mcpToolNames } from '../../src/mcp/client/tools';
import { startHostileServer, type HostileServer } from '../fixtures/mcp-hostile-server';

const TOKEN = 'tok-SECRET-0123456789abcdef';
const KEY = 'literal-api-key-9876543210';
const BASIC = Buffer.from('svc:basic-password-42').toString('base64');

function headersConfig(url: string) {
  return {
    mcpServers: {
      h: { type: 'http', url, headers: { Authorization: 'Bearer ${HOSTILE_TOKEN}', 'X-Api-Key': KEY, 'X-Basic': `Basic ${BASIC}` } },
    },
  };
}

function expectNoSecret(value: unknown): void {
  const shown = typeof value === 'string' ? value : inspect(value, { depth: 20 }) + JSON.stringify(value);
  for (const secret of [TOKEN, KEY, BASIC, 'basic-password-42']) expect(shown).not.toContain(secret);
}

describe('McpToolSource redacts every configured secret', () => {
  it.each([401, 403] as const)('in the connect report when the server answers %i with a body quoting the headers', async (status) => {
    const server = await startHostileServer({ refuse: true, refuseStatus: status });
    const source = new McpToolSource({ config: headersConfig(server.url), env: { HOSTILE_TOKEN: TOKEN } });
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([]);
      const error = report.failed[0]?.error as Error & { cause?: Error };
      // The v2 SDK says the status, not the body; whatever it quotes is redacted.
      expect(error.message).toMatch(new RegExp(`^server h: .*${status}`, 's'));
      expectNoSecret(error.message);
      expectNoSecret(error.stack);
      expectNoSecret(error.cause?.message);
      expectNoSecret(error.cause?.stack);
      expectNoSecret(report);
    } finally {
      await source.close();
      await server.close();
    }
  });

  it('in tool results and call failures when the server echoes the headers back', async () => {
    const server = await startHostileServer();
    const source = new McpToolSource({ config: headersConfig(server.url), env: { HOSTILE_TOKEN: TOKEN } });
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([{ server: 'h', tools: ['h_echo_headers', 'h_forbidden'] }]);
      const toolkit = new Toolkit();
      source.register(toolkit);
      const echoed = await toolkit.execute('h_echo_headers', {});
      expect(echoed.output).toContain('"authorization":"***"');
      expect(echoed.output).toContain('"x-api-key":"***"');
      expectNoSecret(echoed);
      const forbidden = await toolkit.execute('h_forbidden', {});
      expect(forbidden.isError).toBe(true);
      expect(forbidden.output).toMatch(/403/);
      expect(forbidden.output).toContain('***');
      expectNoSecret(forbidden);
    } finally {
      await source.close();
      await server.close();
    }
  });
});

describe('McpToolSource bounds tools/list', () => {
  let warnings: string[];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  beforeEach(() => {
    warnings = [];
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  it('fails a server giving endless empty pages after maxListPages, with a clear error and nothing kept', async () => {
    const server = await startHostileServer({ endless: true });
    const source = new McpToolSource({ config: { mcpServers: { endless: { type: 'http', url: server.url } } }, maxListPages: 50 });
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([]);
      expect(report.failed[0]?.error.message).toBe('server endless: tools/list gave 50 pages and still a next cursor (maxListPages 50)');
      expect(server.pages()).toBe(50);
      expect(source.toolDefinitions()).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
    } finally {
      await source.close();
      await server.close();
    }
  });

  it('fails it when connecting and listing take longer than connectTimeoutMs, all pages together', async () => {
    const server = await startHostileServer({ endless: true });
    const source = new McpToolSource({
      config: { mcpServers: { endless: { type: 'http', url: server.url } } },
      maxListPages: 1_000_000,
      connectTimeoutMs: 400,
    });
    try {
      const report = await source.connect();
      expect(report.failed[0]?.error.message).toBe('server endless: connecting and listing its tools took over 400 ms');
      const pagesAtFailure = server.pages();
      // Nothing more is asked (the one request in flight when time ran out may still arrive).
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(server.pages()).toBeLessThanOrEqual(pagesAtFailure + 1);
      expect(warnings.filter((warning) => warning.includes('MaxListeners'))).toEqual([]);
    } finally {
      await source.close();
      await server.close();
    }
  });

  it('fails a server that gives a cursor it gave before', async () => {
    const server = await startHostileServer({ repeatCursor: true });
    const source = new McpToolSource({ config: { mcpServers: { loop: { type: 'http', url: server.url } } } });
    try {
      const report = await source.connect();
      expect(report.failed[0]?.error.message).toBe('server loop: tools/list gave a cursor it gave before (page 2)');
      expect(server.pages()).toBe(2);
    } finally {
      await source.close();
      await server.close();
    }
  });
});

describe('McpToolSource names never collide', () => {
  let servers: HostileServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
  });

  it('connects colliding servers and tools under distinct names, and calls the right one', async () => {
    const [h, gh, ghEnterprise] = await Promise.all([
      startHostileServer({ tools: ['do.it', 'do_it'] }),
      startHostileServer({ tools: ['enterprise_merge'] }),
      startHostileServer({ tools: ['merge'] }),
    ]);
    servers = [h, gh, ghEnterprise];
    const source = new McpToolSource({
      config: { mcpServers: { h: { url: h.url }, gh: { url: gh.url }, gh_enterprise: { url: ghEnterprise.url } } },
    });
    try {
      const report = await source.connect();
      expect(report.failed).toEqual([]);
      const names = report.connected.flatMap((server) => server.tools);
      expect(names).toHaveLength(4);
      expect(new Set(names).size).toBe(4);
      // Every pair whose plain name collides is suffixed (test/mcp/tool-names.test.ts).
      expect(names).toEqual(
        expect.arrayContaining(
          mcpToolNames([
            { server: 'h', tool: 'do.it' },
            { server: 'h', tool: 'do_it' },
            { server: 'gh', tool: 'enterprise_merge' },
            { server: 'gh_enterprise', tool: 'merge' },
          ]),
        ),
      );
      expect(names.filter((name) => /_[0-9a-f]{8}$/.test(name))).toHaveLength(4);
      const toolkit = new Toolkit();
      expect(source.register(toolkit).sort()).toEqual([...names].sort());
      expect(toolkit.tools()).toHaveLength(4);
    } finally {
      await source.close();
    }
  });

  it('registers all or nothing: a name the toolkit already has registers none, and says which', async () => {
    const h = await startHostileServer({ tools: ['one', 'two'] });
    servers = [h];
    const source = new McpToolSource({ config: { mcpServers: { h: { url: h.url } } } });
    try {
      await source.connect();
      const toolkit = new Toolkit().register(
        defineTool({ name: 'h_two', description: 'mine', inputSchema: { type: 'object' }, run: () => 'mine' }),
      );
      expect(() => source.register(toolkit)).toThrow('the toolkit already has tools named h_two; no MCP tool was registered');
      expect(toolkit.tools().map((tool) => tool.name)).toEqual(['h_two']);
    } finally {
      await source.close();
    }
  });

  it('fails a server that lists one tool twice, taking none of its tools', async () => {
    const h = await startHostileServer({ tools: ['same', 'other', 'same'] });
    servers = [h];
    const source = new McpToolSource({ config: { mcpServers: { h: { url: h.url } } } });
    try {
      const report = await source.connect();
      expect(report.failed[0]?.error.message).toBe('server h: tools/list gave the tool same twice');
      expect(source.toolDefinitions()).toEqual([]);
    } finally {
      await source.close();
    }
  });
});
