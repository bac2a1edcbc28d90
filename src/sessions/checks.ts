/**
 * Checks of stored and given objects by their members, one table per kind of object: a
 * checkpoint's parts, a session's, a store's methods. What a value is told when it fails
 * stays with each caller.
 */

/** What the members of an object must be, by name: a check of each one's value. */
export type MemberChecks<T> = { readonly [K in keyof T]?: (value: unknown) => boolean };

/** Whether `value` is an object (not null), so its members can be read. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Whether `value` is an object each of whose members named in `checks` passes its check. */
export function fits<T>(value: unknown, checks: MemberChecks<T>): boolean {
  if (!isObject(value)) return false;
  for (const key in checks) if (!(checks[key] as (member: unknown) => boolean)(value[key])) return false;
  return true;
}

/** Whether `value` is a list of objects that each fit `checks`. */
export function listOf<T>(value: unknown, checks: MemberChecks<T>): boolean {
  return Array.isArray(value) && value.every((item) => fits(item, checks));
}

/** Whether `value` is an object with a function at each of `methods` (a store that implements an interface). */
export function hasMethods<T>(value: unknown, methods: ReadonlyArray<keyof T & string>): value is T {
  return isObject(value) && methods.every((name) => typeof value[name] === 'function');
}
