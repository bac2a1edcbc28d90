/**
 * The server the official MCP conformance suite (`@modelcontextprotocol/conformance server`)
 * tests in CI: every tool its tool scenarios call, written as `@Tool` classes and served by
 * `serveMcp` over Streamable HTTP. Elicitations are suspensions (`pending`), answered through
 * the client's elicitation and replayed by the ResumeCoordinator; `test_sampling` asks the
 * client's model through `ctx.sample`. Its resources, resource template and prompts are
 * `@Resource`, `@ResourceTemplate` and `@Prompt` classes in an McpCatalog; its skills (the
 * skills extension, SEP-2640) the folder examples/mcp/conformance-skills; `test_regional_query`
 * mirrors its region into an `Mcp-Param-Region` header (`@McpHeader`, SEP-2243). Prints the
 * endpoint's URL, then serves until SIGTERM or SIGINT. Run by scripts/mcp-conformance.js; see
 * docs/mcp.md.
 */
import 'reflect-metadata';
import { IsString } from 'class-validator';
import { answerFor, defineTool, Describe, failure, pending, Tool, Toolkit, withContent, type ToolContext } from 'toolnexus-ts';
import { INPUT_ROUND_TOOLS } from './conformance-input-rounds';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { TASK_SUPPORT, TASK_TOOLS } from './conformance-tasks';
import {
  inputRound,
  McpCatalog,
  McpHeader,
  Prompt,
  Resource,
  ResourceTemplate,
  serveMcp,
  type CatalogContext,
  type McpToolContext,
} from 'toolnexus-ts/mcp';
import { loadSkills } from 'toolnexus-ts/skills';

// A 1×1 red PNG and a 1-sample silent WAV: the smallest valid media the scenarios accept.
const RED_PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const SILENT_WAV = Buffer.concat([
  Buffer.from('RIFF'),
  Buffer.from([38, 0, 0, 0]),
  Buffer.from('WAVEfmt '),
  Buffer.from([16, 0, 0, 0, 1, 0, 1, 0, 0x40, 0x1f, 0, 0, 0x80, 0x3e, 0, 0, 2, 0, 16, 0]),
  Buffer.from('data'),
  Buffer.from([2, 0, 0, 0, 0, 0]),
]).toString('base64');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

@Tool({ name: 'test_simple_text', description: 'Returns a simple text response', annotations: { readOnlyHint: true } })
class SimpleTextTool {
  run(): string {
    return 'This is a simple text response for testing.';
  }
}

