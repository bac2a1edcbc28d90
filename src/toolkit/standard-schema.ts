import type { ClassType } from '../decorators/types';
import type { StandardIssue, StandardJsonSchemaOptions, StandardResult, StandardSchemaWithJson } from '../decorators/standard-schema';
import { InvalidArgumentError, ToolRegistrationError } from '../errors';
import type { JsonSchema } from '../results/json-schema';
import { planForClass, type ArgumentsPlan, type ParsedArguments } from './arguments';

/** The vendor name toolnexus-ts's Standard Schemas carry. */
const VENDOR = 'toolnexus';

/**
 * A DTO class as a Standard Schema V1 with its JSON Schema (`@standard-schema/spec` 1.1), to
 * hand to any library that takes one: the MCP SDK's `registerTool`, the AI SDK's
 * `tool({ inputSchema })`. `validate` is the Toolkit's own argument validation (the same rules
 * and messages, the same schema cache): synchronous unless the DTO has an async constraint; its
 * value is the DTO instance `run` would get (unknown properties stripped, nested DTOs built);
 * each issue has the failing property's path. `jsonSchema.input` is exactly the schema the
 * model is shown (`schemaForClass`), for the targets `draft-2020-12` and `draft-07` (the same
 * schema: it uses only keywords both read alike) and `openapi-3.0` (`const` as a one-value
 * `enum`, an exclusive bound as a boolean beside its `minimum`/`maximum`); any other target
 * throws {@link InvalidArgumentError}. `jsonSchema.output` is the same schema: the instance
 * has the shape of its arguments.
 *
 * @example
 * ```ts
 * const schema = standardSchemaOf(WeatherArgs)
 * const result = schema['~standard'].validate({ city: 'Oslo' }) // { value: WeatherArgs { city: 'Oslo' } }
 * ```
 */
export function standardSchemaOf<T extends object>(dto: ClassType<T>): StandardSchemaWithJson<Record<string, unknown>, T> {
  if (typeof dto !== 'function') throw new ToolRegistrationError(`standardSchemaOf takes a DTO class, got ${typeof dto}`);
  return standardSchemaOfPlan<T>(planForClass(dto));
}

/** The Standard Schema of an argument plan: a DTO's, or a registered tool's under its Toolkit's bounds. */
export function standardSchemaOfPlan<T extends object>(plan: ArgumentsPlan): StandardSchemaWithJson<Record<string, unknown>, T> {
  const toResult = (parsed: ParsedArguments): StandardResult<T> =>
    parsed.ok ? { value: parsed.value as T } : { issues: issuesOf(parsed.issues ?? [{ path: '', message: parsed.problem }]) };
  const { parseSync } = plan;
  const jsonSchema = (options: StandardJsonSchemaOptions): Record<string, unknown> => forTarget(plan.schema, options);
  return {
    '~standard': {
      version: 1,
      vendor: VENDOR,
      validate: parseSync ? (value) => toResult(parseSync(value)) : async (value) => toResult(await plan.parse(value)),
      jsonSchema: { input: jsonSchema, output: jsonSchema },
    },
  };
}

function issuesOf(problems: ReadonlyArray<{ path: string; message: string }>): StandardIssue[] {
  return problems.map(({ path, message }) =>
    path === '' ? { message } : { message, path: path.split('.').map((key) => (/^(0|[1-9]\d*)$/.test(key) ? Number(key) : key)) },
  );
}

/** The schema in the asked dialect, as a fresh copy: a caller may change it without touching the cached one. */
function forTarget(schema: JsonSchema, options: StandardJsonSchemaOptions): Record<string, unknown> {
  const target = (options as Partial<StandardJsonSchemaOptions> | undefined)?.target;
  if (target === 'draft-2020-12' || target === 'draft-07') return structuredClone(schema);
  if (target === 'openapi-3.0') return toOpenApi30(schema);
  throw new InvalidArgumentError(
    `toolnexus cannot give its JSON Schema for the target ${JSON.stringify(target)}: use "draft-2020-12", "draft-07" or "openapi-3.0"`,
  );
}

/**
 * OpenAPI 3.0's schema object (JSON Schema draft 4 with changes) for the keywords a DTO's schema
 * uses that it spells otherwise: no `const`, and `exclusiveMinimum`/`exclusiveMaximum` are booleans.
 */
function toOpenApi30(schema: JsonSchema): JsonSchema {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && typeof value === 'object' && value !== null) {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, toOpenApi30(v)]));
    } else if (key === 'items' && typeof value === 'object' && value !== null) {
      out.items = toOpenApi30(value as JsonSchema);
    } else if (key === 'const') {
      out.enum = [value];
    } else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
      const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
      const kept = (schema as Record<string, unknown>)[bound];
      // Both given: the stricter one wins, as in JSON Schema, where both apply.
      const stricter = typeof kept !== 'number' || (bound === 'minimum' ? value >= kept : value <= kept);
      if (stricter) {
        out[bound] = value;
        out[key] = true;
      }
    } else if ((key === 'minimum' || key === 'maximum') && out[key] !== undefined) {
      continue; // an exclusive bound already set it
    } else {
      out[key] = structuredClone(value);
    }
  }
  return out;
}
