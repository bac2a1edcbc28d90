// Quick check of one adapter against a fresh mock: node try.mjs <framework-key>
import { pathToFileURL } from 'node:url';
import { FRAMEWORKS } from './frameworks.mjs';
import { startMock } from './mock-process.mjs';

const framework = FRAMEWORKS.find((f) => f.key === process.argv[2]);
if (!framework) throw new Error(`usage: node try.mjs <${FRAMEWORKS.map((f) => f.key).join('|')}>`);
const mock = await startMock();
const { url } = mock;
try {
  const { create } = await import(pathToFileURL(framework.file).href);
  const ask = await create(url);
  for (let i = 0; i < 3; i++) console.log(JSON.stringify(await ask()));
  console.log(JSON.stringify({ stats: await mock.stats() }));
} finally {
  mock.stop();
}
