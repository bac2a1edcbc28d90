import { messageOf } from '../errors/message';
import { failure, pending, sanitizeName } from '../results/helpers';
import type { JsonSchema } from '../results/json-schema';
import type { ToolResult } from '../results/wire';
import { defineTool, type FunctionTool } from '../toolkit/define-tool';
import { HttpToolClient } from './client';
import { OpenApiDocumentError } from './errors';
import {
  callHttp,
  checkIdempotencyHeader,
  isSafeMethod,
  pathSegment,
  refusedOr,
  scalarText,
  type HttpReceiptSource,
  type HttpToolSpec,
} from './http-tool';
import type { ReceiptInit } from '../toolkit/context';
import { ajvFor, openApiParser, yamlParser } from './peers';
import type { EnvSource } from './secrets';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const DEFAULT_MAX_DOCUMENT_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_OPERATIONS = 500;
/** The keywords of a 3.1 schema's own resource scoping, which a document-local import does not follow. */
const SCOPING = new Set(['$id', '$anchor', '$dynamicAnchor', '$vocabulary', '$schema', '$comment']);

/** One operation of the document, as {@link OpenApiToolsOptions.include} and `approval` see it. */
export interface OpenApiOperation {
  /** The tool's name: the `operationId`, sanitized, or `method_path` without one. */
  name: string;
  method: string;
  path: string;
  operationId?: string;
}

/** Options of {@link openApiTools}. */
export interface OpenApiToolsOptions {
  /** Which operations become tools: names, or a test. Default: all. */
  include?: readonly string[] | ((operation: OpenApiOperation) => boolean);
  /** The API's base URL. Default: the document's first `servers` URL (it must then be absolute). */
  baseUrl?: string;
  /** Headers of every request (`${NAME}` read from `env` at call time, masked everywhere). */
  headers?: Readonly<Record<string, string>>;
  /** Which calls ask a human first. Default: every POST, PUT, PATCH and DELETE; `false`: none. */
  approval?: boolean | ((operation: OpenApiOperation) => boolean);
  timeoutMs?: number;
  maxResponseBytes?: number;
  maxRequestBytes?: number;
  /** The largest document read, in bytes. Default 5 MiB. */
  maxDocumentBytes?: number;
  /** The most operations made into tools. Default 500. */
  maxOperations?: number;
  env?: EnvSource;
  /** The header `ctx.idempotencyKey` goes in on every POST, PUT, PATCH and DELETE: {@link HttpToolSpec.idempotencyHeader}. Default `Idempotency-Key`; `false` sends none. */
  idempotencyHeader?: string | false;
  /**
   * Which operations may run again after a crash with no further effect: an API that honours the
   * idempotency header makes a POST one. The takeover rule then replays such a call with the
   * same key instead of asking a person (docs/suspension.md). Default: none.
   */
  idempotent?: boolean | ((operation: OpenApiOperation) => boolean);
  /** Reads a receipt out of an operation's answer, recorded with `ctx.receipt`: {@link HttpToolSpec.receipt}. */
  receipt?: (response: HttpReceiptSource, operation: OpenApiOperation) => ReceiptInit | undefined;
  /** Told of what the import leaves out (a non-JSON body, a cookie parameter, a `$ref` outside the document). Default: `console.warn`. */
  onWarning?: (message: string) => void;
}

type Json = Record<string, unknown>;
type ParamIn = 'path' | 'query' | 'header';

/**
 * One tool per operation of an OpenAPI 3.0 or 3.1 document (an object, or its JSON or YAML
 * text): the arguments are the operation's path, query and header parameters and its JSON
 * request body (as `body`), checked with ajv against the very schema the model is shown before
 * anything is sent. `$ref`s are resolved inside the document by @readme/openapi-parser (never
 * fetched from a file or URL). POST, PUT, PATCH and DELETE ask a human first unless `approval`
 * says otherwise. Needs the optional peers `@readme/openapi-parser`, `ajv` and `yaml`.
 */
