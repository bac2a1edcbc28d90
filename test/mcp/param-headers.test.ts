/**
 * Header-mirrored parameters (SEP-2243, MCP 2026-07-28; docs/mcp.md, "Header-mirrored
 * parameters"): `@McpHeader` puts `x-mcp-header` in a DTO's schema, refusing what the SEP
 * forbids at registration, and serveMcp over Streamable HTTP on 127.0.0.1 checks each
 * `Mcp-Param-*` header against its argument before the call runs: the SDK's v2 Client (which
 * mirrors the headers itself) gets its result; raw requests with a header missing, disagreeing
 * or badly encoded get HTTP 400 and `-32020`, naming no value, and the tool never runs.
 */
import 'reflect-metadata';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsInt, IsNumber, IsOptional, IsString, ValidateNested } from 'class-validator';
import { DtoRuleError, Sensitive, Tool, Toolkit } from '../../src';
import { McpHeader, serveMcp, type McpHttpServerHandle } from '../../src/mcp';

const VERSION = '2026-07-28';
let runs = 0;

class Target {
  @IsString() @McpHeader('Cluster') cluster!: string;
}

class DeployArgs {
  @IsString() @McpHeader('Region') region!: string;
  @IsInt() @McpHeader('Priority') priority!: number;
  @IsOptional() @IsBoolean() @McpHeader('DryRun') dryRun?: boolean;
  @ValidateNested() @Type(() => Target) target!: Target;
  @IsString() @Sensitive() apiKey!: string;
}

@Tool({ name: 'deploy', description: 'Deploys to a region', args: DeployArgs })
class DeployTool {
  run(args: DeployArgs): string {
    runs++;
    return `deployed to ${args.region}/${args.target.cluster} at ${args.priority}${args.dryRun === true ? ' (dry run)' : ''}`;
  }
}

const SECRET = 'sk-live-do-not-show';
const ARGS = { region: 'eu-west-1', priority: 5, target: { cluster: 'blue' }, apiKey: SECRET };
const HEADERS = { 'mcp-param-region': 'eu-west-1', 'mcp-param-priority': '5', 'mcp-param-cluster': 'blue' };

/** One 2026-07-28 `tools/call` of `deploy`, as a client sends it, with `headers` beside the standard ones: its status and JSON. */
async function call(url: string, args: Record<string, unknown>, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'deploy',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'deploy',
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : (text.split('\n').find((line) => line.startsWith('data: ')) ?? '').slice(6);
  return {
    status: response.status,
    text,
    body: JSON.parse(json) as { result?: { content?: Array<{ text?: string }> }; error?: { code: number; message: string } },
  };
}

describe('@McpHeader: the schema', () => {
  it('gives each mirrored property its x-mcp-header, nested DTOs included', () => {
    const schema = new Toolkit().register(DeployTool).get('deploy')?.inputSchema as {
      properties: Record<string, Record<string, unknown> & { properties?: Record<string, Record<string, unknown>> }>;
    };
    expect(schema.properties.region).toEqual({ type: 'string', 'x-mcp-header': 'Region' });
    expect(schema.properties.priority?.['x-mcp-header']).toBe('Priority');
    expect(schema.properties.dryRun?.['x-mcp-header']).toBe('DryRun');
    expect(schema.properties.target?.properties?.cluster?.['x-mcp-header']).toBe('Cluster');
    expect(schema.properties.apiKey?.['x-mcp-header']).toBeUndefined();
  });

  const refused = (args: new () => object) => () => {
    @Tool({ name: 'refused', description: 'Never registered', args })
    class Refused {
      run(): string {
        return 'never';
      }
    }
    new Toolkit().register(Refused);
  };

  it('refuses what SEP-2243 forbids, at registration', () => {
    class OnNumber {
      @IsNumber() @McpHeader('Score') score!: number;
    }
    class BadName {
      @IsString() @McpHeader('My Region') region!: string;
    }
    class Twice {
      @IsString() @McpHeader('Id') a!: string;
      @IsString() @McpHeader('ID') b!: string;
    }
    class InArray {
      @IsArray() @ValidateNested({ each: true }) @Type(() => Target) targets!: Target[];
    }
    class Unvalidated {
      @McpHeader('Region') region!: string;
      @IsString() query!: string;
    }
    expect(refused(OnNumber)).toThrow(/OnNumber\.score: x-mcp-header is allowed on a string, integer or boolean/);
    expect(refused(BadName)).toThrow(/must be a non-empty token/);
    expect(refused(Twice)).toThrow(/declared twice/);
    expect(refused(InArray)).toThrow(/reached through properties/);
    expect(refused(Unvalidated)).toThrow(/Unvalidated\.region has @McpHeader but no class-validator decorator/);
    expect(refused(OnNumber)).toThrow(DtoRuleError);
  });

  it('refuses a @Sensitive property mirrored into a header, or a sensitive object holding one', () => {
    class SecretHeader {
      @IsString() @Sensitive() @McpHeader('Token') token!: string;
    }
    class SecretTarget {
      @ValidateNested() @Type(() => Target) @Sensitive() target!: Target;
    }
    expect(refused(SecretHeader)).toThrow(/SecretHeader\.token is @Sensitive\(\) and mirrored into an Mcp-Param header/);
    expect(refused(SecretTarget)).toThrow(/SecretTarget\.target is @Sensitive\(\)/);
  });
});

