/**
 * The Standard Schema V1 interfaces with the JSON Schema extension (`@standard-schema/spec`
 * 1.1, https://standardschema.dev), copied as the spec invites so that nothing depends on the
 * package at run time; test/toolkit/standard-schema-types.test.ts checks both ways that they
 * are assignable to and from the spec's own. Flat names instead of the spec's namespaces.
 */

/** What validation gives back: the output value, or the issues. */
export type StandardResult<Output> = StandardSuccess<Output> | StandardFailure;

/** A validation that passed. */
export interface StandardSuccess<Output> {
  readonly value: Output;
  /** A falsy value for `issues` indicates success. */
  readonly issues?: undefined;
}

/** A validation that failed. */
export interface StandardFailure {
  readonly issues: ReadonlyArray<StandardIssue>;
}

/** One failure of a validation. */
export interface StandardIssue {
  readonly message: string;
  /** Where: each segment a key, or an object holding one. */
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The options a Standard Schema's `validate` may take. */
export interface StandardValidateOptions {
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

/** The input and output types a schema carries, for inference only. */
export interface StandardTypes<Input, Output> {
  readonly input: Input;
  readonly output: Output;
}

/**
 * The JSON Schema dialect asked of `jsonSchema.input` / `output`. A schema throws for a
 * target it does not support.
 */
// `{} & string` keeps the named targets in editors' completion while allowing any string, as the spec does.
export type JsonSchemaTarget = 'draft-2020-12' | 'draft-07' | 'openapi-3.0' | ({} & string);

/** The options of `jsonSchema.input` / `output`. */
export interface StandardJsonSchemaOptions {
  readonly target: JsonSchemaTarget;
  readonly libraryOptions?: Record<string, unknown> | undefined;
}

/** Turns a schema's input and output types into JSON Schema. */
export interface StandardJsonSchemaConverter {
  readonly input: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
  readonly output: (options: StandardJsonSchemaOptions) => Record<string, unknown>;
}

/** A Standard Schema V1: a validator any library can call. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: StandardTypes<Input, Output> | undefined;
    readonly validate: (value: unknown, options?: StandardValidateOptions) => StandardResult<Output> | Promise<StandardResult<Output>>;
  };
}

/**
 * A Standard Schema that also says its JSON Schema (Standard JSON Schema V1): what a tool's
 * `args` may be besides a DTO class, and what `standardSchemaOf` makes of a DTO. zod 4,
 * arktype 2.2 and valibot (through `toStandardJsonSchema` of `@valibot/to-json-schema`) give one.
 */
export interface StandardSchemaWithJson<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1<Input, Output>['~standard'] & { readonly jsonSchema: StandardJsonSchemaConverter };
}

/** The output type of a Standard Schema (what validation gives `run`). */
export type StandardOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output'];
