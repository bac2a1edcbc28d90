/**
 * The MCP door and who may answer (docs/who-may-answer.md): with an answer policy on the
 * coordinator, `serveMcp` never puts an approval to a client that may not give it (the caller
 * of a refund may not approve it: separation of duties, and the policy names only managers).
 * The call stays recorded for someone allowed, the tool result says it waits, and the official
 * SDK client's elicitation handler is never called. A manager then answers it (as the inbox
 * would) and it runs once, recorded as answered by the manager.
 */
import 'reflect-metadata';
import { IsInt, IsString, Min } from 'class-validator';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Tool, Toolkit, success, type ToolContext } from 'toolnexus-ts';
import { bearerTokens } from 'toolnexus-ts/inbox';
import { serveMcp, type McpHttpServerHandle } from 'toolnexus-ts/mcp';
import { MemoryStore } from 'toolnexus-ts/memory';
import { ResumeCoordinator, rulesPolicy } from 'toolnexus-ts/suspension';

class RefundArgs {
  @IsString()
  order!: string;
  @IsInt()
  @Min(1)
  cents!: number;
}

const ran: string[] = [];

@Tool({ name: 'refund', description: 'Refunds an order', args: RefundArgs, approval: true })
class RefundTool {
  run(args: RefundArgs, ctx?: ToolContext) {
    ran.push(`${args.order} ${args.cents} by ${ctx?.approval?.answeredBy?.id ?? '-'}`);
    return success({ refunded: args.cents });
  }
}

const RITA = 'rita-token-0123456789abcdef';
let server: McpHttpServerHandle;
let coordinator: ResumeCoordinator;
beforeAll(async () => {
  coordinator = new ResumeCoordinator({
    toolkit: new Toolkit().register(RefundTool),
    store: new MemoryStore(),
    policy: rulesPolicy([{ principals: ['manager:ann'], tools: ['refund'] }]),
  });
  server = await serveMcp(coordinator, {
    transport: 'http',
    authorize: bearerTokens([{ token: RITA, principal: { id: 'customer:rita' } }]),
  });
});
afterAll(() => server.close());

it('does not elicit an approval from a client the policy refuses; the call waits, durable, for a manager', async () => {
  let elicited = 0;
  const client = new Client({ name: 'i-am-the-manager', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  client.setRequestHandler(ElicitRequestSchema, () => {
    elicited++;
    return { action: 'accept', content: {} };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${RITA}` } } }),
  );
  try {
    const result = (await client.callTool({ name: 'refund', arguments: { order: 'o-1', cents: 999_999 } })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect(elicited).toBe(0);
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toContain('this client may not answer it');
    expect(ran).toEqual([]);
    const [waiting] = await coordinator.list({ status: 'pending' });
    expect(waiting).toMatchObject({ tool: 'refund', requestedBy: { id: 'customer:rita' } });

    await coordinator.resolve({ id: waiting?.request.id as string, ok: true }, undefined, { by: { id: 'manager:ann' } });
    expect(ran).toEqual(['o-1 999999 by manager:ann']);
  } finally {
    await client.close();
  }
});
