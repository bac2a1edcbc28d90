/**
 * serveMcp's catalog (resources, resource templates, prompts, completions, subscriptions,
 * list_changed) and sampling, seen by the SDK's own Client over stdio (the server in a child
 * process) and over Streamable HTTP on 127.0.0.1. See docs/mcp.md, "The catalog".
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolRegistrationError } from '../../src';
import { McpCatalog, McpCatalogError, Prompt, Resource, ResourceTemplate, serveMcp, type McpHttpServerHandle } from '../../src/mcp';
import { mcpCatalogToolkit, mcpTestCatalog, PIXEL, RefundPolicy } from '../fixtures/mcp-catalog';

const REGISTER = join(__dirname, '..', 'fixtures', 'register-ts.js');
const STDIO_SERVER = join(__dirname, '..', 'fixtures', 'mcp-catalog-stdio-server.ts');

/** Waits for `condition`, polling; fails after 20 s (a loaded machine delivers notifications late, never not at all). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

interface Connected {
  client: Client;
  sampled: unknown[];
  close(): Promise<void>;
}

/** An SDK client that declares sampling and answers it as a fake model named `client-model`. */
async function connect(transport: 'stdio' | 'http', url?: string, sampling = true): Promise<Connected> {
  const client = new Client({ name: 'catalog-test', version: '1.0.0' }, { capabilities: sampling ? { sampling: {} } : {} });
  const sampled: unknown[] = [];
  if (sampling)
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      sampled.push(request.params);
      const first = request.params.messages[0]?.content as { text?: string } | undefined;
      return { role: 'assistant', model: 'client-model', content: { type: 'text', text: `echo ${first?.text ?? ''}` } };
    });
  if (transport === 'stdio') {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: ['-r', REGISTER, STDIO_SERVER], stderr: 'pipe' }));
  } else {
    await client.connect(new StreamableHTTPClientTransport(new URL(url as string)));
  }
  return { client, sampled, close: () => client.close() };
}

