/**
 * A toolnexus DTO as the inputSchema of the MCP SDK's own `McpServer.registerTool`, called by
 * the SDK's own `Client` over its in-memory transport. The installed SDK (1.x) takes zod schemas
 * only (its `getZodSchemaObject` refuses anything else; the v2 SDK takes a Standard Schema with
 * JSON Schema as it is), so the DTO goes through the bridge docs/standard-schema.md shows: a zod
 * object that says the DTO's JSON Schema and validates with `standardSchemaOf(Dto)`. The client
 * is shown the DTO's schema, a valid call reaches the handler, an invalid one is the SDK's own
 * `Input validation error` result with our messages.
 */
import 'reflect-metadata';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Type } from 'class-transformer';
import { IsArray, IsInt, IsString, Max, Min, MinLength, ValidateNested } from 'class-validator';
import { z } from 'zod';
import { schemaForClass, standardSchemaOf, type ClassType } from 'toolnexus-ts';

class StopArgs {
  @IsString() @MinLength(2) city!: string;
}

class TripArgs {
  @IsInt() @Min(1) @Max(7) days!: number;
  @IsArray() @ValidateNested({ each: true }) @Type(() => StopArgs) stops!: StopArgs[];
}

/** The bridge of docs/standard-schema.md ("The MCP SDK"): a zod object the 1.x SDK takes. */
function mcpInput<T extends object>(dto: ClassType<T>) {
  const schema = standardSchemaOf(dto)['~standard'];
  return z
    .looseObject({})
    .meta(schema.jsonSchema.input({ target: 'draft-07' }))
    .superRefine(async (value, ctx) => {
      const result = await schema.validate(value);
      for (const issue of result.issues ?? []) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path as PropertyKey[] });
    });
}

let client: Client;
let server: McpServer;
const seen: unknown[] = [];

beforeAll(async () => {
  server = new McpServer({ name: 'trips', version: '1.0.0' });
  server.registerTool('plan_trip', { description: 'Plan a trip', inputSchema: mcpInput(TripArgs) }, (args) => {
    seen.push(args);
    return { content: [{ type: 'text', text: `${args.days as number} days` }] };
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

test('the installed SDK takes zod only: a bare Standard Schema is refused by registerTool', () => {
  const bare = new McpServer({ name: 'bare', version: '1.0.0' });
  const register = () =>
    bare.registerTool('plan_trip', { inputSchema: standardSchemaOf(TripArgs) as unknown as z.ZodObject }, () => ({ content: [] }));
  expect(register).toThrow('inputSchema must be a Zod schema or raw shape, received an unrecognized object');
});

test('the client is shown the DTO schema (draft-07, as the SDK asks zod for it)', async () => {
  const { tools } = await client.listTools();
  const { $schema, ...shown } = (tools.find((t) => t.name === 'plan_trip')?.inputSchema ?? {}) as Record<string, unknown>;
  expect($schema).toBe('http://json-schema.org/draft-07/schema#');
  expect(shown).toEqual(schemaForClass(TripArgs));
});

test('a valid call reaches the handler; an invalid one is the SDK validation error result, with our messages', async () => {
  seen.length = 0;
  const ok = await client.callTool({ name: 'plan_trip', arguments: { days: 3, stops: [{ city: 'Oslo' }] } });
  expect(ok).toEqual({ content: [{ type: 'text', text: '3 days' }] });
  expect(seen).toEqual([{ days: 3, stops: [{ city: 'Oslo' }] }]);

  const refused = await client.callTool({ name: 'plan_trip', arguments: { days: 9, stops: [{ city: 'O' }] } });
  expect(refused.isError).toBe(true);
  const text = (refused.content as Array<{ text: string }>)[0]?.text ?? '';
  expect(text).toMatch(/^MCP error -32602: Input validation error: Invalid arguments for tool plan_trip: /);
  expect(text).toContain('days must not be greater than 7');
  expect(text).toContain('city must be longer than or equal to 2 characters');
  expect(seen).toHaveLength(1);
});
