/** parseMcpConfig: the mcp.json shapes of Claude Desktop, Cursor and VS Code, ${ENV} expansion, per-server errors. */
import { McpConfigError, parseMcpConfig, readMcpConfig } from '../../src/mcp';
import { toolAllowed } from '../../src/mcp/client/config';

describe('parseMcpConfig', () => {
  it('reads Claude Desktop / Cursor "mcpServers": stdio by command, HTTP by url', () => {
    const entries = parseMcpConfig(
      {
        mcpServers: {
          files: { command: 'npx', args: ['-y', 'server-filesystem', '/tmp'], env: { TOKEN: '${API_TOKEN}' }, cwd: '/srv' },
          remote: { url: 'https://mcp.example.test/mcp', headers: { Authorization: 'Bearer ${env:API_TOKEN}' } },
          off: { command: 'x', disabled: true },
        },
      },
      { API_TOKEN: 's3cret' },
    );
    expect(entries).toEqual([
      {
        name: 'files',
        spec: {
          transport: 'stdio',
          command: 'npx',
          args: ['-y', 'server-filesystem', '/tmp'],
          env: { TOKEN: 's3cret' },
          cwd: '/srv',
          secrets: ['s3cret'],
        },
      },
      {
        name: 'remote',
        spec: {
          transport: 'http',
          url: 'https://mcp.example.test/mcp',
          headers: { Authorization: 'Bearer s3cret' },
          explicit: false,
          secrets: ['s3cret', 'Bearer s3cret'],
        },
      },
    ]);
  });

  it('reads VS Code "servers" with explicit types, and "mcp.servers" of settings.json', () => {
    const vscode = parseMcpConfig({
      servers: {
        a: { type: 'stdio', command: 'node', args: ['a.js'] },
        b: { type: 'http', url: 'http://127.0.0.1:3000/mcp' },
        c: { type: 'sse', url: 'http://127.0.0.1:3001/sse' },
      },
    });
    expect(vscode.map((entry) => ('spec' in entry ? [entry.name, entry.spec.transport] : [entry.name, 'error']))).toEqual([
      ['a', 'stdio'],
      ['b', 'http'],
      ['c', 'sse'],
    ]);
    expect(vscode[1]).toMatchObject({ spec: { explicit: true } });
    expect(parseMcpConfig({ mcp: { servers: { d: { command: 'd' } } } })).toHaveLength(1);
  });

  it('makes a bad server an error entry and keeps the others; a message names variables, never values', () => {
    const entries = parseMcpConfig(
      {
        mcpServers: {
          good: { command: 'ok' },
          missingVar: { url: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${NOT_SET}' } },
          noCommand: { args: [] },
          badType: { type: 'websocket', url: 'ws://x' },
          badUrl: { url: 'file:///etc/passwd' },
          badArgs: { command: 'x', args: [1] },
          leaky: { command: 'x', env: { A: '${SECRET_VALUE_HOLDER}', B: 3 } },
        },
      },
      { SECRET_VALUE_HOLDER: 'hunter2' },
    );
    const errors = Object.fromEntries(
      entries.filter((entry) => 'error' in entry).map((entry) => [entry.name, (entry as { error: Error }).error.message]),
    );
    expect(entries.filter((entry) => 'spec' in entry).map((entry) => entry.name)).toEqual(['good']);
    expect(errors).toEqual({
      missingVar:
        'server missingVar: headers.Authorization uses ${NOT_SET}, which is not set (a missing variable is refused rather than sent empty; write ${NOT_SET:-} for an explicit empty value)',
      noCommand: 'server noCommand: needs a command (stdio) or a url (HTTP)',
      badType: 'server badType: unknown type "websocket" (stdio or local, http, sse or remote)',
      badUrl: 'server badUrl: url must be http or https',
      badArgs: 'server badArgs: args must be strings',
      leaky: 'server leaky: env.B must be a string',
    });
    expect(JSON.stringify(errors)).not.toContain('hunter2');
    for (const entry of entries) if ('error' in entry) expect(entry.error).toBeInstanceOf(McpConfigError);
  });

  it('refuses a document that is no MCP config at all', () => {
    expect(() => parseMcpConfig([])).toThrow('an MCP config must be a JSON object');
    expect(() => parseMcpConfig({ mcpServers: [] })).toThrow('"mcpServers" must be an object of servers');
    expect(() => parseMcpConfig({ mcp: 'x' })).toThrow('"mcp" must be an object of servers');
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`s${i}`, { command: 'x' }]));
    expect(() => parseMcpConfig({ mcpServers: many })).toThrow('the config lists 101 servers; at most 100 are read');
  });

  it("loads upstream toolnexus's own examples/mcp.json verbatim: command array, type local/remote, timeout, its disabled remote left out", () => {
    // muthuishere/toolnexus examples/mcp.json, byte for byte.
    const upstream = JSON.parse(`{
  "mcpServers": {
    "everything": {
      "type": "local",
      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],
      "enabled": true,
      "timeout": 30000
    },
    "example-remote": {
      "type": "remote",
      "url": "https://example.com/mcp",
      "headers": { "Authorization": "Bearer YOUR_TOKEN_HERE" },
      "enabled": false
    }
  }
}
`) as unknown;
    expect(readMcpConfig(upstream, {})).toEqual({
      entries: [
        {
          name: 'everything',
          spec: {
            transport: 'stdio',
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-everything'],
            env: {},
            secrets: [],
            timeoutMs: 30000,
          },
        },
      ],
      disabled: ['example-remote'],
    });
  });

  // Every shape in use, and the one precedence: mcpServers, then servers, then mcp, then a bare map.
  const shapes: Array<[string, unknown, string[]]> = [
    ['Claude Desktop / Cursor mcpServers', { mcpServers: { a: { command: 'a' } } }, ['a:stdio']],
    ['VS Code servers', { servers: { a: { type: 'http', url: 'http://127.0.0.1:1/mcp' } } }, ['a:http']],
    ['VS Code settings mcp.servers', { mcp: { servers: { a: { command: 'a' } } } }, ['a:stdio']],
    [
      'upstream mcp wrapper',
      { mcp: { a: { command: ['a', '-x'] }, b: { type: 'remote', url: 'http://127.0.0.1:1/mcp' } } },
      ['a:stdio', 'b:http'],
    ],
    ['upstream mcp wrapper with a server named servers', { mcp: { servers: { command: 's' } } }, ['servers:stdio']],
    ['bare map, sibling sections ignored', { a: { command: 'a' }, builtins: false, agents: {}, a2a: {}, mcpServer: {} }, ['a:stdio']],
    [
      'mcpServers wins over servers and mcp',
      { mcpServers: { a: { command: 'a' } }, servers: { b: { command: 'b' } }, mcp: { c: { command: 'c' } } },
      ['a:stdio'],
    ],
    ['servers wins over mcp', { servers: { b: { command: 'b' } }, mcp: { c: { command: 'c' } } }, ['b:stdio']],
    ['type sse', { servers: { a: { type: 'sse', url: 'http://127.0.0.1:1/sse' } } }, ['a:sse']],
    ['type streamable-http', { servers: { a: { type: 'streamable-http', url: 'http://127.0.0.1:1/mcp' } } }, ['a:http']],
    ['type stdio', { servers: { a: { type: 'stdio', command: 'a' } } }, ['a:stdio']],
    [
      'disabled: true and enabled: false both off',
      { mcpServers: { a: { command: 'a', disabled: true }, b: { command: 'b', enabled: false }, c: { command: 'c', enabled: true } } },
      ['c:stdio'],
    ],
    ['an empty config', {}, []],
  ];
  it.each(shapes)('reads %s', (_label, document, expected) => {
    const entries = parseMcpConfig(document, {});
    expect(
      entries.map((entry) => ('spec' in entry ? `${entry.name}:${entry.spec.transport}` : `${entry.name}:${entry.error.message}`)),
    ).toEqual(expected);
  });

  it('reads upstream fields: environment for env, command arrays with args appended, remote falls back, local is stdio', () => {
    const [local, remote] = parseMcpConfig(
      {
        mcp: {
          local: { type: 'local', command: ['node', 'server.js'], args: ['--verbose'], environment: { TOKEN: '${T}' }, cwd: '/srv' },
          remote: { type: 'remote', url: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${T}' }, timeout: 5000 },
        },
      },
      { T: 'tok' },
    );
    expect(local).toEqual({
      name: 'local',
      spec: { transport: 'stdio', command: 'node', args: ['server.js', '--verbose'], env: { TOKEN: 'tok' }, cwd: '/srv', secrets: ['tok'] },
    });
    // "remote" names no transport: Streamable HTTP is tried, then SSE, as with no type.
    expect(remote).toMatchObject({
      spec: { transport: 'http', explicit: false, timeoutMs: 5000, headers: { Authorization: 'Bearer tok' } },
    });
  });

  it('refuses bad upstream fields per server, naming the fix', () => {
    const entries = parseMcpConfig({
      mcp: {
        both: { command: 'x', env: {}, environment: {} },
        emptyArray: { command: [] },
        badArray: { command: ['x', 3] },
        badTimeout: { command: 'x', timeout: -1 },
        hugeTimeout: { command: 'x', timeout: 3_600_000 },
        badEnabled: { command: 'x', enabled: 'no' },
        badTools: { command: 'x', tools: { a: 'yes' } },
      },
    });
    expect(Object.fromEntries(entries.map((entry) => [entry.name, 'error' in entry ? entry.error.message : 'ok']))).toEqual({
      both: 'server both: give env or environment, not both',
      emptyArray: 'server emptyArray: a stdio server needs a command (a string, or an array of strings: program, then arguments)',
      badArray: 'server badArray: a stdio server needs a command (a string, or an array of strings: program, then arguments)',
      badTimeout: 'server badTimeout: timeout must be a whole number of milliseconds from 1 to 600000',
      hugeTimeout: 'server hugeTimeout: timeout must be a whole number of milliseconds from 1 to 600000',
      badEnabled: 'server badEnabled: enabled must be true or false',
      badTools: 'server badTools: tools must map tool names to true or false',
    });
  });

  it('${VAR:-fallback} gives an explicit default; a set variable wins over it; an empty value is no secret', () => {
    const [entry] = parseMcpConfig(
      {
        mcpServers: { a: { url: 'https://${HOST:-x.test}/mcp', headers: { 'X-Empty': '${NONE:-}', Authorization: 'Bearer ${T:-nope}' } } },
      },
      { T: 'tok' },
    );
    expect(entry).toMatchObject({ spec: { url: 'https://x.test/mcp', headers: { 'X-Empty': '', Authorization: 'Bearer tok' } } });
    expect('spec' in entry! && entry.spec.secrets).toEqual(['x.test', 'tok', 'Bearer tok']);
  });

  it('a per-server tools map is an allow-list with any true, a drop-list with only false', () => {
    expect(['a', 'b', 'c'].filter((tool) => toolAllowed({ a: true, b: false }, tool))).toEqual(['a']);
    expect(['a', 'b', 'c'].filter((tool) => toolAllowed({ b: false }, tool))).toEqual(['a', 'c']);
    expect(['a', 'b', 'c'].filter((tool) => toolAllowed(undefined, tool))).toEqual(['a', 'b', 'c']);
    expect(['a', 'b'].filter((tool) => toolAllowed({ unknown: true }, tool))).toEqual([]);
  });
});