describe.each(['stdio', 'http'] as const)('the catalog over %s, seen by the SDK Client', (transport) => {
  let http: McpHttpServerHandle | undefined;
  let connected: Connected;

  beforeAll(async () => {
    if (transport === 'http')
      http = await serveMcp(mcpCatalogToolkit(), { transport: 'http', catalog: mcpTestCatalog(), name: 'toolnexus-catalog' });
    connected = await connect(transport, http?.url);
  }, 60_000);

  afterAll(async () => {
    await connected?.close();
    await http?.close();
  });

  it('declares resources (subscribe, listChanged), prompts and completions', () => {
    expect(connected.client.getServerCapabilities()).toMatchObject({
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
    });
  });

  it('lists resources, templates and prompts with their arguments from the DTO', async () => {
    const { client } = connected;
    await expect(client.listResources()).resolves.toMatchObject({
      resources: [
        { uri: 'app://policy/refunds', name: 'refund-policy', description: 'The refund policy', mimeType: 'text/markdown' },
        { uri: 'app://logo', name: 'logo', mimeType: 'image/png' },
      ],
    });
    await expect(client.listResourceTemplates()).resolves.toMatchObject({
      resourceTemplates: [{ uriTemplate: 'app://orders/{id}', name: 'order', mimeType: 'application/json' }],
    });
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([
      {
        name: 'code_review',
        description: 'Review a piece of code',
        arguments: [
          { name: 'code', description: 'The code to review', required: true },
          { name: 'length', description: 'How long a review', required: false },
        ],
      },
      { name: 'show_logo', description: 'An image and a resource' },
    ]);
  });

  it('reads text, bytes (base64) and a template, its parameters validated', async () => {
    const { client } = connected;
    await expect(client.readResource({ uri: 'app://policy/refunds' })).resolves.toEqual({
      contents: [{ uri: 'app://policy/refunds', mimeType: 'text/markdown', text: '# Refunds\nUp to 30 days.' }],
    });
    await expect(client.readResource({ uri: 'app://logo' })).resolves.toEqual({
      contents: [{ uri: 'app://logo', mimeType: 'image/png', blob: PIXEL }],
    });
    await expect(client.readResource({ uri: 'app://orders/101' })).resolves.toEqual({
      contents: [{ uri: 'app://orders/101', mimeType: 'application/json', text: '{"id":"101","uri":"app://orders/101"}' }],
    });
    await expect(client.readResource({ uri: 'app://orders/abc' })).rejects.toThrow(
      /-32602.*invalid arguments for resource app:\/\/orders\/abc: id/,
    );
    await expect(client.readResource({ uri: 'app://nothing/here' })).rejects.toThrow(/-32002.*no resource at app:\/\/nothing\/here/);
  });

  it('gets prompts: a string as one user message, images and embedded resources, arguments validated', async () => {
    const { client } = connected;
    await expect(client.getPrompt({ name: 'code_review', arguments: { code: 'x = 1', length: 'long' } })).resolves.toEqual({
      description: 'Review a piece of code',
      messages: [{ role: 'user', content: { type: 'text', text: 'Please give a long review of:\n\nx = 1' } }],
    });
    await expect(client.getPrompt({ name: 'show_logo' })).resolves.toEqual({
      description: 'The logo, and the policy',
      messages: [
        { role: 'user', content: { type: 'image', data: PIXEL, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'resource', resource: { uri: 'app://policy/refunds', text: '# Refunds' } } },
      ],
    });
    await expect(client.getPrompt({ name: 'code_review', arguments: { length: 'epic' } })).rejects.toThrow(
      /-32602.*invalid arguments for prompt code_review/,
    );
    await expect(client.getPrompt({ name: 'nope' })).rejects.toThrow(/-32602.*no prompt named nope/);
  });

  it('completes prompt arguments and template parameters from the class’s complete()', async () => {
    const { client } = connected;
    await expect(
      client.complete({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'length', value: 'l' } }),
    ).resolves.toEqual({ completion: { values: ['long'], total: 1, hasMore: false } });
    await expect(
      client.complete({ ref: { type: 'ref/resource', uri: 'app://orders/{id}' }, argument: { name: 'id', value: '10' } }),
    ).resolves.toEqual({ completion: { values: ['100', '101'], total: 2, hasMore: false } });
    await expect(client.complete({ ref: { type: 'ref/prompt', name: 'show_logo' }, argument: { name: 'x', value: '' } })).resolves.toEqual({
      completion: { values: [], hasMore: false },
    });
  });

  it("lets a tool ask the client's model through ctx.sample, bounded before it is sent", async () => {
    const { client, sampled } = connected;
    await expect(client.callTool({ name: 'ask_model', arguments: { question: 'hello?' } })).resolves.toMatchObject({
      content: [{ type: 'text', text: 'client-model said: echo hello?' }],
    });
    expect(sampled).toEqual([{ messages: [{ role: 'user', content: { type: 'text', text: 'hello?' } }], maxTokens: 50 }]);
    await expect(client.callTool({ name: 'ask_model', arguments: { question: 'long', maxTokens: '100000' } })).resolves.toMatchObject({
      isError: true,
      content: [{ type: 'text', text: "a sampling request's maxTokens must be a whole number from 1 to 4096" }],
    });
    expect(sampled).toHaveLength(1);
  });
});

