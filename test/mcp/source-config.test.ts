/**
 * McpToolSource reading the config shapes of upstream toolnexus (docs/mcp.md, "Config"): its own
 * examples/mcp.json verbatim (a command array run through npx, which finds the everything server
 * installed here, and a disabled remote never dialled), a per-server tools map and timeout.
 */
import { Toolkit } from '../../src';
import { McpToolSource } from '../../src/mcp';

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

describe('McpToolSource with upstream toolnexus config shapes', () => {
  it("connects upstream's examples/mcp.json as written, and leaves its disabled remote alone", async () => {
    // muthuishere/toolnexus examples/mcp.json, byte for byte. Its remote has a placeholder token
    // and https://example.com/mcp: dialling it would fail here (no network), so a connected
    // report with no failure shows it was never tried.
    const source = new McpToolSource({
      config: JSON.parse(`{
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
}`) as unknown,
    });
    try {
      const report = await source.connect();
      expect(report.failed).toEqual([]);
      expect(report.disabled).toEqual(['example-remote']);
      expect(report.connected.map((entry) => entry.server)).toEqual(['everything']);
      const toolkit = new Toolkit();
      source.register(toolkit);
      await expect(toolkit.execute('everything_echo', { message: 'from upstream config' })).resolves.toMatchObject({
        isError: false,
        output: 'Echo: from upstream config',
      });
    } finally {
      await source.close();
    }
  });

  it('takes only the tools a server\'s "tools" map allows, by the server\'s own names', async () => {
    const source = new McpToolSource({
      config: {
        mcp: {
          allow: { command: [process.execPath, EVERYTHING, 'stdio'], tools: { echo: true, 'get-sum': true } },
          drop: { command: [process.execPath, EVERYTHING, 'stdio'], tools: { echo: false } },
        },
      },
    });
    try {
      const report = await source.connect();
      const tools = Object.fromEntries(report.connected.map((entry) => [entry.server, entry.tools]));
      expect(tools.allow?.sort()).toEqual(['allow_echo', 'allow_get-sum']);
      expect(tools.drop).not.toContain('drop_echo');
      expect(tools.drop?.length).toBeGreaterThan(3);
    } finally {
      await source.close();
    }
  });

  it("bounds connecting by the server's own timeout, reported for that server alone", async () => {
    // A server that never answers initialize: `node -e` reading stdin forever.
    const source = new McpToolSource({
      config: {
        mcpServers: {
          silent: { command: [process.execPath, '-e', 'process.stdin.resume()'], timeout: 300 },
          everything: { command: [process.execPath, EVERYTHING, 'stdio'] },
        },
      },
    });
    try {
      const report = await source.connect();
      expect(report.connected.map((entry) => entry.server)).toEqual(['everything']);
      expect(report.failed.map((entry) => [entry.server, entry.error.message])).toEqual([
        ['silent', expect.stringMatching(/^server silent: .*timed out/i)],
      ]);
    } finally {
      await source.close();
    }
  });
});
