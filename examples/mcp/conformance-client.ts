/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance client`)
 * tests in CI: an `McpToolSource` that connects to the scenario's server, registers its tools
 * in a Toolkit and calls the one the scenario expects. The suite appends the server's URL as
 * the last argument and names the scenario in MCP_CONFORMANCE_SCENARIO. Elicitations become
 * `pending` requests; this client's "user" accepts each one as offered, so the source fills in
 * the schema's defaults. In the `auth/*` scenarios the server wants OAuth: `connect()` reports
 * the login it needs, and this client's "user" follows the authorization URL itself (the
 * suite's authorization server consents at once and redirects with a code), then finishes the
 * login (with DPoP-bound tokens in `auth/dpop*`). The machine-to-machine scenarios
 * (client_credentials with a secret or a private key, enterprise cross-app access, workload
 * identity) need nobody: the grant the context's credentials call for is chosen, and
 * `connect()` connects. Run by scripts/mcp-conformance.js; see docs/mcp.md.
 */
import 'reflect-metadata';
import { pendingOf, Toolkit } from 'toolnexus-ts';
import { McpLoginRequiredError, McpToolSource, MemoryOAuthStore, type McpOAuthOptions } from 'toolnexus-ts/mcp';
import { loadSkills } from 'toolnexus-ts/skills';

/** The calls each scenario expects, by the tool's name on the server. */
const CALLS: Record<string, Array<{ tool: string; args: Record<string, unknown> }>> = {
  initialize: [],
  tools_call: [{ tool: 'add_numbers', args: { a: 2, b: 3 } }],
  'elicitation-sep1034-client-defaults': [{ tool: 'test_client_elicitation_defaults', args: {} }],
  'sse-retry': [{ tool: 'test_reconnection', args: {} }],
  // 2026-07-28: connecting (server/discover, the per-request _meta) and listing are what is checked.
  'request-metadata': [],
  'json-schema-ref-no-deref': [],
  'http-standard-headers': [],
  // SEP-2243: the calls the scenario names in its context (Mcp-Param-* headers from x-mcp-header
  // arguments), and every tool the client keeps of a listing with malformed x-mcp-header ones.
  'http-custom-headers': [],
  // SEP-2640: the skills are listed (and nothing read); in the verify-* ones, the skill is loaded too.
  'sep-2640-client-no-prefetch': [],
  'sep-2640-client-verify-digest': [],
  'sep-2640-client-verify-size': [],
  'sep-2640-client-verify-frontmatter': [],
  'http-invalid-tool-headers': [],
  'json-schema-2020-12-preservation': [],
  // MRTR (SEP-2322): each tool answers input_required; the "user" accepts, and the retry echoes the state.
  'sep-2322-client-request-state': [
    { tool: 'test_mrtr_echo_state', args: {} },
    { tool: 'test_mrtr_unrelated', args: {} },
    { tool: 'test_mrtr_no_state', args: {} },
    { tool: 'test_mrtr_no_result_type', args: {} },
  ],
};

/** The "user": opens the authorization URL, consents, and hands back where the browser was sent. */
async function consent(url: string): Promise<string> {
  const answer = await fetch(url, { redirect: 'manual' });
  const back = answer.headers.get('location');
  if (!back) throw new Error(`the authorization server answered ${answer.status} without a redirect`);
  return back;
}

