import 'reflect-metadata';
import {
  ARRAY_MAX_SIZE,
  ARRAY_MIN_SIZE,
  ARRAY_NOT_EMPTY,
  ARRAY_UNIQUE,
  EQUALS,
  getMetadataStorage,
  IS_ARRAY,
  IS_BOOLEAN,
  IS_DATE,
  IS_DATE_STRING,
  IS_EMAIL,
  IS_ENUM,
  IS_IN,
  IS_INT,
  IS_ISO8601,
  IS_LENGTH,
  IS_NEGATIVE,
  IS_NOT_EMPTY,
  IS_NUMBER,
  IS_OBJECT,
  IS_OPTIONAL,
  IS_POSITIVE,
  IS_STRING,
  IS_URL,
  IS_UUID,
  MATCHES,
  MAX,
  MAX_LENGTH,
  MIN,
  MIN_LENGTH,
  ValidationTypes,
} from 'class-validator';
import { defaultMetadataStorage } from '../metadata/transformer-storage';
import { describedPositionsOf, describedPropertiesOf, descriptionOf } from '../decorators/describe.decorator';
import type { AnyClass } from '../decorators/types';
import { DtoRuleError, ToolRegistrationError } from '../errors';
import type { JsonSchema } from '../results/json-schema';
import { checkHeaders, mirrorHeaders } from './mirror-headers';

// class-validator's root does not export this type; derived from the root API so nothing
// depends on the package's internal file layout.
type ValidationMetadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/**
 * How one class-validator constraint shows in JSON Schema. `each: true` constraints
 * apply to `items`, the others to the property itself. Table-driven so that adding a
 * decorator is one line.
 */
type Rule = (schema: JsonSchema, constraints: readonly unknown[]) => void;

const setType =
  (type: JsonSchema['type']): Rule =>
  (s) => {
    s.type = type;
  };
const setFormat =
  (format: string, type: JsonSchema['type'] = 'string'): Rule =>
  (s) => {
    s.type = type;
    s.format = format;
  };
const setNumber =
  (
    key: 'minimum' | 'maximum' | 'minLength' | 'maxLength' | 'minItems' | 'maxItems' | 'exclusiveMinimum' | 'exclusiveMaximum',
    index = 0,
  ): Rule =>
  (s, c) => {
    const value = c[index];
    if (typeof value === 'number') s[key] = value;
  };

const RULES: Record<string, Rule> = {
  [IS_STRING]: setType('string'),
  [IS_NUMBER]: (s) => {
    if (s.type !== 'integer') s.type = 'number';
  },
  [IS_INT]: setType('integer'),
  [IS_BOOLEAN]: setType('boolean'),
  [IS_OBJECT]: setType('object'),
  [IS_ARRAY]: setType('array'),
  [IS_DATE]: setFormat('date-time'),
  [IS_DATE_STRING]: setFormat('date-time'),
  [IS_ISO8601]: setFormat('date-time'),
  [IS_EMAIL]: setFormat('email'),
  [IS_URL]: setFormat('uri'),
  [IS_UUID]: setFormat('uuid'),
  [IS_ENUM]: (s, c) => {
    const values = enumValues(c[0]);
    s.enum = values;
    s.type = values.every((v) => typeof v === 'number') ? 'number' : values.every((v) => typeof v === 'string') ? 'string' : s.type;
  },
  [IS_IN]: (s, c) => {
    const values = Array.isArray(c[0]) ? (c[0] as Array<string | number | boolean | null>) : [];
    s.enum = values;
    if (values.every((v) => typeof v === 'string')) s.type = 'string';
  },
  [EQUALS]: (s, c) => {
    s.const = c[0];
  },
  [MIN]: setNumber('minimum'),
  [MAX]: setNumber('maximum'),
  [IS_POSITIVE]: (s) => {
    s.exclusiveMinimum = 0;
  },
  [IS_NEGATIVE]: (s) => {
    s.exclusiveMaximum = 0;
  },
  [MIN_LENGTH]: setNumber('minLength'),
  [MAX_LENGTH]: setNumber('maxLength'),
  [IS_LENGTH]: (s, c) => {
    setNumber('minLength', 0)(s, c);
    setNumber('maxLength', 1)(s, c);
  },
  [IS_NOT_EMPTY]: (s) => {
    if (s.type === 'string' || s.type === undefined) s.minLength = Math.max(1, s.minLength ?? 0);
  },
  [MATCHES]: (s, c) => {
    const pattern = c[0];
    s.type = 'string';
    s.pattern = pattern instanceof RegExp ? pattern.source : String(pattern);
  },
  [ARRAY_MIN_SIZE]: setNumber('minItems'),
  [ARRAY_MAX_SIZE]: setNumber('maxItems'),
  [ARRAY_NOT_EMPTY]: (s) => {
    s.minItems = Math.max(1, s.minItems ?? 0);
  },
  [ARRAY_UNIQUE]: (s) => {
    s.uniqueItems = true;
  },
};

