/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance client`)
 * tests in CI: an `McpToolSource` that connects to the scenario's server, registers its tools
 * in a Toolkit and calls the one the scenario expects. The suite appends the server's URL as
 * the last argument and names the scenario in MCP_CONFORMANCE_SCENARIO. Elicitations become
 * `pending` requests; this client's "user" accepts each one as offered, so the source fills in
 * the schema's defaults. In the `auth/*` scenarios the server wants OAuth: `connect()` reports
 * the login it needs, and this client's "user" follows the authorization URL itself (the
 * suite's authorization server consents at once and redirects with a code), then finishes the
 * login. Run by scripts/mcp-conformance.js; see docs/mcp.md.
 */
import 'reflect-metadata';
import { Toolkit } from 'toolnexus-ts';
import { McpToolSource, MemoryOAuthStore } from 'toolnexus-ts/mcp';

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
  const calls = scenario.startsWith('auth/') ? [] : CALLS[scenario];
  if (!calls) throw new Error(`no calls known for scenario ${scenario}`);
  // Pre-registered clients (auth/pre-registration) get their credentials from the suite.
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as { client_id?: string; client_secret?: string };
  const source = new McpToolSource({
    config: { mcpServers: { conformance: { type: 'http', url } } },
    waitFor: (request) => ({ id: request.id, ok: true }),
    oauth: {
      store: new MemoryOAuthStore(),
      redirectUrl: 'http://127.0.0.1:1/callback',
      ...(context.client_id !== undefined ? { clientId: context.client_id } : {}),
      ...(context.client_secret !== undefined ? { clientSecret: context.client_secret } : {}),
    },
  });
  try {
    const report = await source.connect();
    const failed = report.failed[0];
    if (failed) throw failed.error;
    for (const login of report.needsLogin) {
      // The "user": open the authorization URL, consent, and hand back where the browser was sent.
      const consent = await fetch(login.url, { redirect: 'manual' });
      const back = consent.headers.get('location');
      if (!back) throw new Error(`the authorization server answered ${consent.status} without a redirect`);
      const tools = await source.finishLogin(login.server, back);
      console.log(`logged in to ${login.server}: ${tools.length} tools`);
    }
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
