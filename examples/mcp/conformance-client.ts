/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance client`)
 * tests in CI: an `McpToolSource` that connects to the scenario's server, registers its tools
 * in a Toolkit and calls the one the scenario expects. The suite appends the server's URL as
 * the last argument and names the scenario in MCP_CONFORMANCE_SCENARIO. Elicitations become
 * `pending` requests; this client's "user" accepts each one as offered, so the source fills in
 * the schema's defaults. Run by scripts/mcp-conformance.js; see docs/mcp.md.
 */
import 'reflect-metadata';
import { Toolkit } from 'toolnexus-ts';
import { McpToolSource } from 'toolnexus-ts/mcp';

/** The calls each scenario expects, by the tool's name on the server. */
const CALLS: Record<string, Array<{ tool: string; args: Record<string, unknown> }>> = {
  initialize: [],
  tools_call: [{ tool: 'add_numbers', args: { a: 2, b: 3 } }],
  'elicitation-sep1034-client-defaults': [{ tool: 'test_client_elicitation_defaults', args: {} }],
  'sse-retry': [{ tool: 'test_reconnection', args: {} }],
};

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1] as string;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';
  const calls = CALLS[scenario];
  if (!calls) throw new Error(`no calls known for scenario ${scenario}`);
  const source = new McpToolSource({
    config: { mcpServers: { conformance: { type: 'http', url } } },
    waitFor: (request) => ({ id: request.id, ok: true }),
  });
  try {
    const report = await source.connect();
    const failed = report.failed[0];
    if (failed) throw failed.error;
    const toolkit = new Toolkit();
    source.register(toolkit);
    for (const call of calls) {
      const result = await toolkit.execute(`conformance_${call.tool}`, call.args);
      console.log(`${call.tool}: ${result.isError ? 'error' : 'ok'}: ${result.output}`);
    }
  } finally {
    await source.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