describe('the catalog over HTTP: subscriptions and list changes', () => {
  it('tells a subscribed session of an update until it unsubscribes, and every session of a list change', async () => {
    const catalog = mcpTestCatalog();
    const server = await serveMcp(mcpCatalogToolkit(), { transport: 'http', catalog });
    const watcher = await connect('http', server.url);
    const other = await connect('http', server.url);
    const updates: string[] = [];
    const lists: string[] = [];
    watcher.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void updates.push(`watcher ${note.params.uri}`));
    other.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => void updates.push(`other ${note.params.uri}`));
    for (const [name, { client }] of [
      ['watcher', watcher],
      ['other', other],
    ] as const) {
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void lists.push(`${name} resources`));
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => void lists.push(`${name} prompts`));
    }
    try {
      await watcher.client.subscribeResource({ uri: 'app://policy/refunds' });
      catalog.updated('app://policy/refunds');
      catalog.updated('app://logo');
      await until(() => updates.length > 0);

      await watcher.client.unsubscribeResource({ uri: 'app://policy/refunds' });
      catalog.updated('app://policy/refunds');
      @Resource({ uri: 'app://late', name: 'late' })
      class LateResource {
        read(): string {
          return 'registered after the clients connected';
        }
      }
      @Prompt({ name: 'late_prompt' })
      class LatePrompt {
        get(): string {
          return 'late';
        }
      }
      catalog.register(LateResource, LatePrompt);
      // A session's notifications share one event stream, in order: once the list changes (sent
      // after every update above) have arrived, an update sent to a session that had no
      // subscription would have arrived before them.
      await until(() => lists.length === 4);
      expect(updates).toEqual(['watcher app://policy/refunds']);
      expect(lists.sort()).toEqual(['other prompts', 'other resources', 'watcher prompts', 'watcher resources']);
      await expect(other.client.readResource({ uri: 'app://late' })).resolves.toMatchObject({
        contents: [{ text: 'registered after the clients connected' }],
      });
      expect(catalog.remove('prompt', 'late_prompt')).toBe(true);
      await expect(other.client.listPrompts()).resolves.toMatchObject({ prompts: [{ name: 'code_review' }, { name: 'show_logo' }] });
    } finally {
      await watcher.close();
      await other.close();
      await server.close();
    }
  });

  it('refuses a tool asking a client that declared no sampling capability', async () => {
    const server = await serveMcp(mcpCatalogToolkit(), { transport: 'http', catalog: mcpTestCatalog() });
    const plain = await connect('http', server.url, false);
    try {
      await expect(plain.client.callTool({ name: 'ask_model', arguments: { question: 'hi' } })).resolves.toMatchObject({
        isError: true,
        content: [{ type: 'text', text: 'the client cannot be asked (no sampling capability)' }],
      });
    } finally {
      await plain.close();
      await server.close();
    }
  });
});

describe('McpCatalog bounds and registration', () => {
  it('refuses a resource body or a prompt past its limits, saying so', async () => {
    @Resource({ uri: 'app://huge' })
    class HugeResource {
      read(): string {
        return 'x'.repeat(5 * 1024 * 1024);
      }
    }
    @Prompt({ name: 'chatty' })
    class ChattyPrompt {
      get() {
        return Array.from({ length: 10_000 }, () => ({ role: 'user' as const, content: { type: 'text' as const, text: 'hi' } }));
      }
    }
    const catalog = new McpCatalog().register(HugeResource, ChattyPrompt);
    await expect(catalog.read('app://huge')).rejects.toThrow(
      new McpCatalogError('resource app://huge is 5242880 bytes; at most 4194304 are sent', 'invalid'),
    );
    await expect(catalog.getPrompt('chatty')).rejects.toThrow('prompt chatty returned 10000 messages; at most 1000 are sent');
  });

  it('refuses what cannot be served, naming it, and registers nothing of that call', () => {
    class Plain {}
    @Resource({ uri: 'app://policy/refunds' })
    class SameUri {
      read(): string {
        return '';
      }
    }
    @ResourceTemplate({ uriTemplate: 'app://a/{+path}' })
    class Reserved {
      read(): string {
        return '';
      }
    }
    @ResourceTemplate({ uriTemplate: 'app://b/{id}', params: RefundPolicy })
    class WrongParams {
      read(): string {
        return '';
      }
    }
    @Prompt()
    class NoGetPrompt {}
    const catalog = mcpTestCatalog();
    expect(() => catalog.register(Plain)).toThrow(
      new ToolRegistrationError('Plain needs exactly one of @Resource, @ResourceTemplate or @Prompt (it has 0)'),
    );
    expect(() => catalog.register(SameUri)).toThrow('a resource app://policy/refunds is already registered');
    expect(() => catalog.register(Reserved)).toThrow(
      '@ResourceTemplate on Reserved: URI template app://a/{+path}: only simple {name} expressions (RFC 6570 level 1) are supported',
    );
    expect(() => catalog.register(WrongParams)).toThrow(
      '@ResourceTemplate on WrongParams: its params DTO RefundPolicy has no property for {id}',
    );
    expect(() => catalog.register(NoGetPrompt)).toThrow('NoGetPrompt has no get() method');
    expect(catalog.resources()).toHaveLength(2);
  });
});
