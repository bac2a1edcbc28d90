import type { Principal } from '../suspension/audit';
import type { SuspendedCall, SuspensionStatus } from '../suspension/store';
import { REDACTED } from '../toolkit/redaction';
import type { Toolkit } from '../toolkit/toolkit';
import { inputFields, type InputField } from './input-schema';
import type { InboxAction } from './rules';

/** One suspension as the inbox's API and page show it: sensitive values masked, nothing stored beyond what helps decide. */
export interface SuspensionView {
  id: string;
  kind: string;
  prompt: string;
  /** An `authorization` request's URL (http and https only). */
  url?: string;
  expiresAt?: string;
  /** The request's `data` without its schema, sensitive values masked. */
  data?: Record<string, unknown>;
  /** The form an `input`/`question` asks for. */
  fields?: InputField[];
  /** Who or what asked: `data.requestedBy` when the tool said, else the tool in its run. */
  requestedBy?: string;
  tool: string;
  /** The call's arguments, `@Sensitive()` fields masked. */
  args: unknown;
  runId?: string;
  callId?: string;
  status: SuspensionStatus;
  createdAt: string;
  updatedAt?: string;
  answeredBy?: Principal;
  answeredAt?: string;
  comment?: string;
  /** How it was answered: approved/submitted (`ok`) or the refusal's reason. */
  answer?: { ok: boolean; reason?: string };
  /** The settled outcome's text. */
  outcome?: { isError: boolean; output: string };
  /** What the viewer may do now. */
  actions: InboxAction[];
}

/** What masks a sensitive value everywhere the inbox shows one: the toolkit's own mark. */
const MASK = REDACTED;

/**
 * Masks what the toolkit marks sensitive: the DTO's `@Sensitive()` fields in the arguments,
 * and every other place the same values appear (the prompt, the request's data, the outcome),
 * since a tool may well have copied an argument into its prompt.
 */
export class Redactor {
  constructor(private readonly toolkit: Toolkit) {}

  /** The call's masked arguments and a function masking its sensitive values in any text. */
  forCall(call: SuspendedCall): { args: unknown; scrub: <T>(value: T) => T } {
    const args = this.redactArgs(call.tool, call.args);
    const secrets = new Set<string>();
    collectMasked(call.args, args, secrets);
    const list = [...secrets].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length);
    const scrubText = (text: string) => list.reduce((out, secret) => out.split(secret).join(MASK), text);
    const scrub = <T>(value: T): T => deepMap(value, scrubText) as T;
    return { args, scrub };
  }

  private redactArgs(tool: string, args: unknown): unknown {
    return this.toolkit.redact(tool, args);
  }
}

/** The view of `call` for a viewer allowed `actions`. */
export function viewOf(call: SuspendedCall, redactor: Redactor, actions: InboxAction[]): SuspensionView {
  const { args, scrub } = redactor.forCall(call);
  const request = call.request;
  const view: SuspensionView = {
    id: request.id,
    kind: request.kind,
    prompt: scrub(request.prompt),
    tool: call.tool,
    args: scrub(args),
    status: call.status,
    createdAt: call.createdAt,
    actions,
  };
  if (typeof request.url === 'string' && /^https?:\/\//i.test(request.url)) view.url = scrub(request.url);
  if (request.expiresAt !== undefined) view.expiresAt = request.expiresAt;
  if (request.data) {
    const { schema: _schema, ...rest } = request.data;
    if (Object.keys(rest).length > 0) view.data = scrub(maskLike(rest, call.args, args));
    const fields = inputFields(request.data);
    if (fields) view.fields = fields;
    if (typeof request.data.requestedBy === 'string') view.requestedBy = scrub(request.data.requestedBy);
  }
  if (!view.fields && (request.kind === 'input' || request.kind === 'question')) {
    view.fields = [{ name: 'answer', type: 'string', required: true, title: 'Answer' }];
  }
  view.requestedBy ??= call.runId === undefined ? `tool ${call.tool}` : `tool ${call.tool} in run ${call.runId}`;
  if (call.runId !== undefined) view.runId = call.runId;
  if (call.callId !== undefined) view.callId = call.callId;
  if (call.updatedAt !== undefined) view.updatedAt = call.updatedAt;
  if (call.answeredBy) view.answeredBy = { ...call.answeredBy };
  if (call.answeredAt !== undefined) view.answeredAt = call.answeredAt;
  if (call.comment !== undefined) view.comment = scrub(call.comment);
  if (call.answer)
    view.answer = call.answer.reason === undefined ? { ok: call.answer.ok } : { ok: call.answer.ok, reason: call.answer.reason };
  if (call.outcome && call.status !== 'pending' && call.status !== 'resolving') {
    view.outcome = { isError: call.outcome.isError, output: scrub(call.outcome.output) };
  }
  return view;
}

/** Adds to `out` every string (or number) in `original` that `masked` replaced. */
function collectMasked(original: unknown, masked: unknown, out: Set<string>): void {
  if (original === masked) return;
  if (typeof original === 'string' || typeof original === 'number') {
    if (masked !== original) out.add(String(original));
    return;
  }
  if (typeof original !== 'object' || original === null) return;
  if (typeof masked !== 'object' || masked === null) {
    deepMap(original, (text) => (out.add(text), text));
    return;
  }
  for (const [key, value] of Object.entries(original)) collectMasked(value, (masked as Record<string, unknown>)[key], out);
}

/** The request's data with the fields masked that are masked in the arguments under the same name. */
function maskLike(data: Record<string, unknown>, original: unknown, masked: unknown): Record<string, unknown> {
  if (typeof original !== 'object' || original === null || typeof masked !== 'object' || masked === null) return data;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    const was = (original as Record<string, unknown>)[key];
    const now = (masked as Record<string, unknown>)[key];
    out[key] = was !== undefined && was !== now ? now : value;
  }
  return out;
}

/** A copy of a JSON value with every string passed through `map`. */
function deepMap(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => deepMap(item, map));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = deepMap(item, map);
    return out;
  }
  return value;
}
