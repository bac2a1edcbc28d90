/** parseMcpConfig: the mcp.json shapes of Claude Desktop, Cursor and VS Code, ${ENV} expansion, per-server errors. */
import { McpConfigError, parseMcpConfig } from '../../src/mcp';

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
      missingVar: 'server missingVar: headers.Authorization uses ${NOT_SET}, which is not set',
      noCommand: 'server noCommand: needs a command (stdio) or a url (HTTP)',
      badType: 'server badType: unknown type "websocket" (stdio, http or sse)',
      badUrl: 'server badUrl: url must be http or https',
      badArgs: 'server badArgs: args must be strings',
      leaky: 'server leaky: env.B must be a string',
    });
    expect(JSON.stringify(errors)).not.toContain('hunter2');
    for (const entry of entries) if ('error' in entry) expect(entry.error).toBeInstanceOf(McpConfigError);
  });

  it('refuses a document that is no MCP config at all', () => {
    expect(() => parseMcpConfig([])).toThrow('an MCP config must be a JSON object');
    expect(() => parseMcpConfig({ tools: {} })).toThrow('an MCP config needs "mcpServers" (Claude Desktop, Cursor) or "servers" (VS Code)');
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`s${i}`, { command: 'x' }]));
    expect(() => parseMcpConfig({ mcpServers: many })).toThrow('the config lists 101 servers; at most 100 are read');
  });
});
