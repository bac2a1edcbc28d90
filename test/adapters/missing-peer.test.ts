/**
 * Each adapter entry loaded without its optional peer throws a typed error that names the
 * install command, while the root loads (scripts/consumer-test.js checks the same on a real
 * install without the peers). The peer is hidden from a child process's resolver.
 */
import { join } from 'node:path';
import { outputOf, startChild } from '../fixtures/children';

const SRC = join(__dirname, '..', '..', 'src');

it.each([
  ['toolnexus-ts/ai-sdk', 'ai-sdk', 'ai', 'npm install ai'],
  ['toolnexus-ts/openai-agents', 'openai-agents', '@openai/agents', 'npm install @openai/agents'],
  ['toolnexus-ts/langchain', 'langchain', '@langchain/core', 'npm install @langchain/core @langchain/langgraph'],
  ['toolnexus-ts/langchain', 'langchain', '@langchain/langgraph', 'npm install @langchain/core @langchain/langgraph'],
])('%s (src/adapters/%s) without %s throws MissingPeerError naming `%s`', async (entry, folder, peer, install) => {
  const out = await outputOf<{ name: string; code: string; message: string }>(
    startChild('interop/missing-peer-child.ts', [join(SRC, 'adapters', folder, 'index.ts'), peer]),
    entry,
  );
  expect(out).toEqual({
    name: 'MissingPeerError',
    code: 'TOOLNEXUS_MISSING_PEER',
    message: `${entry} needs the package "${peer}", an optional peer dependency of toolnexus-ts that is not installed: run \`${install}\``,
  });
});

it('the root entry loads without any adapter peer', async () => {
  const out = await outputOf<{ loaded?: boolean }>(startChild('interop/missing-peer-child.ts', [join(SRC, 'index.ts'), 'ai']), 'root');
  expect(out).toEqual({ loaded: true });
});
