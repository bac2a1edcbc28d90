/**
 * `toolnexus-ts serve --store sqlite:./file.db [--port N] [--tools module] [--auth token|none-local-only]`:
 * the approvals inbox for a store, on 127.0.0.1 (docs/operating.md, "Inbox").
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve as resolvePath } from 'node:path';
import { InvalidArgumentError } from '../errors';
import { bearerToken } from '../inbox/auth';
import { createInbox, type Inbox } from '../inbox/handler';
import type { InboxOptions } from '../inbox/options';
import { AgentRunner } from '../runner/agent-runner';
import { ResumeCoordinator } from '../suspension/coordinator';
import type { PendingStore } from '../suspension/store';
import { PostgresPendingStore } from '../suspension/stores/postgres';
import { SqlitePendingStore } from '../suspension/stores/sqlite';
import { Toolkit } from '../toolkit/toolkit';

/** What `serve` was asked for. */
export interface ServeOptions {
  /** `sqlite:<file>` or a `postgres://` / `postgresql://` URL. */
  store: string;
  /** Default 0: any free port. */
  port: number;
  /**
   * A module exporting the tools the store's calls were made with: `createRunner(store)`
   * returning an AgentRunner (answers then resume runs here), or a `toolkit` (or default
   * export) that is a Toolkit. Without one, calls can be declined and cancelled, not approved.
   */
  tools?: string;
  /** `token` (default): a bearer token, from `TOOLNEXUS_INBOX_TOKEN` or made up and printed once. */
  auth: 'token' | 'none-local-only';
}

export const SERVE_USAGE = `usage: toolnexus-ts serve --store sqlite:./file.db|postgres://... [--port N] [--tools module] [--auth token|none-local-only]
  Serves the approvals inbox for the store on http://127.0.0.1:PORT/ (docs/operating.md, "Inbox").
  --auth token (default) signs in with TOOLNEXUS_INBOX_TOKEN, or a token made up now and printed once.`;

/** Reads `serve`'s arguments; throws {@link InvalidArgumentError} saying what is wrong. */
export function parseServeArgs(argv: readonly string[]): ServeOptions {
  const options: Partial<ServeOptions> = { port: 0, auth: 'token' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => {
      const next = inline ?? argv[++i];
      if (next === undefined || (inline === undefined && next.startsWith('--'))) throw new InvalidArgumentError(`${flag} needs a value`);
      return next;
    };
    if (flag === '--store') options.store = value();
    else if (flag === '--tools') options.tools = value();
    else if (flag === '--port') {
      const port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new InvalidArgumentError('--port must be a port number (0 for any free one)');
      options.port = port;
    } else if (flag === '--auth') {
      const auth = value();
      if (auth !== 'token' && auth !== 'none-local-only') throw new InvalidArgumentError('--auth must be token or none-local-only');
      options.auth = auth;
    } else throw new InvalidArgumentError(`unknown argument ${JSON.stringify(arg)}`);
  }
  if (options.store === undefined) throw new InvalidArgumentError('serve needs --store sqlite:./file.db or --store postgres://...');
  return options as ServeOptions;
}

/** Opens the store a `--store` value names. */
export function openStore(spec: string): PendingStore {
  if (spec.startsWith('sqlite:')) {
    const filename = spec.slice('sqlite:'.length);
    if (filename === '') throw new InvalidArgumentError('--store sqlite: needs a file name: sqlite:./file.db');
    return new SqlitePendingStore({ filename });
  }
  if (/^postgres(ql)?:\/\//.test(spec)) return new PostgresPendingStore({ connectionString: spec });
  throw new InvalidArgumentError('--store must be sqlite:<file> or a postgres:// URL');
}

/** The runner or toolkit a `--tools` module provides, over `store`. */
export function toolsFrom(modulePath: string | undefined, store: PendingStore): Pick<InboxOptions, 'runner' | 'coordinator'> {
  if (modulePath === undefined) return { coordinator: new ResumeCoordinator({ toolkit: new Toolkit(), store }) };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the module is named at run time
  const loaded = require(resolvePath(modulePath)) as Record<string, unknown>;
  if (typeof loaded.createRunner === 'function') {
    const runner = (loaded.createRunner as (store: PendingStore) => unknown)(store);
    if (!(runner instanceof AgentRunner)) throw new InvalidArgumentError(`${modulePath}: createRunner(store) must return an AgentRunner`);
    if (runner.coordinator.store !== store)
      throw new InvalidArgumentError(`${modulePath}: createRunner(store) must use the store it is given`);
    return { runner };
  }
  const toolkit = loaded.toolkit ?? loaded.default;
  if (!(toolkit instanceof Toolkit)) {
    throw new InvalidArgumentError(`${modulePath} must export createRunner(store) or a Toolkit as toolkit (or default)`);
  }
  return { coordinator: new ResumeCoordinator({ toolkit, store }) };
}

/** A running inbox server. */
export interface InboxServer {
  url: string;
  /** The token to sign in with, when `serve` made one up (never when it came from the environment). */
  madeUpToken?: string;
  close(): Promise<void>;
}

/** Starts the inbox for `options` on 127.0.0.1. */
export async function startInboxServer(options: ServeOptions, env: Record<string, string | undefined> = process.env): Promise<InboxServer> {
  const store = openStore(options.store);
  let inbox: Inbox;
  let madeUpToken: string | undefined;
  try {
    let authorize: InboxOptions['authorize'] = 'none-local-only';
    if (options.auth === 'token') {
      const given = env.TOOLNEXUS_INBOX_TOKEN;
      if (given === undefined || given === '') madeUpToken = randomBytes(24).toString('base64url');
      authorize = bearerToken(given || madeUpToken, { id: 'inbox-token', name: 'inbox token holder' });
    }
    inbox = createInbox({ ...toolsFrom(options.tools, store), authorize });
  } catch (error) {
    await store.close();
    throw error;
  }
  const server: Server = createServer((request, response) => inbox(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    ...(madeUpToken === undefined ? {} : { madeUpToken }),
    async close() {
      inbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}

/** Runs `serve` until SIGINT/SIGTERM; returns the exit code. */
export async function serveCommand(
  argv: readonly string[],
  io: { out: (line: string) => void; err: (line: string) => void; env?: Record<string, string | undefined> } = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  },
): Promise<number> {
  let server: InboxServer;
  try {
    server = await startInboxServer(parseServeArgs(argv), io.env ?? process.env);
  } catch (error) {
    io.err(`serve: ${error instanceof Error ? error.message : String(error)}`);
    if (error instanceof InvalidArgumentError) io.err(SERVE_USAGE);
    return 2;
  }
  io.out(`inbox: ${server.url}`);
  if (server.madeUpToken !== undefined)
    io.out(`sign in with this token (shown once; set TOOLNEXUS_INBOX_TOKEN to choose your own): ${server.madeUpToken}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
