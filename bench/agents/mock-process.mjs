// The mock server as a child process (its CPU is not charged to the framework measured):
// its URL, its request counts on demand, and stop(). Used by run.mjs, try.mjs and profile.mjs.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export async function startMock(env = {}) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./mock-server.mjs', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const lines = createInterface({ input: child.stdout });
  const [first] = await once(lines, 'line');
  const { url } = JSON.parse(first);
  return {
    url,
    async stats() {
      child.stdin.write('stats\n');
      const [line] = await once(lines, 'line');
      return JSON.parse(line).stats;
    },
    stop() {
      child.stdin.end();
    },
  };
}