describe('serveMcp checks Mcp-Param headers against the arguments (2026-07-28)', () => {
  let server: McpHttpServerHandle;
  beforeAll(async () => {
    server = await serveMcp(new Toolkit().register(DeployTool), { transport: 'http', port: 0, host: '127.0.0.1' });
  });
  afterAll(() => server.close());
  beforeEach(() => (runs = 0));

  it('serves the SDK v2 client, which mirrors the headers itself (Base64 for what cannot travel as it is)', async () => {
    const client = new Client({ name: 'headers-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: VERSION } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const plain = await client.callTool({ name: 'deploy', arguments: ARGS });
      expect(plain.content).toEqual([{ type: 'text', text: 'deployed to eu-west-1/blue at 5' }]);
      const encoded = await client.callTool({
        name: 'deploy',
        arguments: { ...ARGS, region: ' Zürich ', target: { cluster: 'grün' }, dryRun: true },
      });
      expect(encoded.content).toEqual([{ type: 'text', text: 'deployed to  Zürich /grün at 5 (dry run)' }]);
      expect(runs).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('takes a matching header as it is or Base64-encoded, an integer as a number, and ignores one whose argument is absent', async () => {
    const base64 = `=?base64?${Buffer.from('eu-west-1').toString('base64')}?=`;
    expect((await call(server.url, ARGS, { ...HEADERS, 'mcp-param-region': base64 })).status).toBe(200);
    expect((await call(server.url, ARGS, { ...HEADERS, 'mcp-param-priority': '5.0' })).status).toBe(200);
    const ignored = await call(server.url, ARGS, { ...HEADERS, 'mcp-param-dryrun': 'true' });
    expect(ignored.body.result?.content?.[0]?.text).toBe('deployed to eu-west-1/blue at 5');
    expect(runs).toBe(3);
  });

  it.each([
    ['missing', { 'mcp-param-region': undefined }, /the Mcp-Param-Region header is missing, and the argument region is given/],
    ['disagreeing', { 'mcp-param-region': 'us-east-1' }, /the Mcp-Param-Region header does not match the argument region/],
    [
      'disagreeing in a nested DTO',
      { 'mcp-param-cluster': 'green' },
      /Mcp-Param-Cluster header does not match the argument target\.cluster/,
    ],
    ['an integer that disagrees', { 'mcp-param-priority': '6' }, /Mcp-Param-Priority header does not match/],
    ['badly padded Base64', { 'mcp-param-region': '=?base64?ZXUtd2VzdA?=' }, /Mcp-Param-Region header carries invalid Base64/],
    ['Base64 with characters outside its alphabet', { 'mcp-param-region': '=?base64?ZXUt!!!d2VzdC0x?=' }, /invalid Base64/],
    ['a boolean that disagrees', { 'mcp-param-dryrun': 'false' }, /Mcp-Param-DryRun header does not match the argument dryRun/],
  ])('refuses a header %s with 400 and -32020, naming no value, and runs nothing', async (_what, change, message) => {
    const headers: Record<string, string> = { ...HEADERS };
    for (const [name, value] of Object.entries(change)) {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }
    const reply = await call(server.url, { ...ARGS, dryRun: true }, { 'mcp-param-dryrun': 'true', ...headers });
    expect(reply.status).toBe(400);
    expect(reply.body.error?.code).toBe(-32020);
    expect(reply.body.error?.message).toMatch(message);
    for (const value of [SECRET, 'eu-west-1', 'us-east-1', 'blue', 'green']) expect(reply.text).not.toContain(value);
    expect(runs).toBe(0);
  });

  it('leaves a 2025-11-25 session alone: that revision has no Mcp-Param headers', async () => {
    const client = new Client({ name: 'legacy-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const result = await client.callTool({ name: 'deploy', arguments: ARGS });
      expect(result.content).toEqual([{ type: 'text', text: 'deployed to eu-west-1/blue at 5' }]);
    } finally {
      await client.close();
    }
  });
});
