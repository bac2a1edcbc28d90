/** How many parts of an AggregateError a message lists, and how deep nested ones are followed. */
const MAX_PARTS = 10;
const MAX_NESTING = 3;

/**
 * The message of anything thrown. Duck-typed, since errors from another realm (a vm, a
 * native addon) fail `instanceof Error`. An AggregateError with no message of its own
 * (node's connect to several addresses) says what each of its parts said.
 *
 * Total: it never throws, whatever was thrown (a null-prototype object, a throwing
 * `toString` or `message` getter, a revoked Proxy, a symbol, a BigInt, a function, whose
 * source text is never shown).
 * Internal: not re-exported from the package entry.
 */
export function messageOf(error: unknown): string {
  return describe(error, 0);
}

function describe(error: unknown, nesting: number): string {
  try {
    if (typeof error === 'function') return `a thrown function ${nameOf(error)}`;
    if (typeof error !== 'object' || error === null) return String(error);
    const { message, errors } = error as { message?: unknown; errors?: unknown };
    if (typeof message !== 'string') {
      // A custom toString is the best words a non-Error has; the default one says nothing.
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- checked just below
      const text = String(error);
      return text === '[object Object]' ? fallback(error) : text;
    }
    if (message === '' && Array.isArray(errors) && errors.length > 0 && nesting < MAX_NESTING) {
      const parts = errors.slice(0, MAX_PARTS).map((part) => describe(part, nesting + 1));
      if (errors.length > MAX_PARTS) parts.push(`and ${errors.length - MAX_PARTS} more`);
      return parts.join('; ');
    }
    return message;
  } catch {
    return fallback(error);
  }
}

/** For a value whose own words cannot be had: its JSON (cut to 200 characters), else its tag, else its kind. */
function fallback(error: unknown): string {
  try {
    const json = JSON.stringify(error);
    if (typeof json === 'string' && json !== '{}') return json.length > 200 ? `${json.slice(0, 200)}...` : json;
  } catch {
    // circular, BigInt inside, throwing getter or toJSON: try the next way
  }
  try {
    const tag = Object.prototype.toString.call(error);
    return tag === '[object Object]' ? 'a thrown object without a message' : tag;
  } catch {
    return `a thrown ${typeof error}`;
  }
}

function nameOf(fn: unknown): string {
  try {
    const name = (fn as { name?: unknown }).name;
    return typeof name === 'string' && name !== '' ? name : '(anonymous)';
  } catch {
    return '(anonymous)';
  }
}
