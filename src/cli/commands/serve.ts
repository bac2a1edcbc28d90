import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerToken } from '../../inbox/auth';
import { createInbox, type Inbox } from '../../inbox/handler';
import type { InboxOptions } from '../../inbox/options';
import type { AgentRunner } from '../../runner/agent-runner';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';
import { CliProblem } from '../target';

/** How `serve` signs people in: a bearer token, or nobody on a loopback-only inbox. */
export type ServeAuth = 'token' | 'none-local-only';

/** What {@link startInboxServer} serves. */
export interface InboxServerOptions {
  /** Answers resume runs through it (a `--tools` module's `createRunner(store)`). */
  runner?: AgentRunner;
  coordinator: ResumeCoordinator;
  /** 0: any free port. */
  port: number;
  auth: ServeAuth;
  /** `TOOLNEXUS_INBOX_TOKEN` is read from it. */
  env: Record<string, string | undefined>;
}

/** A running inbox server. */
export interface InboxServer {
  url: string;
  /** The token to sign in with, when none was given in `TOOLNEXUS_INBOX_TOKEN` (never the given one). */
  madeUpToken?: string;
  close(): Promise<void>;
}

/** Serves the inbox over a runner or coordinator on 127.0.0.1. The store stays open: its owner closes it. */
export async function startInboxServer(options: InboxServerOptions): Promise<InboxServer> {
  let authorize: InboxOptions['authorize'] = 'none-local-only';
  let madeUpToken: string | undefined;
  if (options.auth === 'token') {
    const given = options.env.TOOLNEXUS_INBOX_TOKEN;
    if (given === undefined || given === '') madeUpToken = randomBytes(24).toString('base64url');
    authorize = bearerToken(given || madeUpToken, { id: 'inbox-token', name: 'inbox token holder' });
  }
  const inbox: Inbox = createInbox({
    ...(options.runner ? { runner: options.runner } : { coordinator: options.coordinator }),
    authorize,
  });
  const server: Server = createServer((request, response) => inbox(request, response));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    inbox.close();
    throw error;
  }
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    ...(madeUpToken === undefined ? {} : { madeUpToken }),
    async close() {
      inbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * `serve`: the approvals inbox for the store on 127.0.0.1 until SIGINT or SIGTERM
 * (docs/operating.md, "Inbox"). With `--tools` exporting `createRunner(store)`, answering a
 * run's suspension resumes the run here.
 */
export const serve = storeCommand({
  path: ['serve'],
  summary: 'serve the approvals inbox (page and JSON API) for the store on 127.0.0.1',
  usage: '[--port N] [--auth token|none-local-only]',
  options: { port: { type: 'string' }, auth: { type: 'string' } },
  async run({ values, io, open }) {
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CliProblem('--port must be a port number (0 for any free one)', EXIT.usage);
    const auth = values.auth ?? 'token';
    if (auth !== 'token' && auth !== 'none-local-only') throw new CliProblem('--auth must be token or none-local-only', EXIT.usage);
    const session = await open();
    const server = await startInboxServer({
      coordinator: session.coordinator,
      ...(session.runner ? { runner: session.runner } : {}),
      port,
      auth,
      env: io.env,
    });
    if (values.json) {
      io.out(JSON.stringify({ url: server.url, ...(server.madeUpToken === undefined ? {} : { token: server.madeUpToken }) }));
    } else {
      io.out(`inbox for ${session.storeShown}: ${server.url}`);
      if (server.madeUpToken !== undefined) {
        io.out(`sign in with this token (shown once; set TOOLNEXUS_INBOX_TOKEN to choose your own): ${server.madeUpToken}`);
      }
      if (!session.hasTools) io.out('without --tools, suspensions can be declined and cancelled here, not approved');
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await server.close();
    return EXIT.ok;
  },
});
