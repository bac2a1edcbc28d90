import { InvalidArgumentError } from '../../errors';

/** An option that must be a whole number of at least 1; `fallback` when not given. */
export function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(`${name} must be a positive integer, got ${String(value)}`);
  return value;
}

/** An option that must be a whole number of at least 0; `fallback` when not given. */
export function atLeastZero(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new InvalidArgumentError(`${name} must be an integer of at least 0, got ${String(value)}`);
  return value;
}
