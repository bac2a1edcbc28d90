import type { StandardIssue, StandardSchemaV1, StandardSchemaWithJson } from '../decorators/standard-schema';
import { StandardSchemaError } from '../errors';
import { messageOf } from '../errors/message';
import type { JsonSchema } from '../results/json-schema';
import type { ArgumentsPlan, ParsedArguments } from './arguments';
import { DEFAULT_ARGUMENT_LIMITS, toPlainObject, type ArgumentLimits } from './plain-copy';
import { Problems } from './shape';

/** Whether `value` carries a Standard Schema's `~standard` (a zod, valibot or arktype schema, say; arktype's are functions). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const props = (value as Partial<StandardSchemaV1>)['~standard'];
  return typeof props === 'object' && props !== null;
}

/**
 * The plan of a tool whose `args` is a Standard Schema with JSON Schema. The one rule holds
 * as for a DTO: the schema the model is shown is the one asked of the schema here, once
 * (`draft-2020-12`; less its top-level `$schema`), and the arguments are validated by the
 * same schema's `validate`.
 * Throws {@link StandardSchemaError} for a schema that cannot say its JSON Schema.
 */
export function planForStandardSchema(schema: StandardSchemaV1): ArgumentsPlan {
  const props = schema['~standard'];
  const vendor = typeof props.vendor === 'string' ? props.vendor : 'unknown';
  if (props.version !== 1 || typeof props.validate !== 'function') {
    throw new StandardSchemaError(
      `args is not a Standard Schema V1 (vendor ${vendor}): it needs ~standard.version 1 and a validate function`,
    );
  }
  const converter = (props as Partial<StandardSchemaWithJson['~standard']>).jsonSchema;
  if (typeof converter?.input !== 'function') {
    throw new StandardSchemaError(
      `args is a Standard Schema (vendor ${vendor}) without ~standard.jsonSchema, so the model could not be shown what validation checks: ` +
        'use a schema library that implements Standard JSON Schema (zod 4, arktype 2.2, valibot through toStandardJsonSchema of @valibot/to-json-schema), or a DTO class',
    );
  }
  let json: unknown;
  try {
    json = converter.input({ target: 'draft-2020-12' });
  } catch (error) {
    throw new StandardSchemaError(`args (vendor ${vendor}) cannot be converted to JSON Schema draft 2020-12: ${messageOf(error)}`, {
      cause: error,
    });
  }
  if (typeof json !== 'object' || json === null || (json as JsonSchema).type !== 'object') {
    throw new StandardSchemaError(
      `args (vendor ${vendor}) must describe an object (JSON Schema type "object"), as a tool's arguments are one; it gives ${JSON.stringify(json)?.slice(0, 200)}`,
    );
  }
  // The dialect marker says nothing about which arguments pass, and some providers (Gemini) refuse the key.
  const { $schema: _dialect, ...shown } = json as JsonSchema & { $schema?: unknown };
  return new StandardArgumentsPlan(props.validate, shown);
}

class StandardArgumentsPlan implements ArgumentsPlan {
  constructor(
    private readonly check: StandardSchemaV1['~standard']['validate'],
    readonly schema: JsonSchema,
  ) {}

  async parse(raw: unknown, limits: ArgumentLimits = DEFAULT_ARGUMENT_LIMITS): Promise<ParsedArguments> {
    // The same bounds as a DTO's: size, depth, array length and no prototype-reaching keys, before the library walks them.
    const plain = toPlainObject(raw, limits);
    if (!plain.ok) return { ok: false, problem: plain.problem, issues: [{ path: '', message: plain.problem }] };
    let result: Awaited<ReturnType<typeof this.check>>;
    try {
      result = await this.check(plain.value);
    } catch (error) {
      // A validator that throws is the arguments' failure to the model, never a rejected execute.
      const problem = `validation failed: ${messageOf(error)}`;
      return { ok: false, problem, issues: [{ path: '', message: problem }] };
    }
    if (result.issues) {
      const problems = new Problems(limits.maxErrorCount);
      for (const issue of result.issues) problems.add(pathOf(issue), String(issue.message));
      if (problems.total === 0) problems.add('', 'invalid arguments');
      return { ok: false, problem: problems.text(), issues: problems.shown };
    }
    const value: unknown = result.value;
    // `run` takes an object; a schema that transforms the arguments into something else is the schema's mistake, said to the model.
    if (typeof value !== 'object' || value === null) {
      return {
        ok: false,
        problem: 'the arguments schema gave no object',
        issues: [{ path: '', message: 'the arguments schema gave no object' }],
      };
    }
    return { ok: true, value };
  }
}

/** An issue's path as the Toolkit writes paths: keys joined by dots (`items.0.sku`). */
export function pathOf(issue: StandardIssue): string {
  return (issue.path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.');
}
