import type { JsonSchema } from '../results/json-schema';
import { isNestedObject, Oversized } from './plain-copy';

/** One failure of a call: where (a dotted path, empty for the arguments as a whole) and what. */
export interface Problem {
  readonly path: string;
  readonly message: string;
}

/** The failures of one call: the first `max` kept, the rest only counted. */
export class Problems {
  readonly shown: Problem[] = [];
  total = 0;
  constructor(private readonly max: number) {}

  add(path: string, message: string): void {
    this.total++;
    if (this.shown.length < this.max) this.shown.push({ path, message });
  }

  text(): string {
    const lines = this.shown.map(({ path, message }) => (path === '' ? message : `${path}: ${message}`));
    const more = this.total - this.shown.length;
    return more > 0 ? `${lines.join('; ')}; … and ${more.toLocaleString('en-US')} more` : lines.join('; ');
  }
}

/**
 * What class-validator cannot see or would see too late, checked along the schema before
 * class-transformer builds instances: `@ValidateNested()` accepts an array where one object
 * is declared (it validates each element) and lets a missing nested object through; and an
 * array longer than its `maxItems` is refused without walking its items. Each failure is
 * reported once and its value removed, so class-validator does not walk it.
 */
export function shapeProblems(
  schema: JsonSchema,
  value: Record<string, unknown>,
  parent: string,
  problems: Problems,
  removed: Set<string>,
): void {
  const properties = schema.properties;
  if (!properties) return;
  const required = schema.required ?? [];
  for (const key of Object.keys(properties)) {
    const childSchema = properties[key] as JsonSchema;
    const child = Object.hasOwn(value, key) ? value[key] : undefined;
    const path = parent ? `${parent}.${key}` : key;
    let problem: string | undefined;
    if (child === undefined || child === null) {
      if (isNested(childSchema) && required.includes(key)) problem = `${key} should not be null or undefined`;
    } else {
      problem = shapeOf(childSchema, child, path, key, problems, removed);
    }
    if (problem !== undefined) {
      problems.add(path, problem);
      removed.add(path);
      delete value[key];
    }
  }
}

/**
 * Whether {@link shapeProblems} has something to check in this property: a nested DTO, a
 * `maxItems`, or an `enum` (class-validator's `@IsEnum` of a numeric enum also accepts the
 * enum's names, which the schema does not list; `@ArrayUnique()` compares items by identity,
 * so two equal objects pass it; `@Type(() => Date)` makes a date of `true` or `5` for
 * `@IsDate()`, where the schema says a date-time string: the shape check holds validation to the schema).
 */
export function needsShape(schema: JsonSchema): boolean {
  return (
    isNested(schema) ||
    typeof schema.maxItems === 'number' ||
    schema.uniqueItems === true ||
    schema.format === 'date-time' ||
    schema.enum !== undefined ||
    schema.items?.enum !== undefined
  );
}

/** A `@ValidateNested()` property: an inlined DTO, or an array of them. */
function isNested(schema: JsonSchema): boolean {
  return isNestedObject(schema) || (schema.type === 'array' && schema.items !== undefined && isNestedObject(schema.items));
}

/** The problem of the value itself (its message; the caller knows the path), if any; problems inside it are added to `problems`. */
function shapeOf(
  schema: JsonSchema,
  value: unknown,
  path: string,
  label: string,
  problems: Problems,
  removed: Set<string>,
): string | undefined {
  if (
    value instanceof Oversized ||
    (schema.type === 'array' && Array.isArray(value) && typeof schema.maxItems === 'number' && value.length > schema.maxItems)
  ) {
    return `${label} must contain no more than ${String(schema.maxItems)} elements`;
  }
  if (schema.enum !== undefined && !schema.enum.some((allowed) => allowed === value)) return notOneOf(schema.enum, label);
  if (schema.type === 'array' && Array.isArray(value) && schema.items?.enum !== undefined) {
    const allowed = schema.items.enum;
    for (let i = 0; i < value.length; i++) {
      if (!allowed.some((a) => a === value[i])) return notOneOf(allowed, label, i);
    }
  }
  if (schema.format === 'date-time' && typeof value !== 'string') return `${label} must be a date-time string`;
  if (schema.uniqueItems === true && Array.isArray(value) && !uniqueByValue(value)) return `All ${label}'s elements must be unique`;
  if (schema.type === 'object' && schema.properties) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return `${label} must be an object`;
    shapeProblems(schema, value as Record<string, unknown>, path, problems, removed);
    return undefined;
  }
  if (schema.type === 'array' && schema.items?.type === 'object' && schema.items.properties) {
    if (!Array.isArray(value)) return `${label} must be an array`;
    const items = schema.items;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || item === null) continue;
      const itemPath = `${path}.${i}`;
      const problem = shapeOf(items, item, itemPath, String(i), problems, removed);
      if (problem !== undefined) {
        problems.add(itemPath, problem);
        removed.add(itemPath);
        value[i] = undefined;
      }
    }
  }
  return undefined;
}

/** JSON Schema's `uniqueItems`: no two items equal as JSON values (object keys in any order). */
function uniqueByValue(items: readonly unknown[]): boolean {
  const seen = new Set<string>();
  for (const item of items) {
    const key = canonical(item);
    if (seen.has(key)) return false;
    seen.add(key);
  }
  return true;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** class-validator's words for a value outside an `@IsEnum` / `@IsIn` list. */
function notOneOf(allowed: readonly unknown[], label: string, index?: number): string {
  const each = index === undefined ? '' : 'each value in ';
  return `${each}${label} must be one of the following values: ${allowed.map(String).join(', ')}`;
}