export async function openApiTools(document: string | object, options: OpenApiToolsOptions = {}): Promise<FunctionTool[]> {
  const warn = options.onWarning ?? ((message: string) => console.warn(`[toolnexus-ts] ${message}`));
  const parsed = scrub(readDocument(document, options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES), warn);
  const version = typeof parsed.openapi === 'string' && parsed.openapi.startsWith('3.1') ? '3.1' : '3.0';
  if (typeof parsed.openapi !== 'string' || !parsed.openapi.startsWith('3.'))
    throw new OpenApiDocumentError('openApiTools reads OpenAPI 3.0 and 3.1 documents (no "openapi: 3.x" here)');
  let resolved: Json;
  try {
    resolved = await openApiParser().dereference(parsed as never, {
      resolve: { external: false },
      dereference: { circular: 'ignore' },
    });
  } catch (error) {
    throw new OpenApiDocumentError(`the OpenAPI document's $refs do not resolve: ${messageOf(error)}`, { cause: error });
  }
  const baseUrl = baseUrlOf(resolved, options.baseUrl);
  const Ajv = ajvFor(version);
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, logger: false });
  const client = new HttpToolClient();
  checkIdempotencyHeader('openApiTools', options.idempotencyHeader);
  const { receipt } = options;
  const tools: FunctionTool[] = [];
  for (const [path, item] of Object.entries((resolved.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (operation === undefined) continue;
      const described = describe(method, path, operation);
      if (!included(described, options.include)) continue;
      if (tools.length >= (options.maxOperations ?? DEFAULT_MAX_OPERATIONS))
        throw new OpenApiDocumentError(
          `the document has more than ${options.maxOperations ?? DEFAULT_MAX_OPERATIONS} operations (maxOperations)`,
        );
      const shape = argumentsOf(
        described,
        [...asArray(item.parameters), ...asArray(operation.parameters)],
        operation.requestBody as Json | undefined,
        version,
        warn,
      );
      const validate = ajv.compile(shape.schema);
      const spec: HttpToolSpec<object> = {
        name: described.name,
        description: '',
        method: described.method,
        url: baseUrl + path,
        headers: options.headers,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes,
        maxRequestBytes: options.maxRequestBytes,
        env: options.env,
        idempotencyHeader: options.idempotencyHeader,
        ...(receipt ? { receipt: (response: HttpReceiptSource) => receipt(response, described) } : {}),
      };
      const asks =
        options.approval === undefined
          ? !isSafeMethod(described.method)
          : typeof options.approval === 'function'
            ? options.approval(described)
            : options.approval;
      tools.push(
        defineTool({
          name: described.name,
          description: descriptionOf(described, operation),
          inputSchema: shape.schema,
          idempotent: typeof options.idempotent === 'function' ? options.idempotent(described) : options.idempotent === true,
          run: (args, ctx): ToolResult | Promise<ToolResult> => {
            if (!validate(args))
              return failure(`invalid arguments for ${described.name}: ${ajv.errorsText(validate.errors, { dataVar: 'args' })}`);
            if (asks && !ctx?.answer)
              return pending({
                kind: 'approval',
                prompt: `${described.method} ${path} (${described.name})?`,
                data: { tool: described.name, method: described.method, path },
              });
            const planned = refusedOr(() => shape.plan(args, baseUrl + path));
            return 'refused' in planned ? failure(planned.refused) : callHttp(client, planned, spec, ctx);
          },
        }),
      );
    }
  }
  return tools;
}

function readDocument(document: string | object, maxBytes: number): Json {
  if (typeof document === 'object' && document !== null) return structuredClone(document) as Json;
  if (typeof document !== 'string')
    throw new OpenApiDocumentError('openApiTools takes an OpenAPI document: an object, or its JSON or YAML text');
  if (Buffer.byteLength(document) > maxBytes)
    throw new OpenApiDocumentError(`the OpenAPI document is larger than maxDocumentBytes (${maxBytes} bytes)`);
  try {
    const value = document.trimStart().startsWith('{')
      ? (JSON.parse(document) as unknown)
      : yamlParser().parse(document, { maxAliasCount: 100 });
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Json;
  } catch (error) {
    if (error instanceof Error && error.name === 'MissingPeerError') throw error;
    throw new OpenApiDocumentError(`the OpenAPI document is neither JSON nor YAML: ${messageOf(error)}`, { cause: error });
  }
  throw new OpenApiDocumentError('the OpenAPI document is not an object');
}

/** The document without 3.1's schema-resource scoping, and without `$ref`s that leave it (told): what resolves inside it only. */
function scrub(node: Json, warn: (message: string) => void): Json {
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const out: Json = {};
    for (const [key, child] of Object.entries(value as Json)) {
      if (SCOPING.has(key)) continue;
      if (key === '$ref' && (typeof child !== 'string' || !child.startsWith('#/'))) {
        warn(`a $ref to ${JSON.stringify(child)} points outside the document: that schema accepts anything`);
        continue;
      }
      out[key] = walk(child);
    }
    return out;
  };
  return walk(node) as Json;
}

