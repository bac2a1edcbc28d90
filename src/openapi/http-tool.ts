import type { ApprovalByArgs, ApprovalPolicy, ClassType } from '../decorators/types';
import { InvalidArgumentError } from '../errors';
import { failure, success } from '../results/helpers';
import type { JsonSchema } from '../results/json-schema';
import type { ToolResult } from '../results/wire';
import type { ReceiptInit, ToolContext } from '../toolkit/context';
import { defineTool, type FunctionTool } from '../toolkit/define-tool';
import { HttpToolClient } from './client';
import { masked, resolveHeaders, type EnvSource } from './secrets';

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Options of {@link httpTool}: upstream toolnexus's `httpTool` (SPEC §7), with a DTO or a JSON Schema for its arguments. */
export interface HttpToolSpec<TArgs extends object = Record<string, unknown>> {
  name: string;
  description: string;
  method: string;
  /** The URL; each `{name}` is filled from the argument of that name (URL-encoded) and taken out of the rest. */
  url: string;
  /** The arguments' DTO class (validated by the Toolkit, schema from its decorators)... */
  args?: ClassType<TArgs>;
  /** ...or their JSON Schema. Neither: the tool takes no arguments. */
  inputSchema?: JsonSchema;
  /** Static headers; `${NAME}` in a value is read from `env` at call time and masked in everything the tool returns. */
  headers?: Readonly<Record<string, string>>;
  /** Arguments sent in the query string for a method with a body (for GET, HEAD and DELETE all are). */
  query?: readonly string[];
  /** Asks a human before the request is sent: a declared approval, as `@Tool({ approval })` takes it. Default: never. */
  approval?: boolean | ApprovalPolicy | ApprovalByArgs;
  /** Per request, redirects included. Default 30 000 ms. */
  timeoutMs?: number;
  /** The largest response body read. Default 1 MiB. */
  maxResponseBytes?: number;
  /** The largest request body sent. Default 1 MiB. */
  maxRequestBytes?: number;
  /** `'text'` (default): the body as it came; `'json'`: re-serialized when it parses; `'status+text'`: the status on a line first. */
  resultMode?: 'text' | 'json' | 'status+text';
  /** Where `${NAME}` is read from. Default `process.env`. */
  env?: EnvSource;
  /**
   * The header that carries `ctx.idempotencyKey` on every request but GET, HEAD and OPTIONS, so
   * a replay, a takeover or a recovery of the call is the same request to the API (docs/tools.md,
   * "Idempotency keys and receipts"). Default `Idempotency-Key` (Stripe's, Adyen's, the IETF
   * draft's); `PayPal-Request-Id` for PayPal; `false` sends none.
   */
  idempotencyHeader?: string | false;
  /** Running a call again has no further effect (the API honours the idempotency header): the takeover rule replays it. Default false. */
  idempotent?: boolean;
  /**
   * Reads a receipt out of the API's answer (any status), recorded with `ctx.receipt` when the
   * call runs under a claim: `({ json }) => ({ system: 'stripe', id: json.id, status: json.status })`.
   * `undefined` records none.
   */
  receipt?: (response: HttpReceiptSource) => ReceiptInit | undefined;
}

/** What {@link HttpToolSpec.receipt} reads: the request, and the answer with secrets masked. */
export interface HttpReceiptSource {
  method: string;
  url: string;
  status: number;
  text: string;
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  json: unknown;
}

