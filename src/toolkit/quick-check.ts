import { getMetadataStorage, ValidationTypes, type MetadataStorage, type ValidationArguments } from 'class-validator';
import type { ClassType } from '../decorators/types';

/**
 * A DTO's class-validator rules planned once, to pass an instance that breaks none of them
 * without class-validator's executor: `true` means `validateSync` would find no error (and the
 * whitelist has stripped what it strips); `false` means "ask class-validator", which then
 * finds the errors and words them. It calls the very constraints class-validator calls, with
 * the same arguments, so a rule means what it means there; it only skips the executor's
 * per-call work (looking the class's rules up among every class's, one error object per
 * property, filtering them empty again), which was most of a small call's validation
 * (docs/performance.md, "Validation without the executor"). The constraints of a call it does
 * not pass run again inside class-validator: a constraint with side effects sees such a call twice.
 */
export type QuickCheck = (instance: object) => boolean;

/** A condition rule's constraints, the condition first. */
type Condition = (object: object, value: unknown) => boolean;

/** One property's rules, split as the executor splits them. */
interface PropertyRules {
  readonly name: string;
  /** `@IsOptional`, `@ValidateIf` (each rule's constraints, its condition first): all must hold for the rest to apply. */
  readonly conditions: ReadonlyArray<readonly Condition[]>;
  /** `@IsDefined` first, then every other constraint, each with its metadata. */
  readonly constraints: ReadonlyArray<{ readonly meta: ValidationMetadata; readonly constraint: Constraint }>;
}

/**
 * A constraint as class-validator records it. Its `instance` is read at every call, as the
 * executor reads it: it comes from the container class-validator is given (`useContainer`, a
 * Nest module's), which may be set after the plan is made and may inject the constraint's own services.
 */
interface Constraint {
  readonly instance: { validate(value: unknown, args: ValidationArguments): unknown };
}

/** One rule as class-validator records it (its type is not exported by name). */
type ValidationMetadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>[number];

/** The types whose rules this plans; any other (nested, promise) leaves the DTO to class-validator. */
const PLANNED: ReadonlySet<string> = new Set([
  ValidationTypes.CUSTOM_VALIDATION,
  ValidationTypes.CONDITIONAL_VALIDATION,
  ValidationTypes.IS_DEFINED,
  ValidationTypes.WHITELIST,
]);

/**
 * The quick check of `dto` under the library's validator options (whitelist, no groups), or
 * undefined when a rule is one only class-validator's executor applies: a nested DTO, a
 * promise, a rule with groups, `always` or `each`, an async constraint. It plans again when a
 * rule was added to the class or a class it extends since (a decorator applied at run time):
 * every call compares how many rules they have in all, as class-validator keeps them.
 */
export function quickCheckFor(dto: ClassType): QuickCheck | undefined {
  const rulesOf = ruleCounter(dto);
  if (!rulesOf) return undefined;
  let counted = rulesOf();
  let check = planFor(dto);
  if (!check) return undefined;
  return (instance) => {
    const now = rulesOf();
    if (now !== counted) {
      counted = now;
      check = planFor(dto);
    }
    // A DTO that gained a rule only the executor applies is left to class-validator from then on.
    return check !== undefined && check(instance);
  };
}

/**
 * How many rules class-validator keeps for `dto` and the classes it extends, all told; read
 * from the storage's own map (a class-validator that keeps it elsewhere gives no counter, and
 * so no quick check).
 */
function ruleCounter(dto: ClassType): (() => number) | undefined {
  const kept = (getMetadataStorage() as unknown as { validationMetadatas?: unknown }).validationMetadatas;
  if (!(kept instanceof Map)) return undefined;
  const byClass = kept as Map<unknown, readonly unknown[]>;
  const chain: unknown[] = [];
  for (let cls: unknown = dto; typeof cls === 'function' && cls !== Function.prototype; cls = Object.getPrototypeOf(cls)) chain.push(cls);
  // A sum is enough: class-validator only ever adds rules, so any new one changes it.
  return () => {
    let count = 0;
    for (const cls of chain) count += byClass.get(cls)?.length ?? 0;
    return count;
  };
}

/** The check of the rules `dto` has now, or undefined when one is the executor's alone. */
function planFor(dto: ClassType): QuickCheck | undefined {
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(dto, '', false, false, undefined);
  if (metadatas.length === 0) return undefined;
  const byName = new Map<
    string,
    {
      conditions: PropertyRules['conditions'][number][];
      defined: PropertyRules['constraints'][number][];
      rest: PropertyRules['constraints'][number][];
    }
  >();
  for (const meta of metadatas) {
    if (!PLANNED.has(meta.type) || (meta.groups !== undefined && meta.groups.length > 0) || meta.always !== undefined || meta.each)
      return undefined;
    let rules = byName.get(meta.propertyName);
    if (!rules) byName.set(meta.propertyName, (rules = { conditions: [], defined: [], rest: [] }));
    if (meta.type === ValidationTypes.WHITELIST) continue;
    if (meta.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      rules.conditions.push(meta.constraints as Condition[]);
      continue;
    }
    for (const constraint of storage.getTargetValidatorConstraints(meta.constraintCls)) {
      if (constraint.async) return undefined;
      const entry = { meta, constraint: constraint as Constraint };
      (meta.type === ValidationTypes.IS_DEFINED ? rules.defined : rules.rest).push(entry);
    }
  }
  const properties: PropertyRules[] = [...byName].map(([name, rules]) => ({
    name,
    conditions: rules.conditions,
    constraints: [...rules.defined, ...rules.rest],
  }));
  const known = new Set(byName.keys());
  return (instance) => {
    const object = instance as Record<string, unknown>;
    // The whitelist, as the executor applies it: a property no rule names is removed.
    for (const key of Object.keys(object)) if (!known.has(key)) delete object[key];
    const targetName = (object.constructor as { name?: string } | undefined)?.name;
    for (const property of properties) {
      const value = object[property.name];
      let applies = true;
      // Called as the executor calls them (`constraints[0](…)`, so a function's `this` is the same), every one.
      for (const condition of property.conditions) applies = condition[0]!(object, value) && applies;
      if (!applies) continue;
      for (const { meta, constraint } of property.constraints) {
        const valid = constraint.instance.validate(value, {
          targetName: targetName as string,
          property: meta.propertyName,
          object,
          value,
          constraints: meta.constraints,
        });
        // Anything but a plain yes (a no, or a promise a constraint gave without saying it is async) goes to class-validator.
        if (valid !== true) return false;
      }
    }
    return true;
  };
}