/**
 * The type a constraint implies without naming it: class-validator's `min`, `maxLength`,
 * `arrayMinSize`... refuse any value not of that type, so the schema says the type too
 * (else a schema with only `minimum` would allow a string validation refuses).
 */
const IMPLIED_TYPES: Record<string, JsonSchema['type']> = {
  [MIN]: 'number',
  [MAX]: 'number',
  [IS_POSITIVE]: 'number',
  [IS_NEGATIVE]: 'number',
  [MIN_LENGTH]: 'string',
  [MAX_LENGTH]: 'string',
  [IS_LENGTH]: 'string',
  [ARRAY_MIN_SIZE]: 'array',
  [ARRAY_MAX_SIZE]: 'array',
  [ARRAY_NOT_EMPTY]: 'array',
  [ARRAY_UNIQUE]: 'array',
};

/** Runtime types TypeScript records as `design:type`, used when no constraint names a type. */
const DESIGN_TYPES = new Map<unknown, JsonSchema['type']>([
  [String, 'string'],
  [Number, 'number'],
  [Boolean, 'boolean'],
  [Array, 'array'],
  [Date, 'string'],
]);

/**
 * Builds `{ type: "object", properties, required, additionalProperties: false }` for a
 * DTO class from its class-validator, class-transformer and `@Describe` metadata.
 * Nested DTOs are inlined (no `$ref`). Callers cache the result per class.
 */
export function schemaForClass(dto: AnyClass): JsonSchema {
  const schema = objectSchema(dto, new Set());
  checkHeaders(dto, schema);
  return schema;
}

function objectSchema(dto: AnyClass, seen: Set<AnyClass>): JsonSchema {
  if (seen.has(dto)) {
    // A DTO that contains itself cannot be inlined; say "an object" and stop.
    return { type: 'object' };
  }
  seen.add(dto);
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const byProperty = new Map<string, ValidationMetadata[]>();
  for (const key of declarationOrder(dto, metadatas)) byProperty.set(key, []);
  for (const m of metadatas) {
    const list = byProperty.get(m.propertyName);
    if (list) list.push(m);
    else byProperty.set(m.propertyName, [m]);
  }

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [key, list] of byProperty) {
    properties[key] = propertySchema(dto, key, list, seen);
    const optional = list.some((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION && m.name === IS_OPTIONAL);
    if (!optional) required.push(key);
  }
  mirrorHeaders(dto, properties);
  seen.delete(dto);
  return { type: 'object', properties, required, additionalProperties: false };
}

/**
 * The properties in the order the classes declare them, parents first: models fill the
 * arguments in schema order. class-validator records each class's constraints in
 * declaration order; a property with only `@Describe` goes where `@Describe` recorded it.
 */
function declarationOrder(dto: AnyClass, metadatas: readonly ValidationMetadata[]): string[] {
  const levels: AnyClass[] = [];
  for (let c: unknown = dto; typeof c === 'function' && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    levels.unshift(c as AnyClass);
  }
  const described = new Set(describedPropertiesOf(prototypeOf(dto)));
  const order = new Set<string>();
  for (const level of levels) {
    const validated: string[] = [];
    for (const m of metadatas) {
      if (m.target === level && !validated.includes(m.propertyName)) validated.push(m.propertyName);
    }
    const positions = [...describedPositionsOf(prototypeOf(level))].filter(([key]) => described.has(key) && !validated.includes(key));
    for (let i = 0; i <= validated.length; i++) {
      for (const [key, at] of positions) if (Math.min(at, validated.length) === i) order.add(key);
      const key = validated[i];
      if (key !== undefined) order.add(key);
    }
  }
  // Metadata a decorator recorded some other way (a schema target, say) still shows, last.
  for (const key of described) order.add(key);
  for (const m of metadatas) order.add(m.propertyName);
  return [...order];
}