/** What the suite hands a scenario's client: credentials, keys, the IdP's ID token. */
interface Context {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  idp_token_endpoint?: string;
  /** auth/wif-jwt-bearer: the workload's identity token, audience the authorization server. */
  valid_jwt?: string;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/** The grant a scenario calls for: cross-app access, client credentials, or a person's login. */
function oauthFor(scenario: string, context: Context): McpOAuthOptions {
  const store = new MemoryOAuthStore();
  const { client_id: clientId, client_secret: clientSecret } = context;
  // Named auth/enterprise-managed-authorization from conformance 0.2.0 on.
  if (scenario === 'auth/cross-app-access-complete-flow' || scenario === 'auth/enterprise-managed-authorization') {
    const idToken = context.idp_id_token;
    if (!clientId || !clientSecret || !idToken || !context.idp_token_endpoint)
      throw new Error(`${scenario}: the context lacks the IdP's details`);
    return {
      grant: 'cross_app',
      store,
      clientId,
      clientSecret,
      idToken: () => idToken,
      idpTokenEndpoint: context.idp_token_endpoint,
      ...(context.idp_client_id !== undefined ? { idpClientId: context.idp_client_id } : {}),
    };
  }
  // Workload identity federation: the workload's own token, given as a JWT bearer grant.
  if (scenario === 'auth/wif-jwt-bearer') {
    const workloadToken = context.valid_jwt;
    if (!clientId || !workloadToken) throw new Error(`${scenario}: the context lacks the workload's client and token`);
    return { grant: 'jwt_bearer', store, clientId, assertion: () => workloadToken };
  }
  if (scenario.startsWith('auth/client-credentials-')) {
    if (!clientId) throw new Error(`${scenario}: the context has no client_id`);
    if (context.private_key_pem !== undefined)
      return {
        grant: 'client_credentials',
        store,
        clientId,
        privateKey: context.private_key_pem,
        algorithm: context.signing_algorithm ?? 'ES256',
      };
    return { grant: 'client_credentials', store, clientId, ...(clientSecret !== undefined ? { clientSecret } : {}) };
  }
  return {
    store,
    redirectUrl: 'http://127.0.0.1:1/callback',
    // Used as client_id where the authorization server supports Client ID Metadata Documents.
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
    // Pre-registered clients (auth/pre-registration) get their credentials from the suite.
    ...(clientId !== undefined ? { clientId } : {}),
    ...(clientSecret !== undefined ? { clientSecret } : {}),
    // DPoP-bound tokens (RFC 9449) in the auth/dpop scenarios: the same login, each token bound to the client's key.
    ...(scenario.startsWith('auth/dpop') ? { dpop: true } : {}),
  };
}

/** A value of each required property's type: what calling a tool the scenario only wants called takes. */
function sampleArgs(schema: { properties?: Record<string, { type?: unknown }>; required?: string[] }): Record<string, unknown> {
  const samples: Record<string, unknown> = { string: 'x', integer: 1, number: 1, boolean: true, object: {}, array: [] };
  return Object.fromEntries((schema.required ?? []).map((key) => [key, samples[String(schema.properties?.[key]?.type)] ?? 'x']));
}

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1] as string;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? 'initialize';
  const calls = scenario.startsWith('auth/') ? [] : CALLS[scenario];
  if (!calls) throw new Error(`no calls known for scenario ${scenario}`);
  const source = new McpToolSource({
    config: { mcpServers: { conformance: { type: 'http', url } } },
    waitFor: (request) => ({ id: request.id, ok: true, ...(scenario.startsWith('sep-2322') ? { data: { confirmed: true } } : {}) }),
    oauth: {
      ...oauthFor(scenario, JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Context),
      // The suite runs its authorization server on another port of localhost, unknown beforehand.
      allowedOrigins: (origin) => new URL(origin).hostname === 'localhost',
    },
  });
  try {
    const report = await source.connect();
    const failed = report.failed[0];
    if (failed) throw failed.error;
    for (const login of report.needsLogin) {
      // A server that keeps asking for a login it never accepts gets three tries.
      let url = login.url;
      for (let attempt = 1; ; attempt++) {
        try {
          const tools = await source.finishLogin(login.server, await consent(url));
          console.log(`logged in to ${login.server}: ${tools.length} tools`);
          break;
        } catch (error) {
          if (!(error instanceof McpLoginRequiredError) || attempt >= 3) throw error;
          url = error.url;
        }
      }
    }
    const toolkit = new Toolkit();
    source.register(toolkit);
    // In the auth scenarios, the first tool the server lists; a call it wants another login
    // for (a wider scope) suspends, and is asked again once the "user" has logged in.
    if (scenario.startsWith('auth/')) {
      const first = source.toolDefinitions()[0];
      if (first) {
        let result = await toolkit.execute(first.name, {});
        const login = pendingOf(result);
        if (login?.kind === 'authorization' && login.url) {
          await source.finishLogin('conformance', await consent(login.url));
          result = await toolkit.execute(first.name, {});
        }
        console.log(`${first.name}: ${result.isError ? 'error' : 'ok'}: ${result.output}`);
      }
    }
    const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Context;
    for (const call of context.toolCalls ?? []) calls.push({ tool: call.name, args: call.arguments });
    // SEP-2106: the schema as the client keeps it, echoed back for the scenario to compare with what it served.
    if (scenario === 'json-schema-2020-12-preservation') {
      const focal = source.toolDefinitions().find((tool) => tool.name === 'conformance_json_schema_2020_12_tool');
      if (focal) calls.push({ tool: 'json_schema_echo', args: { schema: focal.inputSchema } });
    }
    if (scenario === 'http-invalid-tool-headers')
      for (const tool of source.toolDefinitions())
        calls.push({
          tool: tool.name.replace(/^conformance_/, ''),
          args: sampleArgs(tool.inputSchema ?? {}),
        });
    if (scenario.startsWith('sep-2640-client-')) {
      const skills = loadSkills({ skills: await source.skills() });
      if (scenario.startsWith('sep-2640-client-verify-'))
        for (const skill of skills.skills) {
          const result = await new Toolkit().register(skills.tool).execute('skill', { name: skill.name });
          console.log(`skill ${skill.name}: ${result.isError ? 'error' : 'ok'}: ${result.output}`);
        }
    }
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
