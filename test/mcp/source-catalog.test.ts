/**
 * McpToolSource using more than a server's tools, against @modelcontextprotocol/server-everything
 * (a child process over stdio): its resources and prompts (a prompt as a runner's instructions),
 * its sampling requests answered by the host's model only when the host's policy says yes, and
 * its tools/list_changed applied to the toolkit. See docs/mcp.md, "Using MCP servers".
 */
import { defineTool, Toolkit, type PendingRequest } from '../../src';
import { FunctionModel, type ModelRequest } from '../../src/models';
import { McpToolSource, serveMcp, type McpSamplingRequestInfo } from '../../src/mcp';

const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('McpToolSource beyond tools, against the everything server', () => {
  const asked: ModelRequest[] = [];
  const policySaw: McpSamplingRequestInfo[] = [];
  const people: PendingRequest[] = [];
  let verdict: boolean | 'ask' = true;
  let personSays = true;
  let source: McpToolSource;
  const toolkit = new Toolkit();

  beforeAll(async () => {
    source = new McpToolSource({
      config: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } },
      waitFor: (request) => {
        people.push(request);
        return Promise.resolve({ id: request.id, ok: personSays, ...(personSays ? {} : { reason: 'declined' as const }) });
      },
      sampling: {
        model: new FunctionModel(
          (request) => {
            asked.push(request);
            return 'the host model answers';
          },
          { provider: 'host-model' },
        ),
        approve: (request) => {
          policySaw.push(request);
          return verdict;
        },
        maxTokens: 500,
      },
    });
    const report = await source.connect();
    expect(report.failed).toEqual([]);
    source.register(toolkit);
  }, 60_000);

  afterAll(() => source.close());

  it('lists and reads its resources, redacted and bounded', async () => {
    const resources = await source.resources('everything');
    expect(resources.length).toBeGreaterThan(2);
    const doc = resources.find((resource) => resource.uri.endsWith('architecture.md'));
    expect(doc).toMatchObject({ server: 'everything', name: 'architecture.md', mimeType: 'text/markdown' });
    const [content] = await source.readResource('everything', doc!.uri);
    expect(content).toMatchObject({ uri: doc!.uri, mimeType: 'text/markdown' });
    expect(content?.text?.length).toBeGreaterThan(100);
    await expect(source.readResource('nowhere', 'x://y')).rejects.toThrow('MCP server nowhere is not connected');
  });

  it('gets its prompts, and one as the instructions of a runner', async () => {
    const prompts = await source.prompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
    expect(prompts.find((prompt) => prompt.name === 'args-prompt')?.arguments).toEqual([
      { name: 'city', description: 'Name of the city', required: true },
      { name: 'state', required: false },
    ]);
    const { messages } = await source.getPrompt('everything', 'args-prompt', { city: 'Lyon' });
    expect(messages[0]).toMatchObject({ role: 'user', content: { type: 'text' } });
    expect(await source.instructions('everything', 'args-prompt', { city: 'Lyon' })).toContain('Lyon');
    await expect(source.getPrompt('everything', 'args-prompt', {})).rejects.toThrow(/^server everything: prompts\/get failed: /);
  });

  it("answers the server's sampling request through the host's model once the policy says yes", async () => {
    // The server adds its sampling tool after it learns the client can sample, and says its list changed.
    await until(() => toolkit.has('everything_trigger-sampling-request'));
    verdict = true;
    const result = await toolkit.execute('everything_trigger-sampling-request', { prompt: 'hello', maxTokens: 50 });
    expect(result.isError).toBe(false);
    expect(result.output).toContain('the host model answers');
    expect(policySaw.at(-1)).toEqual({
      server: 'everything',
      messages: [{ role: 'user', text: 'Resource trigger-sampling-request context: hello' }],
      systemPrompt: 'You are a helpful test server.',
      maxTokens: 50,
    });
    expect(asked.at(-1)).toMatchObject({
      system: 'You are a helpful test server.',
      messages: [{ role: 'user', content: 'Resource trigger-sampling-request context: hello' }],
      tools: [],
    });
  });

  it('never reaches the model when the policy says no, a person declines, or the request is over a bound', async () => {
    await until(() => toolkit.has('everything_trigger-sampling-request'));
    const before = asked.length;
    verdict = false;
    const refused = await toolkit.execute('everything_trigger-sampling-request', { prompt: 'no', maxTokens: 50 });
    expect(refused.output).toContain('User rejected sampling request');

    verdict = 'ask';
    personSays = false;
    const declined = await toolkit.execute('everything_trigger-sampling-request', { prompt: 'ask a person', maxTokens: 50 });
    expect(declined.output).toContain('User rejected sampling request');
    expect(people.at(-1)).toMatchObject({
      kind: 'approval',
      prompt: 'MCP server everything asks the model: Resource trigger-sampling-request context: ask a person',
    });

    const seenByPolicy = policySaw.length;
    const huge = await toolkit.execute('everything_trigger-sampling-request', { prompt: 'x', maxTokens: 100_000 });
    expect(huge.output).toContain('sampling request for 100000 tokens refused (at most 500)');
    expect(policySaw).toHaveLength(seenByPolicy);
    expect(asked).toHaveLength(before);

    personSays = true;
    const approved = await toolkit.execute('everything_trigger-sampling-request', { prompt: 'ask again', maxTokens: 50 });
    expect(approved.output).toContain('the host model answers');
    expect(asked).toHaveLength(before + 1);
  });
});

describe('tools/list_changed, both ways', () => {
  it("serveMcp tells its clients when its toolkit's tools change, and McpToolSource applies it to the toolkit it filled", async () => {
    const served = new Toolkit().register(defineTool({ name: 'first', description: 'The first tool', run: () => 'one' }));
    const server = await serveMcp(served, { transport: 'http' });
    const source = new McpToolSource({ config: { mcpServers: { remote: { type: 'http', url: server.url } } } });
    const local = new Toolkit();
    try {
      const report = await source.connect();
      expect(report.connected).toEqual([{ server: 'remote', tools: ['remote_first'] }]);
      source.register(local);

      served.register(defineTool({ name: 'second', description: 'Registered later', run: () => 'two' }));
      await until(() => local.has('remote_second'));
      await expect(local.execute('remote_second', {})).resolves.toMatchObject({ isError: false, output: 'two' });

      served.unregister('first');
      await until(() => !local.has('remote_first'));
      expect(local.tools().map((tool) => tool.name)).toEqual(['remote_second']);
      expect(source.toolDefinitions().map((tool) => tool.name)).toEqual(['remote_second']);
    } finally {
      await source.close();
      await server.close();
    }
  });
});
