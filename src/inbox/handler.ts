import type { IncomingMessage, ServerResponse } from 'node:http';
import { isGrantStore } from '../suspension/grants';
import { InvalidArgumentError } from '../errors';
import type { Principal } from '../suspension/audit';
import { BearerTokens, LOCAL_PRINCIPAL, localOnlyProblem, SESSION_COOKIE, type Authorize } from './auth';
import { checkCsrf, CSRF_COOKIE, CSRF_FIELD, csrfTokenFor } from './csrf';
import { InboxCsrfError, InboxError, InboxForbiddenError, InboxUnauthorizedError } from './errors';
import { ChangeFeed } from './events';
import { cookie, cookieOf, isSecure, readForm, readJsonObject, sendHtml, sendJson, type InboxRequest } from './http';
import { errorReporter, fail } from './failures';
import type { InboxOptions } from './options';
import { inboxPage, refusedPage, signInPage } from './page';
import { InboxService, queryOf } from './service';
import { SignIns } from './sign-ins';
import { ticketDoor } from './tickets';

/**
 * A mounted inbox: a request handler for `node:http`, Express (`app.use('/inbox', inbox)`),
 * Fastify (raw request and reply) and Nest (middleware). Requests outside its base path go
 * to `next` when there is one, else get a 404.
 */
export interface Inbox {
  (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void): void;
  /** Ends every event stream and stops polling the store; call it before closing the HTTP server. */
  close(): void;
}

const DEFAULTS = { maxBodyBytes: 128 * 1024, pollMs: 1000, maxStreams: 100, historyLimit: 50, title: 'Approvals inbox' };
const ID = /^[^/]{1,512}$/;

/**
 * Builds the approvals inbox over a runner or a coordinator (docs/operating.md, "Inbox"): a
 * page, a JSON API and an event stream under one path, refusing everything `authorize` does not
 * sign in, and every cookie-borne state change without the page's CSRF token.
 *
 * @example
 * ```ts
 * const inbox = createInbox({ runner, authorize: bearerToken(process.env.INBOX_TOKEN), basePath: '/inbox' })
 * http.createServer(inbox).listen(8080, '127.0.0.1')
 * ```
 */
