/**
 * docs/a2a.md: `a2aAgentTool`'s options are checked before anything is loaded or sent (the
 * tool's calls are tested against a real agent in agent-tool.process.test.ts).
 */
import { InvalidArgumentError } from 'toolnexus-ts';
import { a2aAgentTool } from 'toolnexus-ts/a2a';

describe('a2aAgentTool options', () => {
  it.each([
    [{}, 'exactly one of url'],
    [{ url: 'http://127.0.0.1:1', card: { name: 'x' } }, 'exactly one of url'],
    [{ url: 'not a url' }, 'url is not a URL'],
    [{ url: 'file:///etc/passwd' }, 'url must be http or https'],
    [{ card: [] as unknown as Record<string, unknown> }, 'card must be the agent card as a JSON object'],
    [{ url: 'http://127.0.0.1:1', headers: { authorization: 42 as unknown as string } }, 'header authorization must be a string'],
    [{ url: 'http://127.0.0.1:1', timeoutMs: 0 }, 'timeoutMs must be a positive number'],
    [{ url: 'http://127.0.0.1:1', maxResponseBytes: Number.NaN }, 'maxResponseBytes must be a positive number'],
    [{ url: 'http://127.0.0.1:1', maxParts: -1 }, 'maxParts must be a positive number'],
    [{ url: 'http://127.0.0.1:1', headerOrigins: ['https://api.example.com/a2a'] }, 'headerOrigins must be origins'],
  ])('refuses %j', async (options, message) => {
    const made = a2aAgentTool(options);
    await expect(made).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(made).rejects.toThrow(message);
  });
});
