/**
 * The reflect-metadata keys the library's decorators write, in one place; the Toolkit and
 * the schema generator only read them. Caches readers build belong to the readers.
 */
export const TOOL_OPTIONS = Symbol.for('toolnexus:tool-options');
export const PROPERTY_DESCRIPTION = Symbol.for('toolnexus:property-description');
export const DESCRIBED_PROPERTIES = Symbol.for('toolnexus:described-properties');
/** Per class: for each `@Describe`d property, how many validated properties were declared before it. */
export const DESCRIBED_POSITIONS = Symbol.for('toolnexus:described-positions');
/** Per prototype: its own `@Sensitive` properties, in declaration order. */
export const SENSITIVE_PROPERTIES = Symbol.for('toolnexus:sensitive-properties');
/** Per class: the options of its `@Resource` (toolnexus-ts/mcp). */
export const RESOURCE_OPTIONS = Symbol.for('toolnexus:resource-options');
/** Per class: the options of its `@ResourceTemplate` (toolnexus-ts/mcp). */
export const RESOURCE_TEMPLATE_OPTIONS = Symbol.for('toolnexus:resource-template-options');
/** Per class: the options of its `@Prompt` (toolnexus-ts/mcp). */
export const PROMPT_OPTIONS = Symbol.for('toolnexus:prompt-options');
/** Per prototype: its own `@McpHeader` properties and their header names (SEP-2243's `x-mcp-header`). */
export const MCP_HEADERS = Symbol.for('toolnexus:mcp-headers');