/** The header an HTTP tool sends `ctx.idempotencyKey` in by default. */
export const DEFAULT_IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** What one call of an HTTP tool sends, once its arguments were split into path, query and body. */
export interface HttpCallPlan {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * A remote endpoint as a tool (docs/openapi.md, upstream SPEC §7): `{placeholders}` of the URL
 * filled from the arguments, the rest in the query (GET, HEAD, DELETE) or a JSON body, `${NAME}`
 * headers read at call time and never shown. A 2xx is the body as the result; any other status
 * the error result `HTTP <status>: <body>`, byte for byte upstream's.
 */
export function httpTool<TArgs extends object>(spec: HttpToolSpec<TArgs>): FunctionTool {
  const method = checkSpec(spec);
  const client = new HttpToolClient();
  const run = async (args: Record<string, unknown>, ctx?: ToolContext): Promise<ToolResult> => {
    const planned = refusedOr(() => plan(spec, method, args));
    return 'refused' in planned ? failure(planned.refused) : callHttp(client, planned, spec, ctx);
  };
  // A declared approval, as `@Tool({ approval })`: asked after the arguments are checked, under the
  // answer policy, grants and quorums like any other (docs/who-may-answer.md).
  const approval = spec.approval === true ? { prompt: `${method} ${spec.url}?` } : spec.approval || undefined;
  // Upstream allows an empty description; a Toolkit tool needs one, so the request stands in for it.
  const description = spec.description || `${method} ${spec.url}`;
  return spec.args !== undefined
    ? defineTool({
        name: spec.name,
        description,
        approval,
        idempotent: spec.idempotent === true,
        args: spec.args,
        run: (args: object, ctx) => run(Object.fromEntries(Object.entries(args)), ctx),
      })
    : defineTool({
        name: spec.name,
        description,
        approval,
        idempotent: spec.idempotent === true,
        inputSchema: spec.inputSchema ?? { type: 'object', properties: {} },
        run,
      });
}

/** Splits the arguments into the URL's placeholders, the query and the body. */
export function plan(spec: Pick<HttpToolSpec<object>, 'url' | 'query'>, method: string, args: Record<string, unknown>): HttpCallPlan {
  const rest: Record<string, unknown> = { ...args };
  let url = spec.url.replace(/\{([A-Za-z0-9_.-]+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return pathSegment(name, value);
  });
  const inQuery = new Set(spec.query ?? []);
  const everyArgInQuery = method === 'GET' || method === 'HEAD' || method === 'DELETE';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(rest)) {
    if (value === undefined || (!everyArgInQuery && !inQuery.has(name))) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, scalarText(item));
    delete rest[name];
  }
  const query = params.toString();
  if (query) url += (url.includes('?') ? '&' : '?') + query;
  const headers: Record<string, string> = {};
  if (everyArgInQuery || Object.keys(rest).length === 0) return { method, url, headers };
  headers['content-type'] = 'application/json';
  return { method, url, headers, body: JSON.stringify(rest) };
}

/** Sends a planned call and shapes the result as upstream does; secrets masked in every word of it. */
export async function callHttp(
  client: HttpToolClient,
  call: HttpCallPlan,
  spec: HttpToolSpec<object>,
  ctx: ToolContext | undefined,
): Promise<ToolResult> {
  const maxRequestBytes = spec.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  if (call.body !== undefined && Buffer.byteLength(call.body) > maxRequestBytes) {
    return failure(`the request body is larger than maxRequestBytes (${maxRequestBytes} bytes)`);
  }
  const resolved = resolveHeaders(spec.headers, spec.env);
  const headers = { ...resolved.headers, ...call.headers };
  const outcome = await client.send({
    method: call.method,
    url: call.url,
    headers: { ...headers, ...idempotencyHeaders(spec.idempotencyHeader, call.method, headers, ctx) },
    body: call.body,
    secretNames: resolved.secretNames,
    timeoutMs: ctx?.timeout ?? spec.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxResponseBytes: spec.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    signal: ctx?.signal,
  });
  if ('failed' in outcome) return failure(masked(`${call.method} ${new URL(call.url).origin}: ${outcome.failed}`, resolved.secrets));
  const text = masked(outcome.text, resolved.secrets);
  const receipt = spec.receipt?.({ method: call.method, url: call.url, status: outcome.status, text, json: parsedOrUndefined(text) });
  // Awaited before the result is shaped: under a claim it is in the store before anything else can fail.
  if (receipt !== undefined) await ctx?.receipt?.(receipt);
  if (outcome.status < 200 || outcome.status > 299) return failure(`HTTP ${outcome.status}: ${text}`, { status: outcome.status });
  const output = spec.resultMode === 'status+text' ? `${outcome.status}\n${text}` : spec.resultMode === 'json' ? reserialized(text) : text;
  return success(output, { status: outcome.status });
}

