/**
 * SEP-2243 (MCP 2026-07-28): a tool parameter annotated `x-mcp-header` is mirrored into an
 * `Mcp-Param-{Name}` HTTP header, and a client over Streamable HTTP must leave out a tool whose
 * annotations break the rules: the name a non-empty RFC 9110 token, unique without regard to
 * case, on a string, integer or boolean property reached through `properties` alone. The SDK
 * does this only on the listing it walks itself; the source lists page by page under its own
 * bounds, so it applies the same rules here.
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);
const KEY = 'x-mcp-header';
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

/** Why a tool's input schema declares `x-mcp-header` wrongly, or `undefined` when it does not. */
export function headerFault(inputSchema: unknown): string | undefined {
  const seen = new Set<string>();
  const visit = (node: unknown, path: string[], reachable: boolean): string | undefined => {
    if (typeof node !== 'object' || node === null) return undefined;
    const schema = node as Record<string, unknown>;
    const where = path.length > 0 ? path.join('.') : '(root)';
    if (KEY in schema) {
      const name = schema[KEY];
      if (!reachable || path.length === 0) return `${where}: x-mcp-header is allowed only on a property reached through properties`;
      if (typeof name !== 'string' || !TOKEN.test(name)) return `${where}: x-mcp-header must be a non-empty token`;
      if (typeof schema.type !== 'string' || !HEADER_TYPES.has(schema.type))
        return `${where}: x-mcp-header is allowed on a string, integer or boolean`;
      if (seen.has(name.toLowerCase())) return `${where}: x-mcp-header ${name} is declared twice`;
      seen.add(name.toLowerCase());
    }
    const properties = schema.properties;
    if (typeof properties === 'object' && properties !== null)
      for (const [key, child] of Object.entries(properties)) {
        const fault = visit(child, [...path, key], reachable);
        if (fault !== undefined) return fault;
      }
    for (const keyword of ELSEWHERE) {
      const sub = schema[keyword];
      // A keyword's value is a schema, a list of them, or a map of them (additionalProperties, $defs...): each is visited.
      const values: unknown[] = typeof sub === 'object' && sub !== null ? Object.values(sub) : [];
      const branches: unknown[] = Array.isArray(sub) ? values : values.length > 0 ? [sub, ...values] : [];
      for (const branch of branches) {
        const fault = visit(branch, [...path, `<${keyword}>`], false);
        if (fault !== undefined) return fault;
      }
    }
    return undefined;
  };
  return visit(inputSchema, [], true);
}
