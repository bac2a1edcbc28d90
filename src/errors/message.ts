/**
 * The message of anything thrown. Duck-typed, since errors from another realm (a vm, a
 * native addon) fail `instanceof Error`. An AggregateError with no message of its own
 * (node's connect to several addresses) says what each of its parts said.
 * Internal: not re-exported from the package entry.
 */
export function messageOf(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { message, errors } = error as { message?: unknown; errors?: unknown };
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrown object without a message may define its own toString, which String() reads
  if (typeof message !== 'string') return String(error);
  if (message === '' && Array.isArray(errors) && errors.length > 0) return errors.map(messageOf).join('; ');
  return message;
}