export function createInbox(options: InboxOptions): Inbox {
  if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('createInbox needs options');
  const coordinator = options.runner?.coordinator ?? options.coordinator;
  if (!coordinator) throw new InvalidArgumentError('createInbox needs a runner or a coordinator');
  const authorize = authorizerOf(options.authorize);
  const settings = { ...DEFAULTS };
  for (const key of ['maxBodyBytes', 'pollMs', 'maxStreams', 'historyLimit'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new InvalidArgumentError(`${key} must be a positive integer, got ${String(value)}`);
    settings[key] = value;
  }
  if (options.title !== undefined) settings.title = String(options.title);
  const basePath = normalBase(options.basePath);
  if ((options as { rules?: unknown }).rules !== undefined)
    throw new InvalidArgumentError(
      'inbox rules moved to the coordinator: new ResumeCoordinator({ toolkit, store, policy: rulesPolicy([...]) }) judges every door (docs/who-may-answer.md)',
    );
  const feed = new ChangeFeed(coordinator.store, settings.pollMs, settings.maxStreams, (error) =>
    report({ method: 'POLL', url: '/api/events' } as InboxRequest, error),
  );
  const service = new InboxService(options, () => feed.changed());
  const tokens = options.authorize instanceof BearerTokens ? options.authorize : undefined;
  if (options.trustProxy !== undefined && typeof options.trustProxy !== 'boolean')
    throw new InvalidArgumentError('trustProxy must be true or false');
  if (options.clock !== undefined && typeof options.clock !== 'function') throw new InvalidArgumentError('clock must be a function');
  if (options.logger !== undefined && typeof options.logger?.error !== 'function')
    throw new InvalidArgumentError("logger needs an error(message, stack?) method (Nest's Logger has one)");
  const trustProxy = options.trustProxy === true;
  // Browsers signed in with a bearer token hold a server-side session; other authorizers bring their own.
  if (options.signIns !== undefined && !tokens)
    throw new InvalidArgumentError(
      'signIns applies to the bearer-token sign-in (authorize: bearerToken(...)); a function authorize keeps its own sign-ins',
    );
  const signIns = tokens ? new SignIns(options.signIns, options.clock ?? Date.now) : undefined;
  const tickets =
    options.tickets === undefined
      ? undefined
      : ticketDoor(options.tickets, {
          service,
          title: settings.title,
          maxBodyBytes: settings.maxBodyBytes,
          now: options.clock ?? Date.now,
          principalOf: (request) => principalOf(request),
        });

  /** The principal of a request: what `authorize` says, else a live session's (a changed token ends it). */
  async function principalOf(request: InboxRequest): Promise<Principal | undefined> {
    const principal = (await authorize(request)) ?? undefined;
    if (principal || !tokens || !signIns || bearerSent(request)) return principal;
    const session = await signIns.find(cookieOf(request, SESSION_COOKIE));
    return session ? tokens.byCredential(session.credential) : undefined;
  }

  const reportError = errorReporter(options.logger);
  /**
   * Logs an internal error of `request` with a new correlation id, and returns the id for the
   * response. A ticket in the path is a credential (`signIn: 'link-is-credential'`): never logged.
   */
  const report = (request: InboxRequest, error: unknown): string =>
    reportError(
      `${request.method ?? 'GET'} ${((request.originalUrl ?? request.url ?? '/').split('?')[0] ?? '').replace(/\/tickets\/[^/]*/, '/tickets/[ticket]')}`,
      error,
    );

  const handle = async (request: InboxRequest, response: ServerResponse, next?: (error?: unknown) => void): Promise<void> => {
    const url = new URL(request.originalUrl ?? request.url ?? '/', 'http://inbox.invalid');
    const base = basePath ?? normalBase(request.baseUrl) ?? '';
    if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) {
      if (next) next();
      else sendJson(response, 404, { error: { code: 'TOOLNEXUS_INBOX_NOT_FOUND', message: 'not found' } });
      return;
    }
    const path = url.pathname.slice(base.length);
    const method = request.method ?? 'GET';
    const cookiePath = base === '' ? '/' : base;
    const secure = isSecure(request, trustProxy);
    const pageRequest = method === 'GET' && (path === '' || path === '/');
    try {
      if (path === '' && method === 'GET') {
        // Relative links on the page need the trailing slash.
        response.statusCode = 308;
        response.setHeader('location', `${base}/${url.search}`);
        response.end();
        return;
      }
      if (path === '/login' && method === 'POST' && tokens) return await signIn(request, response, cookiePath, secure);
      if (path === '/logout' && method === 'POST') {
        checkCsrf(request, (await readForm(request, settings.maxBodyBytes)).fields.get(CSRF_FIELD));
        // Revoked server-side: a copy of the cookie taken before is refused from now on.
        await signIns?.revoke(cookieOf(request, SESSION_COOKIE));
        response.setHeader('set-cookie', cookie(SESSION_COOKIE, '', cookiePath, secure, { maxAge: 0 }));
        response.statusCode = 303;
        response.setHeader('location', './');
        response.end();
        return;
      }
      // Every path under tickets/ is the ticket door's: its refusal is a page, whatever the token (bounded there).
      const ticket = /^\/tickets\/(.*)$/s.exec(path);
      if (tickets && ticket) return await tickets(request, response, ticket[1] as string, cookiePath, secure);
      const principal = await principalOf(request);
      if (pageRequest) return page(request, response, principal, cookiePath, secure);
      if (!principal) throw new InboxUnauthorizedError();
      await api(request, response, principal, method, path, url.searchParams);
    } catch (error) {
      if (pageRequest && error instanceof InboxError) {
        const shown = refusedPage(settings.title, error.message);
        sendHtml(response, error.status, shown.html, shown.csp);
        return;
      }
      fail(response, error, () => report(request, error));
    }
  };

  async function signIn(request: InboxRequest, response: ServerResponse, cookiePath: string, secure: boolean): Promise<void> {
    let token: string;
    try {
      const form = await readForm(request, settings.maxBodyBytes);
      const sent = form.fields.get('token');
      if (sent === null || (form.preParsed && form.fields.get(CSRF_FIELD) === null)) {
        // Say why rather than "no CSRF token": the usual cause is a body parser that kept the fields from the inbox.
        const cause = form.preParsed
          ? `a body parser before the inbox read the form and handed over no ${sent === null ? 'token' : CSRF_FIELD} field (docs/operating.md, "Body parsers")`
          : 'the form was sent without a token field';
        return showSignIn(request, response, cookiePath, secure, 400, `Sign-in refused: ${cause}.`);
      }
      checkCsrf(request, form.fields.get(CSRF_FIELD));
      token = sent;
    } catch (error) {
      if (!(error instanceof InboxError)) throw error;
      // A CSRF refusal's message already starts "refused: ".
      const said = error instanceof InboxCsrfError ? `Sign-in ${error.message}` : `Sign-in refused: ${error.message}`;
      return showSignIn(request, response, cookiePath, secure, error.status, said);
    }
    const credential = tokens?.credentialFor(token);
    if (credential === undefined || !signIns) {
      return showSignIn(request, response, cookiePath, secure, 401, 'That token does not sign anyone in.');
    }
    // A new session id on every sign-in; the one this browser held before (if any) ends.
    await signIns.revoke(cookieOf(request, SESSION_COOKIE));
    const id = await signIns.create(credential);
    response.setHeader('set-cookie', cookie(SESSION_COOKIE, id, cookiePath, secure, { maxAge: signIns.cookieMaxAge }));
    response.statusCode = 303;
    response.setHeader('location', './');
    response.end();
  }

  function showSignIn(
    request: InboxRequest,
    response: ServerResponse,
    cookiePath: string,
    secure: boolean,
    status: number,
    problem: string,
  ): void {
    const { token, fresh } = csrfTokenFor(request);
    if (fresh) response.setHeader('set-cookie', cookie(CSRF_COOKIE, token, cookiePath, secure));
    const shown = signInPage(settings.title, token, problem);
    sendHtml(response, status, shown.html, shown.csp);
  }

  function page(
    request: InboxRequest,
    response: ServerResponse,
    principal: Principal | undefined,
    cookiePath: string,
    secure: boolean,
  ): void {
    const { token, fresh } = csrfTokenFor(request);
    if (fresh) response.setHeader('set-cookie', cookie(CSRF_COOKIE, token, cookiePath, secure));
    if (!principal) {
      const shown = tokens ? signInPage(settings.title, token) : refusedPage(settings.title, new InboxUnauthorizedError().message);
      sendHtml(response, 401, shown.html, shown.csp);
      return;
    }
    const signedInHere = tokens !== undefined && !bearerSent(request);
    const shown = inboxPage(settings.title, principal, token, signedInHere);
    sendHtml(response, 200, shown.html, shown.csp);
  }

  async function api(
    request: InboxRequest,
    response: ServerResponse,
    principal: Principal,
    method: string,
    path: string,
    params: URLSearchParams,
  ): Promise<void> {
    if (method === 'GET' && path === '/api/me') return sendJson(response, 200, { principal });
    if (method === 'GET' && path === '/api/events') {
      if (!feed.open(response))
        sendJson(response, 503, { error: { code: 'TOOLNEXUS_INBOX_BUSY', message: 'too many open event streams' } });
      return;
    }
    if (method === 'GET' && path === '/api/grants') {
      // Standing grants, for everyone signed in to see who approves what in advance (docs/who-may-answer.md).
      return sendJson(response, 200, { grants: isGrantStore(service.coordinator.store) ? await service.grants(principal) : [] });
    }
    const grant = routeOf(/^\/api\/grants\/([^/]+)\/revoke$/, path);
    if (grant) {
      if (method !== 'POST') return wrongMethod(response, 'POST');
      checkCsrf(request);
      return sendJson(response, 200, { grant: await service.revoke(principal, grant.id) });
    }
    if (method === 'GET' && path === '/api/suspensions') {
      return sendJson(response, 200, { suspensions: await service.list(principal, queryOf(params, settings.historyLimit)) });
    }
    const run = routeOf(/^\/api\/runs\/([^/]+)\/cancel$/, path);
    if (run) {
      if (method !== 'POST') return wrongMethod(response, 'POST');
      checkCsrf(request);
      const body = await readJsonObject(request, settings.maxBodyBytes);
      return sendJson(response, 200, await service.cancelRun(principal, run.id, body));
    }
    const suspension = routeOf(/^\/api\/suspensions\/([^/]+)(?:\/(answer|cancel))?$/, path);
    if (suspension) {
      const { id, action } = suspension;
      if (action === undefined && method === 'GET') return sendJson(response, 200, await service.get(principal, id));
      if (action !== undefined && method === 'POST') {
        checkCsrf(request);
        const body = await readJsonObject(request, settings.maxBodyBytes);
        const done =
          action === 'answer' ? await service.answer(request, principal, id, body) : await service.cancel(request, principal, id, body);
        return sendJson(response, 200, done);
      }
      return wrongMethod(response, action === undefined ? 'GET' : 'POST');
    }
    sendJson(response, 404, { error: { code: 'TOOLNEXUS_INBOX_NOT_FOUND', message: 'not found' } });
  }

  const inbox = ((request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => {
    void handle(request, response, next).catch((error: unknown) => fail(response, error, () => report(request, error)));
  }) as Inbox;
  // Calls recorded or settled by this process (a run halting here, the CLI's coordinator) are
  // announced at once; other processes' changes arrive with the next poll.
  const unobserve = coordinator.observe({
    onPending: () => feed.changed(),
    onSettled: () => feed.changed(),
    onSigned: () => feed.changed(),
    onEscalated: () => feed.changed(),
    onGranted: () => feed.changed(),
    onRevoked: () => feed.changed(),
  });
  inbox.close = () => {
    unobserve();
    feed.close();
  };
  return inbox;
}

function authorizerOf(option: InboxOptions['authorize']): Authorize {
  if (option === 'none-local-only') {
    return (request) => {
      const problem = localOnlyProblem(request);
      if (problem) throw new InboxForbiddenError(problem);
      return { ...LOCAL_PRINCIPAL };
    };
  }
  if (option instanceof BearerTokens) return option.authorize;
  if (typeof option === 'function') {
    return async (request) => {
      const principal = await option(request);
      if (principal === undefined || principal === null) return undefined;
      if (typeof principal.id !== 'string' || principal.id === '')
        throw new InvalidArgumentError('authorize returned a principal without an id');
      return principal;
    };
  }
  throw new InvalidArgumentError(
    "createInbox needs authorize: a function returning the request's principal, bearerToken(...), or 'none-local-only' for a local single-user inbox",
  );
}

/** True when the request carries `Authorization: Bearer` (a script's token, not a browser's session). */
function bearerSent(request: IncomingMessage): boolean {
  const header = request.headers.authorization;
  return typeof header === 'string' && /^bearer\s/i.test(header);
}

function normalBase(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  if (typeof path !== 'string') throw new InvalidArgumentError('basePath must be a string');
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed !== '' && !trimmed.startsWith('/'))
    throw new InvalidArgumentError(`basePath must start with "/", got ${JSON.stringify(path)}`);
  return trimmed;
}

/**
 * The id a route's pattern captures first, decoded, and the action it captures second, when
 * `path` is that route and the id is well-formed; `undefined` otherwise (a 404 then).
 */
function routeOf(pattern: RegExp, path: string): { id: string; action?: string } | undefined {
  const match = pattern.exec(path);
  const id = match ? safeDecode(match[1] as string) : undefined;
  if (!match || id === undefined || !ID.test(id)) return undefined;
  return match[2] === undefined ? { id } : { id, action: match[2] };
}

/** A route asked with the other method: 405, naming the one it takes. */
function wrongMethod(response: ServerResponse, allowed: 'GET' | 'POST'): void {
  response.setHeader('allow', allowed);
  sendJson(response, 405, { error: { code: 'TOOLNEXUS_INBOX_METHOD', message: `use ${allowed}` } });
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
