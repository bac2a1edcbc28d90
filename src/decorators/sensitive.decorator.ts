import 'reflect-metadata';
import { SENSITIVE_PROPERTIES } from '../metadata/keys';

/**
 * Marks a DTO property whose value must never be shown: the inbox, the CLI, webhooks and
 * logs print `"[redacted]"` in its place (`toolkit.redact`, docs/operating.md, "Sensitive
 * fields"). The tool itself still receives the value; the store still keeps it, because a
 * replay needs it. On a nested DTO property it redacts the whole object.
 *
 * @example
 * ```ts
 * class LoginArgs {
 *   @IsString() user!: string
 *   @IsString() @Sensitive() password!: string
 * }
 * ```
 */
export function Sensitive(): PropertyDecorator {
  return (target, propertyKey) => {
    const own = (Reflect.getOwnMetadata(SENSITIVE_PROPERTIES, target) as string[] | undefined) ?? [];
    Reflect.defineMetadata(SENSITIVE_PROPERTIES, [...own, String(propertyKey)], target);
  };
}

/** Every `@Sensitive` property of a DTO prototype, parents' included. */
export function sensitivePropertiesOf(prototype: object): string[] {
  const keys = new Set<string>();
  for (let p: object | null = prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    const own = Reflect.getOwnMetadata(SENSITIVE_PROPERTIES, p) as string[] | undefined;
    if (own) for (const key of own) keys.add(key);
  }
  return [...keys];
}