@Tool({ name: 'test_image_content', description: 'Returns a 1x1 red PNG' })
class ImageContentTool {
  run() {
    return withContent('A 1x1 red PNG', [{ type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' }]);
  }
}

@Tool({ name: 'test_audio_content', description: 'Returns a tiny WAV' })
class AudioContentTool {
  run() {
    return withContent('A silent WAV', [{ type: 'audio', data: SILENT_WAV, mimeType: 'audio/wav' }]);
  }
}

@Tool({ name: 'test_embedded_resource', description: 'Returns an embedded text resource' })
class EmbeddedResourceTool {
  run() {
    return withContent('This is an embedded resource content.', [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ]);
  }
}

@Tool({ name: 'test_multiple_content_types', description: 'Returns text, an image and a resource' })
class MultipleContentTypesTool {
  run() {
    return withContent('Multiple content types test:', [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: RED_PIXEL_PNG, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: '{"test":"data","value":123}' },
      },
    ]);
  }
}

@Tool({ name: 'test_tool_with_logging', description: 'Logs three messages while it runs' })
class ToolWithLogging {
  async run(_args: object, ctx?: ToolContext): Promise<string> {
    ctx?.log?.('info', 'Tool execution started');
    await sleep(50);
    ctx?.log?.('info', 'Tool processing data');
    await sleep(50);
    ctx?.log?.('info', 'Tool execution completed');
    return 'Logging test completed';
  }
}

@Tool({ name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100 of 100' })
class ToolWithProgress {
  async run(_args: object, ctx?: ToolContext): Promise<string> {
    ctx?.progress?.(0, 100);
    await sleep(50);
    ctx?.progress?.(50, 100);
    await sleep(50);
    ctx?.progress?.(100, 100);
    return 'Progress test completed';
  }
}

@Tool({ name: 'test_error_handling', description: 'Always fails' })
class ErrorHandlingTool {
  run(): never {
    throw new Error('This tool intentionally returns an error for testing');
  }
}

class ElicitationArgs {
  @IsString()
  message!: string;
}

/** An elicitation is a suspension: ask once, and the replay carries the answer. */
@Tool({ name: 'test_elicitation', description: 'Asks the user for a username and an email', args: ElicitationArgs })
class ElicitationTool {
  run(args: ElicitationArgs, ctx?: ToolContext) {
    const answer = answerFor(ctx, 'input');
    if (!answer) {
      const schema = {
        type: 'object',
        properties: {
          username: { type: 'string', description: "User's response" },
          email: { type: 'string', description: "User's email address" },
        },
        required: ['username', 'email'],
      };
      return pending({ kind: 'input', prompt: args.message, data: { schema } });
    }
    return `User response: action: accept, content: ${JSON.stringify(answer.data ?? {})}`;
  }
}

@Tool({ name: 'test_elicitation_sep1034_defaults', description: 'Asks with a default for every primitive type' })
class ElicitationDefaultsTool {
  run(_args: object, ctx?: ToolContext) {
    const answer = answerFor(ctx, 'input');
    if (answer) return `Elicitation completed: action=accept, content=${JSON.stringify(answer.data ?? {})}`;
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true },
      },
    };
    return pending({ kind: 'input', prompt: 'Please review and update the form fields with defaults', data: { schema } });
  }
}

@Tool({ name: 'test_elicitation_sep1330_enums', description: 'Asks with every enum variant' })
class ElicitationEnumsTool {
  run(_args: object, ctx?: ToolContext) {
    const answer = answerFor(ctx, 'input');
    if (answer) return `Elicitation completed: action=accept, content=${JSON.stringify(answer.data ?? {})}`;
    const schema = {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          description: 'Titled single-select',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          description: 'Legacy titled',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: {
          type: 'array',
          description: 'Untitled multi-select',
          items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        },
        titledMulti: {
          type: 'array',
          description: 'Titled multi-select',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    };
    return pending({ kind: 'input', prompt: 'Please pick from the lists', data: { schema } });
  }
}

/** Closes its own event stream mid-call: the client resumes with Last-Event-ID and gets the result. */
@Tool({ name: 'test_reconnection', description: 'Closes the SSE stream mid-call to test resumption' })
class ReconnectionTool {
  async run(_args: object, ctx?: McpToolContext): Promise<string> {
    await sleep(50);
    ctx?.mcp.closeStream?.();
    await sleep(100);
    return 'Reconnection test completed successfully';
  }
}

class SamplingArgs {
  @IsString()
  @Describe('The prompt to send to the LLM')
  prompt!: string;
}

/** Asks the client's model; a client that declared no sampling capability gets an error result. */
@Tool({ name: 'test_sampling', description: "Asks the client's model", args: SamplingArgs })
class SamplingTool {
  async run(args: SamplingArgs, ctx?: McpToolContext) {
    if (!ctx?.sample) return failure('the client does not support sampling');
    const answer = await ctx.sample({ messages: [{ role: 'user', content: { type: 'text', text: args.prompt } }], maxTokens: 100 });
    return `LLM response: ${answer.content.type === 'text' ? answer.content.text : `(${answer.content.type})`}`;
  }
}

@Resource({ uri: 'test://static-text', name: 'static-text', description: 'A static text resource', mimeType: 'text/plain' })
class StaticTextResource {
  read(): string {
    return 'This is the content of the static text resource.';
  }
}

@Resource({ uri: 'test://static-binary', name: 'static-binary', description: 'A static binary resource', mimeType: 'image/png' })
class StaticBinaryResource {
  read(): Uint8Array {
    return Buffer.from(RED_PIXEL_PNG, 'base64');
  }
}

@Resource({ uri: 'test://watched-resource', name: 'watched-resource', description: 'A resource to subscribe to', mimeType: 'text/plain' })
class WatchedResource {
  read(): string {
    return 'Watched resource content';
  }
}

class TemplateParams {
  @IsString()
  @Describe('The record id')
  id!: string;
}

@ResourceTemplate({
  uriTemplate: 'test://template/{id}/data',
  name: 'template-data',
  description: 'Data for an id',
  mimeType: 'application/json',
  params: TemplateParams,
})
class TemplateDataResource {
  read(params: TemplateParams): string {
    return JSON.stringify({ id: params.id, templateTest: true, data: `Data for ID: ${params.id}` });
  }

