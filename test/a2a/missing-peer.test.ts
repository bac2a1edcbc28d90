/**
 * toolnexus-ts/a2a loaded without its optional peer `@a2a-js/sdk` throws a typed error naming the
 * install command, as the adapter entries do; the peer is hidden from a child process's resolver.
 */
import { join } from 'node:path';
import { outputOf, startChild } from '../fixtures/children';

it('toolnexus-ts/a2a without @a2a-js/sdk throws MissingPeerError naming `npm install @a2a-js/sdk`', async () => {
  const entry = join(__dirname, '..', '..', 'src', 'a2a', 'index.ts');
  const out = await outputOf<{ name: string; code: string; message: string }>(
    startChild('interop/missing-peer-child.ts', [entry, '@a2a-js/sdk']),
    'toolnexus-ts/a2a',
  );
  expect(out).toEqual({
    name: 'MissingPeerError',
    code: 'TOOLNEXUS_MISSING_PEER',
    message:
      'toolnexus-ts/a2a needs the package "@a2a-js/sdk", an optional peer dependency of toolnexus-ts that is not installed: run `npm install @a2a-js/sdk`',
  });
});
