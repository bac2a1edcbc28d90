import type { IncomingMessage } from 'node:http';
import type { AgentRunner } from '../runner/agent-runner';
import type { Principal } from '../suspension/audit';
import type { ResumeCoordinator } from '../suspension/coordinator';
import type { Authorize, BearerTokens } from './auth';
import type { InboxSignInOptions } from './sign-ins';
import type { InboxTicketOptions } from './tickets';

/**
 * Where the inbox writes its internal errors: anything with an `error(message, stack?)`
 * method, Nest's `Logger` included. Each line starts with the correlation id the 500 body
 * carries, so a client's report finds its line.
 */
export interface InboxLogger {
  error(message: string, stack?: string): void;
}

/** One line the inbox logs: what was done to which suspension, by whom. Arguments are redacted; tokens never appear. */
export interface InboxLogEntry {
  /** `revoked`: a standing grant was revoked (`id` is the grant's; `kind` is `grant`). */
  event: 'answered' | 'cancelled' | 'refused' | 'revoked';
  id: string;
  tool?: string;
  kind?: string;
  principal?: Principal;
  /** The suspension's status afterwards, or the refusal's error code. */
  status: string;
  /** The call's arguments with sensitive fields redacted. */
  args?: unknown;
}

/** Options of {@link createInbox}. */
export interface InboxOptions {
  /**
   * The runner whose runs the inbox continues: answering a suspension of a run resumes the run
   * in this process (`runner.resume`). Give this or `coordinator`.
   */
  runner?: AgentRunner;
  /** The coordinator whose suspensions the inbox shows and answers, when there is no runner (or for calls outside runs). */
  coordinator?: ResumeCoordinator;
  /**
   * Who is asking: a function returning the request's principal (or nothing, to refuse with 401),
   * a {@link BearerTokens} from `bearerToken(...)`, or `'none-local-only'` for a trusted
   * single-user machine, which then refuses every request not made over loopback to a loopback
   * host name. Required: there is no default.
   */
  authorize: Authorize | BearerTokens | 'none-local-only';
  /**
   * The path the inbox is mounted at (`/inbox`). With Express's `app.use('/inbox', inbox)` it is
   * found on its own (`req.baseUrl`); give it for `node:http`, Fastify and Nest.
   */
  basePath?: string;
  /** Host state for the replay of an answered call (and the resumed run's tools): the answering request's. */
  context?: (request: IncomingMessage, principal: Principal) => object;
  /** Largest request body read, in bytes. Default 131 072. */
  maxBodyBytes?: number;
  /** How often the store is read for changes while a page listens, in ms. Default 1000. */
  pollMs?: number;
  /** Most event streams served at once; more are refused with 503. Default 100. */
  maxStreams?: number;
  /** Most settled suspensions the history shows. Default 50. */
  historyLimit?: number;
  /** The page's title. Default "Approvals inbox". */
  title?: string;
  /** Told of every answer, cancellation and refused attempt. */
  log?: (entry: InboxLogEntry) => void;
  /**
   * Where internal errors (a store that fails, an `authorize` that throws) are logged, with the
   * correlation id the 500 body carries. Default: one line on stderr. `ToolnexusInboxModule`
   * gives Nest's `Logger`.
   */
  logger?: InboxLogger;
  /** How long a browser's sign-in lasts and where sign-ins are kept (docs/operating.md, "Sign-ins"). */
  signIns?: InboxSignInOptions;
  /**
   * Believe the proxy in front about the client's scheme (`X-Forwarded-Proto: https`,
   * `Forwarded: proto=https`), so cookies get `Secure` behind a TLS-terminating proxy. Only
   * when every request reaches the inbox through that proxy. Default false.
   */
  trustProxy?: boolean;
  /**
   * E-mail approvals' links (docs/channels.md, "E-mail"): `<inbox>/tickets/<token>` shows the
   * request a link answers and, on its page's button, answers it as the link's principal.
   */
  tickets?: InboxTicketOptions;
  /** The time in ms since the epoch, for session expiry. Default `Date.now`; tests give a fake one. */
  clock?: () => number;
}