function propertySchema(dto: AnyClass, key: string, list: ValidationMetadata[], seen: Set<AnyClass>): JsonSchema {
  const designType: unknown = Reflect.getMetadata('design:type', prototypeOf(dto), key);
  checkRule(dto, key, list, designType);
  const schema: JsonSchema = {};
  let items: JsonSchema | undefined;
  let nested = false;
  let nestedEach = false;
  // Whether a constraint the generator cannot read (a custom @Validate, @IsPhoneNumber...) is here.
  let unknown = false;
  for (const m of list) {
    if (m.type === ValidationTypes.NESTED_VALIDATION) {
      nested = true;
      nestedEach = nestedEach || m.each;
      continue;
    }
    const rule = m.name ? RULES[m.name] : undefined;
    if (!rule) {
      if (m.type !== ValidationTypes.WHITELIST && m.type !== ValidationTypes.CONDITIONAL_VALIDATION && !IMPLIED_TYPES[m.name ?? '']) {
        unknown = true;
      }
      continue;
    }
    if (m.each) {
      items ??= {};
      rule(items, m.constraints ?? []);
    } else {
      rule(schema, m.constraints ?? []);
    }
  }
  for (const m of list) {
    const implied = m.name ? IMPLIED_TYPES[m.name] : undefined;
    if (implied === undefined) continue;
    const target = m.each ? (items ??= {}) : schema;
    target.type ??= implied;
  }

  if (nested) {
    const childSchema = objectSchema(nestedClass(dto, key, designType), seen);
    if (nestedEach || schema.type === 'array' || designType === Array) {
      schema.type = 'array';
      items = { ...childSchema, ...(items ?? {}) };
    } else {
      Object.assign(schema, childSchema);
    }
  }
  if (items && schema.type === undefined) schema.type = 'array';
  // The schema states only what validation checks: the TypeScript type is a hint for the model
  // only beside a constraint the generator cannot read, never for `@Allow()` or `@IsNotEmpty()`,
  // which accept values of any type.
  if (schema.type === undefined && unknown) {
    const fromDesign = DESIGN_TYPES.get(designType);
    if (fromDesign) schema.type = fromDesign;
  }
  if (schema.type === 'array') schema.items = items ?? {};

  const description = descriptionOf(prototypeOf(dto), key);
  return description === undefined ? schema : { description, ...schema };
}

/**
 * One rule for schema and validation (docs/tools.md): a property the schema would show one
 * way and validation treat another is refused here, at registration, with the fix.
 */
function checkRule(dto: AnyClass, key: string, list: readonly ValidationMetadata[], designType: unknown): void {
  const where = `${dto.name || '(anonymous class)'}.${key}`;
  const validators = list.filter((m) => m.type !== ValidationTypes.CONDITIONAL_VALIDATION);
  if (validators.length === 0) {
    const optional = list.length > 0;
    throw new DtoRuleError(
      where,
      `${where} has ${optional ? 'only @IsOptional() (or @ValidateIf), which checks nothing' : 'no class-validator decorator'}, ` +
        `so ${optional ? 'the schema would guess its type while validation accepts any value' : 'validation strips it before run sees it while the schema shows it to the model as required'}: ` +
        `add ${validatorFor(designType)}${optional ? '' : ' (with @IsOptional() if it may be left out)'}, or @Allow() to accept any value`,
    );
  }
  const whole = list.some((m) => m.name === IS_ARRAY && !m.each);
  const each = list.find(
    (m) => m.each && m.type !== ValidationTypes.NESTED_VALIDATION && m.type !== ValidationTypes.CONDITIONAL_VALIDATION,
  );
  if (each && !whole) {
    throw new DtoRuleError(
      where,
      `${where} has @${decoratorName(each)}({ each: true }) but no @IsArray(): class-validator then also accepts a single value, ` +
        `while the schema says an array: add @IsArray() to ${where}`,
    );
  }
  if (list.some((m) => m.name === IS_DATE) && defaultMetadataStorage.findTypeMetadata(dto, key)?.typeFunction?.() !== Date) {
    throw new DtoRuleError(
      where,
      `${where} has @IsDate() but no @Type(() => Date): JSON carries dates as strings, so validation would refuse every value ` +
        `the schema allows: add @Type(() => Date) from class-transformer to ${where}, or use @IsDateString() to keep the string`,
    );
  }
  for (const m of list) {
    if (m.name !== MATCHES) continue;
    const [pattern, modifiers] = (m.constraints ?? []) as unknown[];
    const flags = pattern instanceof RegExp ? pattern.flags : typeof modifiers === 'string' ? modifiers : '';
    if (flags.replace('u', '') !== '') {
      throw new DtoRuleError(
        where,
        `${where} has @Matches with the flags "${flags}", which a JSON Schema pattern cannot carry, so the model would be told ` +
          `another rule than validation applies: write the pattern without flags (for "i", list both cases: [Aa])`,
      );
    }
  }
}

