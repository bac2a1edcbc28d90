import { mcpHeadersOf } from '../decorators/mcp-header.decorator';
import { sensitivePropertiesOf } from '../decorators/sensitive.decorator';
import type { AnyClass } from '../decorators/types';
import { DtoRuleError } from '../errors';
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
