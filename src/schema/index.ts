export type { JsonSchema } from './json-schema';
export { schemaForClass } from './generate';
