/**
 * McpToolSource against a server whose resources and prompts are larger than a client should
 * take: a 5 MB resource body and a prompt of 10,000 messages are refused with clear errors, past
 * `maxOutputChars` and the 1,000-message bound (docs/mcp.md, "Resources, prompts, sampling and
 * changes of a connected server"). The server is serveMcp over HTTP on 127.0.0.1, configured to
 * send them (its own bounds raised).
 */
import { Toolkit } from '../../src';
import { McpCatalog, McpToolSource, Prompt, Resource, serveMcp, type McpHttpServerHandle } from '../../src/mcp';

@Resource({ uri: 'app://huge', mimeType: 'text/plain' })
class HugeResource {
  read(): string {
    return 'x'.repeat(5 * 1024 * 1024);
  }
}

@Prompt({ name: 'chatty' })
class ChattyPrompt {
  get() {
    return Array.from({ length: 10_000 }, (_, i) => ({ role: 'user' as const, content: { type: 'text' as const, text: `message ${i}` } }));
  }
}

describe('McpToolSource against a server sending too much', () => {
  let server: McpHttpServerHandle;
  let source: McpToolSource;

  beforeAll(async () => {
    const catalog = new McpCatalog({ maxContentBytes: 64 * 1024 * 1024, maxPromptMessages: 100_000 }).register(HugeResource, ChattyPrompt);
    server = await serveMcp(new Toolkit(), {
      transport: 'http',
      catalog,
      maxEventBytesPerSession: 64 * 1024 * 1024,
      maxEventBytes: 128 * 1024 * 1024,
    });
    source = new McpToolSource({ config: { mcpServers: { big: { type: 'http', url: server.url } } } });
    const report = await source.connect();
    expect(report.failed).toEqual([]);
  }, 60_000);

  afterAll(async () => {
    await source.close();
    await server.close();
  });

  it('refuses a resource body past maxOutputChars, saying how large it was', async () => {
    await expect(source.readResource('big', 'app://huge')).rejects.toThrow(
      /^server big: resource app:\/\/huge is \d+ characters; at most 1000000 are read$/,
    );
  });

  it('refuses a prompt of 10,000 messages', async () => {
    await expect(source.getPrompt('big', 'chatty')).rejects.toThrow('server big: prompt chatty has 10000 messages; at most 1000 are read');
  });

  it('still lists and reads what is within the bounds', async () => {
    await expect(source.resources('big')).resolves.toEqual([
      { server: 'big', uri: 'app://huge', name: 'HugeResource', mimeType: 'text/plain' },
    ]);
  });
});
