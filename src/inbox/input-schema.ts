/**
 * The form an `input` or `question` request asks for, read from its `data.schema` (a JSON
 * Schema object of flat fields), and the server-side check of an answer's `data` against it.
 * The page renders and checks the same rules in the browser; this check is the one that counts.
 */

/** The property names a request's `data.schema` declares, rendered or not. */
export function declaredFields(data: Record<string, unknown> | undefined): string[] {
  const schema = data?.schema;
  return isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
}

/** One field the form can render. */
export interface InputField {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  required: boolean;
  title?: string;
  description?: string;
  enum?: Array<string | number>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  /** `writeOnly: true`: a consumed value (docs/suspension.md), typed unseen and never kept. */
  writeOnly?: boolean;
}

/** One reason an answer's data does not fit the form. */
export interface FieldProblem {
  field: string;
  message: string;
}

const TYPES = new Set(['string', 'number', 'integer', 'boolean']);

/** The fields of a request's `data.schema`, or `undefined` when it has none this inbox can render. */
export function inputFields(data: Record<string, unknown> | undefined): InputField[] | undefined {
  const schema = data?.schema;
  if (!isObject(schema) || !isObject(schema.properties)) return undefined;
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const fields: InputField[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    if (!isObject(raw)) continue;
    const type = raw.type ?? (Array.isArray(raw.enum) ? 'string' : undefined);
    if (typeof type !== 'string' || !TYPES.has(type)) continue;
    const field: InputField = { name, type: type as InputField['type'], required: required.includes(name) };
    if (typeof raw.title === 'string') field.title = raw.title;
    if (typeof raw.description === 'string') field.description = raw.description;
    if (Array.isArray(raw.enum)) field.enum = raw.enum.filter((v): v is string | number => typeof v === 'string' || typeof v === 'number');
    if (raw.writeOnly === true) field.writeOnly = true;
    for (const key of ['minimum', 'maximum', 'minLength', 'maxLength'] as const) {
      if (typeof raw[key] === 'number' && Number.isFinite(raw[key])) field[key] = raw[key];
    }
    fields.push(field);
  }
  return fields;
}

/**
 * Every way `data` does not fit `fields`; empty when it does. A key the schema does not
 * declare is refused too; one it declares with a type the form cannot render (an array, an
 * object) passes unchecked here, for the tool's own validation.
 */
export function inputProblems(
  fields: readonly InputField[],
  data: Record<string, unknown> | undefined,
  declared: readonly string[] = fields.map((field) => field.name),
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const given = data ?? {};
  const known = new Set([...declared, ...fields.map((field) => field.name)]);
  for (const name of Object.keys(given)) if (!known.has(name)) problems.push({ field: name, message: 'is not a field of this form' });
  for (const field of fields) {
    const value = given[field.name];
    if (value === undefined || value === null || value === '') {
      if (field.required) problems.push({ field: field.name, message: 'is required' });
      continue;
    }
    const problem = fieldProblem(field, value);
    if (problem) problems.push({ field: field.name, message: problem });
  }
  return problems;
}

function fieldProblem(field: InputField, value: unknown): string | undefined {
  switch (field.type) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string':
      if (typeof value !== 'string') return 'must be text';
      if (field.enum && !field.enum.includes(value)) return `must be one of ${field.enum.join(', ')}`;
      if (field.minLength !== undefined && value.length < field.minLength) return `must be at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && value.length > field.maxLength) return `must be at most ${field.maxLength} characters`;
      return undefined;
    default: {
      if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
      if (field.type === 'integer' && !Number.isInteger(value)) return 'must be a whole number';
      if (field.enum && !field.enum.includes(value)) return `must be one of ${field.enum.join(', ')}`;
      if (field.minimum !== undefined && value < field.minimum) return `must be at least ${field.minimum}`;
      if (field.maximum !== undefined && value > field.maximum) return `must be at most ${field.maximum}`;
      return undefined;
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
