import { InvalidArgumentError } from '../errors';
import type { SettledPageQuery } from './store';

/**
 * Where a store's page of settled calls ends: the last call's settlement instant and its
 * insertion order, the key of the settled index every built-in store walks (so the next page
 * starts after it even when many calls settled in the same millisecond).
 */
export interface PageKey {
  at: string;
  seq: number;
}

/** The cursor text of a page key: `<seq>@<instant>` (opaque to callers; the stores write and read it). */
export function cursorOf(key: PageKey): string {
  return `${key.seq}@${key.at}`;
}

/**
 * The page key a cursor names, or the key just before `query.since` when there is none (seq
 * -1 sorts before every call settled at that instant).
 * @throws {@link InvalidArgumentError} a cursor no store wrote.
 */
export function pageStart(query: SettledPageQuery): PageKey {
  if (query.after === undefined) return { at: query.since, seq: -1 };
  const match = /^(\d{1,15})@(\S{1,64})$/.exec(query.after);
  if (!match) throw new InvalidArgumentError('settledPage: after must be the next of an earlier page');
  return { seq: Number(match[1]), at: match[2] as string };
}
