import 'reflect-metadata';
import { MCP_HEADERS } from '../../metadata/keys';

/**
 * Mirrors a DTO property into an HTTP header for MCP clients (SEP-2243, MCP 2026-07-28): the
 * tool's JSON Schema gives the property `x-mcp-header: name`, a client calling over Streamable
 * HTTP sends its value as `Mcp-Param-<name>` beside the body, so a gateway or load balancer can
 * route on it without reading JSON-RPC, and `serveMcp` refuses a call whose header is missing or
 * does not match the argument (HTTP 400, `-32020`). Only for a string, integer or boolean
 * property outside arrays (`@IsString()`, `@IsInt()`, `@IsBoolean()`; a nested DTO's property
 * too); `name` is an HTTP token, unique in the tool without regard to case. Refused on a
 * `@Sensitive()` property: a header is seen, and often logged, by every proxy on the way.
 * Everywhere else (models, the 2025-11-25 era, stdio) it is only a schema annotation.
 *
 * @example
 * ```ts
 * class QueryArgs {
 *   @IsString() @McpHeader('Region') region!: string
 *   @IsString() query!: string
 * }
 * ```
 */
export function McpHeader(name: string): PropertyDecorator {
  return (target, propertyKey) => {
    const own = (Reflect.getOwnMetadata(MCP_HEADERS, target) as ReadonlyMap<string, string> | undefined) ?? new Map<string, string>();
    Reflect.defineMetadata(MCP_HEADERS, new Map([...own, [String(propertyKey), name]]), target);
  };
}
