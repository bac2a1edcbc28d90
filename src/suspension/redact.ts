import type { Toolkit } from '../toolkit/toolkit';
import type { SuspendedCall } from './store';

/**
 * A copy of a suspended call fit to show a person (the inbox, the CLI, a webhook, a log):
 * its arguments pass through `toolkit.redact` (fields marked `@Sensitive()` read
 * `"[redacted]"`; the whole arguments when the tool is not registered in `toolkit`), and its
 * `binding` is left out, since a digest of the arguments would let a short secret be
 * guessed. Everything else (request, answer, outcome, audit) is copied as stored.
 * docs/operating.md, "Sensitive fields".
 */
export function redactCall(toolkit: Toolkit, call: SuspendedCall): SuspendedCall {
  const { binding: _binding, args, ...rest } = call;
  const copy = structuredClone(rest) as SuspendedCall;
  copy.args = toolkit.redact(call.tool, args);
  return copy;
}