/** The decorator a property of this TypeScript type wants, for an error's fix. */
function validatorFor(designType: unknown): string {
  if (designType === String) return '@IsString()';
  if (designType === Number) return '@IsNumber() or @IsInt()';
  if (designType === Boolean) return '@IsBoolean()';
  if (designType === Array) return '@IsArray()';
  if (designType === Date) return '@IsDate() with @Type(() => Date)';
  if (typeof designType === 'function' && designType !== Object) {
    return `@ValidateNested() with @Type(() => ${(designType as AnyClass).name || 'TheNestedClass'})`;
  }
  return 'a class-validator decorator for its type (@IsString(), @IsInt()...)';
}

/** Decorators whose name is not their constraint's name with a capital first letter. */
const DECORATOR_NAMES: Record<string, string> = { [IS_UUID]: 'IsUUID', [IS_ISO8601]: 'IsISO8601' };

/** `IsString` from class-validator's constraint name `isString`, for an error's fix. */
function decoratorName(m: ValidationMetadata): string {
  const name = m.name ?? 'Validate';
  return DECORATOR_NAMES[name] ?? name.charAt(0).toUpperCase() + name.slice(1);
}

// TypeScript types a constructor type's `prototype` as `any`; every class's is an object.
function prototypeOf(dto: AnyClass): object {
  return dto.prototype as object;
}

/**
 * The class of a `@ValidateNested()` property, from its `@Type`. Without `@Type`,
 * class-transformer leaves the value a plain object and class-validator then refuses every
 * call, valid ones included; so the schema refuses the class instead, at registration.
 */
function nestedClass(dto: AnyClass, key: string, designType: unknown): AnyClass {
  const typeMeta = defaultMetadataStorage.findTypeMetadata(dto, key);
  const fromTransformer = typeMeta?.typeFunction?.() as AnyClass | undefined;
  if (fromTransformer) return fromTransformer;
  const named =
    typeof designType === 'function' && !DESIGN_TYPES.has(designType) && designType !== Object ? (designType as AnyClass).name : '';
  const where = `${dto.name || '(anonymous class)'}.${key}`;
  const other = otherTransformerWithType(dto, key);
  if (other !== undefined) {
    throw new ToolRegistrationError(
      `${where} has @ValidateNested() and a @Type from a second copy of class-transformer (${other}), which toolnexus-ts cannot see: ` +
        `it reads the copy at ${ownTransformerPath()}. Install one copy of class-transformer (and of class-validator) for the whole app, ` +
        'for example by removing the nested node_modules or running npm dedupe',
    );
  }
  const fix = `add @Type(() => ${named || 'TheNestedClass'}) from class-transformer to ${where}`;
  const also =
    otherTransformerPaths().length > 0
      ? `; if it has one, a second copy of class-transformer is loaded (${otherTransformerPaths().join(', ')}): install one copy`
      : '';
  throw new ToolRegistrationError(
    `${where} has @ValidateNested() but no @Type, so its value would never become a ${named || 'nested class'} instance: ${fix}${also}`,
  );
}

/** class-transformer's storage module as this library loaded it, and any other copy loaded in this process. */
const STORAGE_MODULE = /[\\/]class-transformer[\\/]cjs[\\/]storage\.js$/;

function ownTransformerPath(): string {
  return require.resolve('class-transformer/cjs/storage').replace(/[\\/]cjs[\\/]storage\.js$/, '');
}

function otherTransformerPaths(): string[] {
  const own = require.resolve('class-transformer/cjs/storage');
  return Object.keys(require.cache)
    .filter((file) => file !== own && STORAGE_MODULE.test(file))
    .map((file) => file.replace(/[\\/]cjs[\\/]storage\.js$/, ''));
}

/** The folder of a second class-transformer copy whose storage holds this property's `@Type`. */
function otherTransformerWithType(dto: AnyClass, key: string): string | undefined {
  const own = require.resolve('class-transformer/cjs/storage');
  for (const [file, loaded] of Object.entries(require.cache)) {
    if (file === own || !STORAGE_MODULE.test(file)) continue;
    const storage = (loaded?.exports as Partial<typeof import('class-transformer/types/storage')> | undefined)?.defaultMetadataStorage;
    if (storage?.findTypeMetadata(dto, key) !== undefined) return file.replace(/[\\/]cjs[\\/]storage\.js$/, '');
  }
  return undefined;
}

function enumValues(entity: unknown): Array<string | number> {
  if (typeof entity !== 'object' || entity === null) return [];
  // A numeric TypeScript enum maps names to numbers and numbers back to names: keep the values.
  const record = entity as Record<string, unknown>;
  return Object.keys(record)
    .filter((k) => Number.isNaN(Number(k)))
    .map((k) => record[k])
    .filter((v): v is string | number => typeof v === 'string' || typeof v === 'number');
}
