// Quick check of one adapter: node try.mjs <framework>
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
const name = process.argv[2];
const mock = spawn(process.execPath, [new URL('./mock-server.mjs', import.meta.url).pathname], { stdio: ['pipe', 'pipe', 'inherit'] });
const lines = createInterface({ input: mock.stdout });
const [first] = await once(lines, 'line');
const { url } = JSON.parse(first);
const mod = await import(`./frameworks/${name}.${name === 'toolnexus' ? 'js' : 'mjs'}`);
const ask = await mod.create(url);
for (let i = 0; i < 3; i++) console.log(JSON.stringify(await ask()));
mock.stdin.write('stats\n');
const [s] = await once(lines, 'line');
console.log(s);
mock.stdin.end();
