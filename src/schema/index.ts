export type { JsonSchema } from '../results/json-schema';
export { schemaForClass } from './generate';