  complete(_parameter: string, value: string): string[] {
    return ['123', '456', '789'].filter((id) => id.startsWith(value));
  }
}

@Prompt({ name: 'test_simple_prompt', description: 'A simple prompt without arguments' })
class SimplePrompt {
  get(): string {
    return 'This is a simple prompt for testing.';
  }
}

class PromptArgs {
  @IsString()
  @Describe('First test argument')
  arg1!: string;

  @IsString()
  @Describe('Second test argument')
  arg2!: string;
}

@Prompt({ name: 'test_prompt_with_arguments', description: 'A prompt with two arguments', args: PromptArgs })
class PromptWithArguments {
  get(args: PromptArgs): string {
    return `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`;
  }

  complete(_argument: string, value: string): string[] {
    return ['paris', 'park', 'party', 'hello', 'world'].filter((word) => word.startsWith(value));
  }
}

class EmbeddedArgs {
  @IsString()
  @Describe('URI of the resource to embed')
  resourceUri!: string;
}

@Prompt({ name: 'test_prompt_with_embedded_resource', description: 'A prompt embedding a resource', args: EmbeddedArgs })
class PromptWithEmbeddedResource {
  get(args: EmbeddedArgs) {
    return [
      {
        role: 'user' as const,
        content: {
          type: 'resource' as const,
          resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
        },
      },
      { role: 'user' as const, content: { type: 'text' as const, text: 'Please process the embedded resource above.' } },
    ];
  }
}

@Prompt({ name: 'test_prompt_with_image', description: 'A prompt with an image' })
class PromptWithImage {
  get() {
    return [
      { role: 'user' as const, content: { type: 'image' as const, data: RED_PIXEL_PNG, mimeType: 'image/png' } },
      { role: 'user' as const, content: { type: 'text' as const, text: 'Please analyze the image above.' } },
    ];
  }
}

/** Asks what context to use in an input round (2026-07-28), then builds the prompt with it. */
@Prompt({ name: 'test_input_required_result_prompt', description: 'Asks for its context first' })
class InputRequiredPrompt {
  get(_args: object, ctx?: CatalogContext) {
    const answer = ctx?.mcp?.inputResponses?.user_context as { action?: string; content?: { context?: unknown } } | undefined;
    const context = answer?.action === 'accept' ? answer.content?.context : undefined;
    if (typeof context === 'string') return `Use this context: ${context}`;
    return inputRound({
      inputRequests: {
        user_context: {
          method: 'elicitation/create',
          params: {
            message: 'What context should the prompt use?',
            requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
          },
        },
      },
    });
  }
}

// SEP-2243 custom headers: the region travels in the Mcp-Param-Region header too, so a gateway
// can route on it; serveMcp refuses a 2026-07-28 call whose header is missing or disagrees.
class RegionalQueryArgs {
  @IsString() @McpHeader('Region') @Describe('The region whose data is read') region!: string;
  @IsString() @Describe('What to look up') query!: string;
}

@Tool({ name: 'test_regional_query', description: 'Looks a query up in one region', args: RegionalQueryArgs })
class RegionalQueryTool {
  run(args: RegionalQueryArgs): string {
    return `${args.query} looked up in ${args.region}`;
  }
}

const jsonSchema202012 = defineTool({
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features',
  // The full 2020-12 vocabulary passes through tools/list as given (SEP-2106): $anchor, composition, conditionals.
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
      address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
    },
    properties: {
      name: { type: 'string' },
      address: { $ref: '#/$defs/address' },
      contactMethod: { type: 'string', enum: ['phone', 'email'] },
      phone: { type: 'string' },
      email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
  },
  run: (args) => `Received ${JSON.stringify(args)}`,
});

