// Quick check of one adapter against a fresh mock: node try.mjs <framework-key>
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { FRAMEWORKS } from './frameworks.mjs';

const framework = FRAMEWORKS.find((f) => f.key === process.argv[2]);
if (!framework) throw new Error(`usage: node try.mjs <${FRAMEWORKS.map((f) => f.key).join('|')}>`);
const mock = spawn(process.execPath, [new URL('./mock-server.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: mock.stdout });
const [first] = await once(lines, 'line');
const { url } = JSON.parse(first);
try {
  const { create } = await import(pathToFileURL(framework.file).href);
  const ask = await create(url);
  for (let i = 0; i < 3; i++) console.log(JSON.stringify(await ask()));
  mock.stdin.write('stats\n');
  const [s] = await once(lines, 'line');
  console.log(s);
} finally {
  mock.stdin.end();
}
