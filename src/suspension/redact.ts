import type { Answer, AnsweredRequest, PendingRequest } from '../results/wire';
import { REDACTED, showCalls } from '../toolkit/redaction';
import type { Toolkit } from '../toolkit/toolkit';
import type { SuspendedCall } from './store';

/**
 * The one redaction path for every shown copy of a call (the inbox, the CLI, webhooks,
 * observers, MCP): the arguments pass through `toolkit.redact` (`@Sensitive()` fields read
 * `"[redacted]"`; the whole arguments when the tool is not registered), and every value so
 * redacted is redacted too wherever else the call holds it in text — the prompt, the url, the
 * request's data, the answer, the comment, the outcome and the earlier links of its chain —
 * since a tool may well copy an argument into its prompt or its result. docs/deploying.md,
 * "What is redacted where".
 */
export class Redactor {
  constructor(private readonly toolkit: Toolkit) {}

  /** The redacted arguments of a call of `tool`, and a function redacting the same values in any JSON value. */
  forArgs(tool: string, args: unknown): { args: unknown; redact: <T>(value: T) => T } {
    const { args: shown, redact } = showCalls((name, value) => this.toolkit.redact(name, value), [{ tool, args }]);
    return { args: shown[0], redact };
  }

  /** {@link forArgs} for a stored call. */
  forCall(call: SuspendedCall): { args: unknown; redact: <T>(value: T) => T } {
    return this.forArgs(call.tool, call.args);
  }

  /** A copy of `request` (asked by a call of `tool` with `args`) fit to show. */
  request(tool: string, args: unknown, request: PendingRequest): PendingRequest {
    const { args: redacted, redact } = this.forArgs(tool, args);
    return redactRequest(request, args, redacted, redact);
  }

  /** A copy of `call` fit to show: see the class. Its `binding` is left out (a digest of the arguments would let a short secret be guessed). */
  call(call: SuspendedCall): SuspendedCall {
    const { binding: _binding, args, request, answer, outcome, comment, chain, ...rest } = call;
    const { args: redacted, redact } = this.forArgs(call.tool, args);
    const copy = structuredClone(rest) as SuspendedCall;
    copy.request = redactRequest(request, args, redacted, redact);
    // Another field may quote a sensitive one: the arguments are redacted by value as well as by field.
    copy.args = redact(redacted);
    if (answer !== undefined) copy.answer = this.answerShown(call.tool, answer, redact);
    if (outcome !== undefined) copy.outcome = redact(jsonCopy(outcome));
    if (comment !== undefined) copy.comment = redact(comment);
    if (chain !== undefined)
      copy.chain = chain.map((link): AnsweredRequest => ({
        request: redactRequest(link.request, args, redacted, redact),
        answer: this.answerShown(call.tool, link.answer, redact),
      }));
    return copy;
  }

  /** An answer fit to show: edited arguments redacted as the call's own are (their new values by field too). */
  private answerShown(tool: string, answer: Answer, redact: <T>(value: T) => T): Answer {
    const copy = redactAnswer(answer, redact);
    if (answer.args !== undefined && typeof copy === 'object' && copy !== null)
      copy.args = redact(this.forArgs(tool, answer.args).args) as Record<string, unknown>;
    return copy;
  }
}

/**
 * A copy of a suspended call fit to show a person (the inbox, the CLI, a webhook, a log), by
 * the one redaction path ({@link Redactor}): `@Sensitive()` arguments redacted, and the same
 * values redacted in the prompt, data, answer, comment, outcome and chain. docs/operating.md,
 * "Sensitive fields".
 */
export function redactCall(toolkit: Toolkit, call: SuspendedCall): SuspendedCall {
  return new Redactor(toolkit).call(call);
}

/** The request's words redacted (prompt, url, data); its id, kind and deadline are kept as they are, since they are how it is answered. */
function redactRequest(request: PendingRequest, original: unknown, redacted: unknown, redact: <T>(value: T) => T): PendingRequest {
  const copy = jsonCopy(request);
  if (typeof copy !== 'object' || copy === null) return copy;
  copy.prompt = redact(copy.prompt);
  if (copy.url !== undefined) copy.url = redact(copy.url);
  // A data field named like a redacted argument is redacted whatever its value (it may hold it reformatted).
  if (copy.data !== undefined) copy.data = redact(redactLike(copy.data, original, redacted));
  return copy;
}

/** The answer's data and reason redacted; its id and ok kept. */
function redactAnswer<A extends { data?: Record<string, unknown>; reason?: unknown }>(answer: A, redact: <T>(value: T) => T): A {
  const copy = jsonCopy(answer);
  if (typeof copy !== 'object' || copy === null) return copy;
  if (copy.data !== undefined) copy.data = redact(copy.data);
  if (typeof copy.reason === 'string') copy.reason = redact(copy.reason);
  return copy;
}

/** A JSON copy; a value JSON cannot copy (a cycle, a BigInt) reads {@link REDACTED}, failing closed. */
function jsonCopy<T>(value: T): T {
  try {
    const text = JSON.stringify(value);
    return (text === undefined ? value : JSON.parse(text)) as T;
  } catch {
    return REDACTED as T;
  }
}

/** The request's data with the fields redacted that are redacted in the arguments under the same name. */
function redactLike(data: Record<string, unknown>, original: unknown, redacted: unknown): Record<string, unknown> {
  if (typeof data !== 'object' || data === null) return data;
  if (typeof original !== 'object' || original === null || typeof redacted !== 'object' || redacted === null) return data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const was = (original as Record<string, unknown>)[key];
    const now = (redacted as Record<string, unknown>)[key];
    out[key] = was !== undefined && was !== now ? now : value;
  }
  return out;
}
