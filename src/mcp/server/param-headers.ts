import type { IncomingHttpHeaders } from 'node:http';
import { mcpHeaders } from '../../schema/mcp-headers';

/** SEP-2243's wrapper of a header value that could not travel as it is (non-ASCII, surrounding spaces, control characters). */
const PREFIX = '=?base64?';
const SUFFIX = '?=';
/** Canonical Base64: whole quanta, padding only where it belongs. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * Why a 2026-07-28 `tools/call` over HTTP is refused before it is served (SEP-2243, "Server
 * behavior for custom headers"; docs/mcp.md, "Header-mirrored parameters"): for each parameter
 * of the tool declared `x-mcp-header` whose argument is given (neither absent nor `null`), the
 * `Mcp-Param-<name>` header must be there and, once a `=?base64?…?=` value is decoded, equal the
 * argument (an integer compared as a number, a boolean as `true`/`false`); a malformed Base64
 * value is refused too. A header whose argument is not given is ignored. The message names the
 * header and the parameter, never a value: the argument may be a secret the header should not
 * have carried, and the header's value is the client's own anyway. `-32020`, HTTP 400.
 */
export function paramHeaderMismatch(
  body: unknown,
  headers: IncomingHttpHeaders,
  inputSchemaOf: (tool: string) => unknown,
): { message: string; id: string | number | null } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { method, params, id } = body as { method?: unknown; params?: { name?: unknown; arguments?: unknown }; id?: unknown };
  if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined;
  const schema = inputSchemaOf(params.name);
  if (schema === undefined) return undefined;
  const refuse = (message: string) => ({ message, id: typeof id === 'string' || typeof id === 'number' ? id : null });
  for (const { path, header, type } of mcpHeaders(schema).declarations) {
    const value = valueAt(params.arguments, path);
    const expected = textOf(value);
    // No argument, or one no header can carry (an object: the arguments' validation refuses it).
    if (expected === undefined) continue;
    const name = `Mcp-Param-${header}`;
    const parameter = path.join('.');
    const raw = headers[name.toLowerCase()];
    const given = Array.isArray(raw) ? raw.join(', ') : raw;
    if (given === undefined) return refuse(`the ${name} header is missing, and the argument ${parameter} is given`);
    const decoded = decode(given.trim());
    if (decoded === undefined) return refuse(`the ${name} header carries invalid Base64 in its =?base64?...?= value`);
    const same =
      (type === 'integer' || type === 'number') && typeof value === 'number' && DECIMAL.test(decoded)
        ? Number(decoded) === value
        : decoded === expected;
    if (!same) return refuse(`the ${name} header does not match the argument ${parameter}`);
  }
  return undefined;
}

/** The header text of an argument, as a client writes it; `undefined` for no value or one no header carries. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A header value as its argument: a `=?base64?…?=` one decoded as UTF-8 (`undefined` when malformed), any other as it is. */
function decode(value: string): string | undefined {
  if (!(value.startsWith(PREFIX) && value.endsWith(SUFFIX) && value.length >= PREFIX.length + SUFFIX.length)) return value;
  const payload = value.slice(PREFIX.length, value.length - SUFFIX.length);
  if (!BASE64.test(payload)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(payload, 'base64'));
  } catch {
    return undefined;
  }
}