/** A prompt class made at run time, for the list-change hook. */
function definePrompt(name: string): new () => { get(): string } {
  @Prompt({ name, description: 'Comes and goes' })
  class DynamicPrompt {
    get(): string {
      return 'here';
    }
  }
  return DynamicPrompt;
}

async function main(): Promise<void> {
  const toolkit = new Toolkit().register(
    SimpleTextTool,
    ImageContentTool,
    AudioContentTool,
    EmbeddedResourceTool,
    MultipleContentTypesTool,
    ToolWithLogging,
    ToolWithProgress,
    ErrorHandlingTool,
    ElicitationTool,
    ElicitationDefaultsTool,
    ElicitationEnumsTool,
    ReconnectionTool,
    SamplingTool,
    jsonSchema202012,
    RegionalQueryTool,
    ...INPUT_ROUND_TOOLS,
    ...TASK_TOOLS,
  );
  const catalog = new McpCatalog().register(
    StaticTextResource,
    StaticBinaryResource,
    WatchedResource,
    TemplateDataResource,
    SimplePrompt,
    PromptWithArguments,
    PromptWithEmbeddedResource,
    PromptWithImage,
    InputRequiredPrompt,
  );
  // The suite's hooks for list changes (2026-07-28 `subscriptions/listen`): each adds its thing once, removes it the next time.
  const dynamicTool = defineTool({ name: 'test_dynamic_tool', description: 'Comes and goes', run: () => 'here' });
  const dynamicPrompt = definePrompt('test_dynamic_prompt');
  toolkit.register(
    defineTool({
      name: 'test_trigger_tool_change',
      description: 'Adds or removes test_dynamic_tool',
      run: () => (toolkit.unregister('test_dynamic_tool') ? 'removed' : (toolkit.register(dynamicTool), 'added')),
    }),
    defineTool({
      name: 'test_trigger_prompt_change',
      description: 'Adds or removes test_dynamic_prompt',
      run: () => (catalog.remove('prompt', 'test_dynamic_prompt') ? 'removed' : (catalog.register(dynamicPrompt), 'added')),
    }),
  );
  // The skills extension's scenarios (SEP-2640) read this folder's skills: beside this file, or, compiled, in the sources.
  const skillsDir = [path.join(__dirname, 'conformance-skills'), path.resolve(__dirname, '../../../examples/mcp/conformance-skills')].find(
    (dir) => existsSync(dir),
  );
  if (!skillsDir) throw new Error('examples/mcp/conformance-skills is missing');
  const port = Number(process.env.PORT ?? 0);
  const server = await serveMcp(toolkit, {
    skills: loadSkills({ dirs: skillsDir }),
    transport: 'http',
    port,
    name: 'toolnexus-conformance',
    version: '1.0.0',
    retryIntervalMs: 500,
    catalog,
    // The tasks extension: per tool, and a call still running after 250 ms becomes a task.
    tasks: TASK_SUPPORT,
    taskAfterMs: 250,
  });
  process.stdout.write(`${server.url}\n`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
