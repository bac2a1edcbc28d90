/**
 * SEP-2243 (MCP 2026-07-28): a tool parameter whose schema carries `x-mcp-header: Name` is
 * mirrored by the client into an `Mcp-Param-Name` HTTP header, so a gateway can route on it
 * without reading the body. The rules on the annotation, read in one place for the three that
 * need them: the DTO schema generator (a `@McpHeader` that breaks them is refused at
 * registration), `McpToolSource` (a remote tool that breaks them is left out) and `serveMcp`
 * (which checks each header against its argument).
 */

/** The JSON Schema keyword of a header-mirrored parameter. */
export const MCP_HEADER_KEYWORD = 'x-mcp-header';

/** RFC 9110 `token`: no space, control character or delimiter. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas are not reached through `properties` alone: an annotation under them is malformed. */
const ELSEWHERE = [
  'items',
  'prefixItems',
  'additionalProperties',
  'patternProperties',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
  'dependentSchemas',
  'contains',
];

/** One header-mirrored parameter: where its value is in the arguments, and its header's name. */
export interface McpHeaderDeclaration {
  /** The property names from the arguments' root down to the parameter. */
  path: readonly string[];
  /** The name after `Mcp-Param-`, as the schema spells it. */
  header: string;
  /** The parameter's JSON Schema type (`string`, `integer` or `boolean` when well-formed). */
  type: string | undefined;
}

/** What {@link mcpHeaders} finds in an input schema. */
export interface McpHeaderScan {
  /** Every annotation reached through `properties`, in schema order. */
  declarations: McpHeaderDeclaration[];
  /** Why the annotations break the rules (the first fault), or `undefined` when they do not. */
  fault?: string;
}

/**
 * The `x-mcp-header` annotations of a tool's input schema and the first rule they break: a
 * name is a non-empty RFC 9110 token, unique without regard to case, on a string, integer or
 * boolean property reached through `properties` alone.
 */
export function mcpHeaders(inputSchema: unknown): McpHeaderScan {
  const declarations: McpHeaderDeclaration[] = [];
  const seen = new Set<string>();
  let fault: string | undefined;
  const visit = (node: unknown, path: string[], reachable: boolean): void => {
    if (typeof node !== 'object' || node === null) return;
    const schema = node as Record<string, unknown>;
    const where = path.length > 0 ? path.join('.') : '(root)';
    if (MCP_HEADER_KEYWORD in schema) {
      const name = schema[MCP_HEADER_KEYWORD];
      const type = typeof schema.type === 'string' ? schema.type : undefined;
      if (!reachable || path.length === 0) fault ??= `${where}: x-mcp-header is allowed only on a property reached through properties`;
      else if (typeof name !== 'string' || !TOKEN.test(name)) fault ??= `${where}: x-mcp-header must be a non-empty token`;
      else {
        if (type === undefined || !HEADER_TYPES.has(type)) fault ??= `${where}: x-mcp-header is allowed on a string, integer or boolean`;
        if (seen.has(name.toLowerCase())) fault ??= `${where}: x-mcp-header ${name} is declared twice`;
        seen.add(name.toLowerCase());
        declarations.push({ path, header: name, type });
      }
    }
    const properties = schema.properties;
    if (typeof properties === 'object' && properties !== null)
      for (const [key, child] of Object.entries(properties)) visit(child, [...path, key], reachable);
    for (const keyword of ELSEWHERE) {
      const sub = schema[keyword];
      // A keyword's value is a schema, a list of them, or a map of them (additionalProperties, $defs...): each is visited.
      const values: unknown[] = typeof sub === 'object' && sub !== null ? Object.values(sub) : [];
      const branches: unknown[] = Array.isArray(sub) ? values : values.length > 0 ? [sub, ...values] : [];
      for (const branch of branches) visit(branch, [...path, `<${keyword}>`], false);
    }
  };
  visit(inputSchema, [], true);
  return fault === undefined ? { declarations } : { declarations, fault };
}