/**
 * The idempotency header of one request: `ctx.idempotencyKey` (read, and so computed, only here)
 * under `header`, for a method that changes something. None for GET, HEAD and OPTIONS, when
 * turned off, when the call has no key, or when the request already names that header (an
 * OpenAPI header parameter the model filled, a static header): what the caller set wins.
 */
function idempotencyHeaders(
  header: string | false | undefined,
  method: string,
  present: Record<string, string>,
  ctx: ToolContext | undefined,
): Record<string, string> {
  const name = header ?? DEFAULT_IDEMPOTENCY_HEADER;
  if (name === false || isSafeMethod(method)) return {};
  const lower = name.toLowerCase();
  if (Object.keys(present).some((given) => given.toLowerCase() === lower)) return {};
  const key = ctx?.idempotencyKey;
  return key === undefined ? {} : { [name]: key };
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function reserialized(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return JSON.stringify(text);
  }
}

function checkSpec(spec: HttpToolSpec<object>): string {
  if (typeof spec !== 'object' || spec === null)
    throw new InvalidArgumentError('httpTool needs a spec: { name, description, method, url }');
  const method = typeof spec.method === 'string' ? spec.method.toUpperCase() : '';
  if (!/^[A-Z]+$/.test(method))
    throw new InvalidArgumentError(`httpTool ${spec.name}: method must be an HTTP method, got ${String(spec.method)}`);
  let url: URL;
  try {
    url = new URL(spec.url.replace(/\{[^}]*\}/g, 'x'));
  } catch {
    throw new InvalidArgumentError(`httpTool ${spec.name}: url must be an absolute http(s) URL, got ${String(spec.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError(`httpTool ${spec.name}: url must be http(s), got ${url.protocol}`);
  if (spec.args !== undefined && spec.inputSchema !== undefined)
    throw new InvalidArgumentError(`httpTool ${spec.name}: give args or inputSchema, not both`);
  checkIdempotencyHeader(spec.name, spec.idempotencyHeader);
  return method;
}

/** Refuses an idempotency header that is not an HTTP header name (RFC 9110 token), where the tool is made. */
export function checkIdempotencyHeader(tool: string, header: string | false | undefined): void {
  if (header === undefined || header === false) return;
  if (typeof header !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header))
    throw new InvalidArgumentError(`${tool}: idempotencyHeader must be a header name or false, got ${JSON.stringify(header)}`);
}

/** True for a method that changes nothing (GET, HEAD, OPTIONS): OpenAPI import asks no approval for those by default. */
export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method.toUpperCase());
}

/**
 * A path parameter as it goes into its URL segment, percent-encoded (`/`, `?`, `#` and `%`
 * included), so it stays inside that segment. A value that is a dot segment (`.` or `..`, raw
 * or percent-encoded, however many times) is refused: URL resolution would take it as a step
 * up the path and send the request elsewhere (`/tenants/../files` is `/files`).
 * @throws {@link InvalidArgumentError} the value is a dot segment.
 */
export function pathSegment(name: string, value: unknown): string {
  let text = scalarText(value);
  // Decoded until nothing changes: a server that decodes once more must not see a dot segment either.
  for (let round = 0; round < 8 && !isDotSegment(text) && /%[0-9a-f]{2}/i.test(text); round++) {
    try {
      text = decodeURIComponent(text);
    } catch {
      break;
    }
  }
  if (isDotSegment(text))
    throw new InvalidArgumentError(`the path parameter ${name} may not be "." or ".." (raw or percent-encoded): the request was not sent`);
  return encodeURIComponent(scalarText(value));
}

function isDotSegment(text: string): boolean {
  return text === '.' || text === '..';
}

/** What `planned` returns, or the message of the {@link InvalidArgumentError} it threw (a refused argument). */
export function refusedOr<T>(planned: () => T): T | { refused: string } {
  try {
    return planned();
  } catch (error) {
    if (error instanceof InvalidArgumentError) return { refused: error.message };
    throw error;
  }
}

/** An argument as it goes into a URL: a scalar as written, anything else as JSON. */
export function scalarText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
      ? value.toString()
      : '';
}
