/**
 * Every reflect-metadata key the library uses, in one place. Decorators write them;
 * the Toolkit and the schema generator read them.
 */
export const TOOL_OPTIONS = Symbol.for('toolnexus:tool-options');
export const PROPERTY_DESCRIPTION = Symbol.for('toolnexus:property-description');
export const DESCRIBED_PROPERTIES = Symbol.for('toolnexus:described-properties');
/** Per-class cache of the compiled argument schema and parser (computed once per class). */
export const ARGUMENTS_PLAN = Symbol.for('toolnexus:arguments-plan');
