import 'reflect-metadata';
import { sensitivePropertiesOf } from '../decorators/sensitive.decorator';
import type { AnyClass } from '../decorators/types';
import { DtoRuleError } from '../errors';
import { MCP_HEADERS } from '../metadata/keys';
import type { JsonSchema } from '../results/json-schema';
import { MCP_HEADER_KEYWORD, mcpHeaders } from './mcp-headers';

/**
 * Gives each `@McpHeader` property its `x-mcp-header` (docs/mcp.md, "Header-mirrored
 * parameters"), refusing one validation never sees and one whose value is `@Sensitive`: a
 * header is seen, and often logged, by every proxy on the way.
 */
export function mirrorHeaders(dto: AnyClass, properties: Record<string, JsonSchema>): void {
  const sensitive = new Set(sensitivePropertiesOf(dto.prototype as object));
  for (const [key, header] of mcpHeadersOf(dto.prototype as object)) {
    const where = `${dto.name || '(anonymous class)'}.${key}`;
    const schema = properties[key];
    if (schema === undefined)
      throw new DtoRuleError(where, `${where} has @McpHeader but no class-validator decorator: add @IsString(), @IsInt() or @IsBoolean()`);
    schema[MCP_HEADER_KEYWORD] = header;
  }
  for (const key of sensitive) {
    const schema = properties[key];
    if (schema !== undefined && mcpHeaders({ properties: { [key]: schema } }).declarations.length > 0) {
      const where = `${dto.name || '(anonymous class)'}.${key}`;
      throw new DtoRuleError(
        where,
        `${where} is @Sensitive() and mirrored into an Mcp-Param header by @McpHeader, which every proxy on the way sees: drop one of them`,
      );
    }
  }
}

/**
 * The `@McpHeader`s of a whole DTO tree against SEP-2243's rules (an HTTP token, unique without
 * regard to case, on a string, integer or boolean outside arrays): refused here, at
 * registration, rather than left out by every client that lists the tool.
 */
export function checkHeaders(dto: AnyClass, schema: JsonSchema): void {
  const fault = mcpHeaders(schema).fault;
  if (fault === undefined) return;
  const name = dto.name || '(anonymous class)';
  throw new DtoRuleError(`${name}.${fault.slice(0, fault.indexOf(':'))}`, `${name}.${fault} (from @McpHeader)`);
}

/** Every `@McpHeader` property of a DTO prototype and its header name, parents' included (a child's own wins). */
export function mcpHeadersOf(prototype: object): ReadonlyMap<string, string> {
  const levels: object[] = [];
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) levels.unshift(p);
  const headers = new Map<string, string>();
  for (const level of levels) {
    const own = Reflect.getOwnMetadata(MCP_HEADERS, level) as ReadonlyMap<string, string> | undefined;
    if (own) for (const [key, name] of own) headers.set(key, name);
  }
  return headers;
}