function baseUrlOf(document: Json, given: string | undefined): string {
  const url = given ?? (asArray(document.servers)[0] as Json | undefined)?.url;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
    throw new OpenApiDocumentError(`openApiTools needs an absolute baseUrl: the document's first server is ${JSON.stringify(url ?? null)}`);
  }
  return url.replace(/\/+$/, '');
}

function describe(method: string, path: string, operation: Json): OpenApiOperation {
  const operationId = typeof operation.operationId === 'string' ? operation.operationId : undefined;
  const name = sanitizeName(operationId ?? `${method}_${path.replace(/^\//, '')}`).slice(0, 64);
  return { name, method: method.toUpperCase(), path, operationId };
}

function included(operation: OpenApiOperation, include: OpenApiToolsOptions['include']): boolean {
  if (include === undefined) return true;
  if (typeof include === 'function') return include(operation);
  return include.includes(operation.name) || (operation.operationId !== undefined && include.includes(operation.operationId));
}

function descriptionOf(operation: OpenApiOperation, source: Json): string {
  const words = [source.summary, source.description].filter((part): part is string => typeof part === 'string' && part.trim() !== '');
  return words.length > 0
    ? [...new Set(words.map((part) => part.trim()))].join('\n\n').slice(0, 1024)
    : `${operation.method} ${operation.path}`;
}

/** The arguments' schema, and how a call's arguments become its request. */
function argumentsOf(
  operation: OpenApiOperation,
  parameters: unknown[],
  requestBody: Json | undefined,
  version: '3.0' | '3.1',
  warn: (message: string) => void,
) {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const where = new Map<string, ParamIn>();
  for (const raw of parameters) {
    const parameter = raw as Json;
    const name = parameter.name;
    const place = parameter.in;
    if (typeof name !== 'string') continue;
    if (place !== 'path' && place !== 'query' && place !== 'header') {
      warn(`${operation.name}: the ${String(place)} parameter ${name} is left out`);
      continue;
    }
    const schema = { ...normalized((parameter.schema ?? {}) as Json, version) };
    if (typeof parameter.description === 'string' && schema.description === undefined) schema.description = parameter.description;
    properties[name] = schema;
    where.set(name, place);
    if (parameter.required === true || place === 'path') required.push(name);
  }
  const content = requestBody?.content as Record<string, Json> | undefined;
  const json = content?.['application/json'] ?? Object.entries(content ?? {}).find(([type]) => /\+json$/.test(type))?.[1];
  if (json !== undefined) {
    properties.body = normalized((json.schema ?? {}) as Json, version);
    if (requestBody?.required === true) required.push('body');
  } else if (content !== undefined) {
    warn(`${operation.name}: its request body is not JSON (${Object.keys(content).join(', ')}), so it sends none`);
  }
  const schema: JsonSchema = { type: 'object', properties, required: [...new Set(required)], additionalProperties: false };
  return {
    schema,
    plan(args: Record<string, unknown>, urlTemplate: string) {
      const headers: Record<string, string> = {};
      const params = new URLSearchParams();
      const url = urlTemplate.replace(/\{([^}]+)\}/g, (_, name: string) => pathSegment(name, args[name]));
      for (const [name, place] of where) {
        const value = args[name];
        if (value === undefined || place === 'path') continue;
        if (place === 'header') headers[name] = scalarText(value);
        else for (const item of Array.isArray(value) ? value : [value]) params.append(name, scalarText(item));
      }
      const query = params.toString();
      const body = args.body === undefined ? undefined : JSON.stringify(args.body);
      if (body !== undefined) headers['content-type'] = 'application/json';
      return { method: operation.method, url: query ? `${url}?${query}` : url, headers, body };
    },
  };
}

/** A 3.0 schema as JSON Schema: `nullable: true` becomes a type that admits null (3.1 schemas are JSON Schema already). */
function normalized(schema: Json, version: '3.0' | '3.1'): Json {
  if (version === '3.1') return schema;
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const out: Json = {};
    for (const [key, child] of Object.entries(value as Json)) if (key !== 'nullable') out[key] = walk(child);
    const node = value as Json;
    if (node.nullable === true && typeof node.type === 'string') out.type = [node.type, 'null'];
    return out;
  };
  return walk(schema) as Json;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
