import { escalationOf } from '../suspension/escalation';
import { quorumOf } from '../suspension/quorum';
import type { Signature } from '../results/wire';
import type { Principal } from '../suspension/audit';
import type { SuspendedCall, SuspensionStatus } from '../suspension/store';
import { Redactor } from '../suspension/redact';
import { inputFields, type InputField } from './input-schema';
import type { AnswerAction } from '../suspension/policy';
import type { Receipt } from '../toolkit/context';
import type { DeliveryView } from '../deliveries/view';

/** One suspension as the inbox's API and page show it: sensitive values redacted, nothing stored beyond what helps decide. */
export interface SuspensionView {
  id: string;
  kind: string;
  prompt: string;
  /** An `authorization` request's URL (http and https only). */
  url?: string;
  expiresAt?: string;
  /** The request's `data` without its schema, sensitive values redacted. */
  data?: Record<string, unknown>;
  /** The form an `input`/`question` asks for. */
  fields?: InputField[];
  /**
   * Who or what asked: the principal the run was made for (`SuspendedCall.requestedBy`), else
   * `data.requestedBy` when the tool said, else the tool in its run.
   */
  requestedBy?: string;
  /** A quorum request's approvals so far, and how many it needs (docs/who-may-answer.md, "Quorum"). */
  quorum?: { of: number; from?: readonly string[]; declines?: number; signatures: Signature[] };
  /**
   * When the request escalates (RFC 3339), to whom, and whether it has by the inbox's clock
   * (docs/who-may-answer.md, "Escalation"): the page shows what the server says, never its own time.
   */
  escalation?: { at: string; to: readonly string[]; escalated: boolean };
  /**
   * The form for approving with edited arguments, where the request allows an edit and the
   * viewer may approve it (docs/who-may-answer.md, "Edit"): the tool's fields, filled with the
   * arguments as asked. A `@Sensitive()` value is left empty (it is never sent to the page).
   * The tool's DTO checks the edit on the server; the page checks the same fields first.
   */
  edit?: { fields: InputField[]; values: Record<string, unknown> };
  tool: string;
  /** The call's arguments, `@Sensitive()` fields redacted. */
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
  /** What downstream systems answered the call's attempts (`ctx.receipt`), oldest first: what a person checks before a recovery. */
  receipts?: Receipt[];
  /**
   * Where the channels delivered the request and how each went (docs/channels.md, "What is
   * stored"): present when the coordinator's store keeps deliveries and the request has any.
   */
  deliveries?: DeliveryView[];
  /** What the viewer may do now. */
  actions: AnswerAction[];
}

export { Redactor };

/** What a view needs besides the call: the viewer's actions, the inbox's time, the tool's fields. */
export interface ViewContext {
  actions: AnswerAction[];
  /** The inbox's clock, in ms since the epoch. */
  now: number;
  /** The fields of the called tool's input schema, when it has a form the inbox can render. */
  toolFields?: InputField[];
}

/** The view of `call` for a viewer in `context`. */
export function viewOf(call: SuspendedCall, redactor: Redactor, context: ViewContext): SuspensionView {
  const { actions } = context;
  // The one redaction path (src/suspension/redact.ts): what the inbox shows is what the CLI, webhooks and MCP show.
  const shown = redactor.call(call);
  const request = shown.request;
  const view: SuspensionView = {
    id: request.id,
    kind: request.kind,
    prompt: request.prompt,
    tool: call.tool,
    args: shown.args,
    status: call.status,
    createdAt: call.createdAt,
    actions,
  };
  if (typeof request.url === 'string' && /^https?:\/\//i.test(request.url)) view.url = request.url;
  if (request.expiresAt !== undefined) view.expiresAt = request.expiresAt;
  if (request.data) {
    const { schema: _schema, ...rest } = request.data;
    if (Object.keys(rest).length > 0) view.data = rest;
    // The form is built from the schema as asked: redacting its words could change the fields it asks for.
    const fields = call.request.data ? inputFields(call.request.data) : undefined;
    if (fields) view.fields = fields;
    if (typeof request.data.requestedBy === 'string') view.requestedBy = request.data.requestedBy;
  }
  if (!view.fields && (request.kind === 'input' || request.kind === 'question')) {
    view.fields = [{ name: 'answer', type: 'string', required: true, title: 'Answer' }];
  }
  if (call.requestedBy) view.requestedBy = call.requestedBy.name ?? call.requestedBy.id;
  const quorum = quorumOf(call.request);
  const escalation = escalationOf(call.request);
  if (escalation)
    view.escalation = { at: new Date(escalation.at).toISOString(), to: [...escalation.to], escalated: context.now >= escalation.at };
  const edit = editForm(call, shown.args, context);
  if (edit) view.edit = edit;
  if (quorum) view.quorum = { ...quorum, signatures: (call.signatures ?? []).map((s) => ({ ...s, by: { ...s.by } })) };
  view.requestedBy ??= call.runId === undefined ? `tool ${call.tool}` : `tool ${call.tool} in run ${call.runId}`;
  if (call.runId !== undefined) view.runId = call.runId;
  if (call.callId !== undefined) view.callId = call.callId;
  if (call.updatedAt !== undefined) view.updatedAt = call.updatedAt;
  if (call.answeredBy) view.answeredBy = { ...call.answeredBy };
  if (call.answeredAt !== undefined) view.answeredAt = call.answeredAt;
  if (shown.comment !== undefined) view.comment = shown.comment;
  if (call.answer)
    view.answer = call.answer.reason === undefined ? { ok: call.answer.ok } : { ok: call.answer.ok, reason: call.answer.reason };
  if (call.receipts && call.receipts.length > 0) view.receipts = call.receipts.map((receipt) => ({ ...receipt }));
  if (shown.outcome && call.status !== 'pending' && call.status !== 'resolving') {
    view.outcome = { isError: shown.outcome.isError, output: shown.outcome.output };
  }
  return view;
}

/** The edit form of an editable approval the viewer may approve; none for a quorum (its arguments are fixed). */
function editForm(call: SuspendedCall, shownArgs: unknown, context: ViewContext): SuspensionView['edit'] {
  const { request } = call;
  if (request.kind !== 'approval' || request.data?.editable !== true || quorumOf(request)) return undefined;
  if (!context.actions.includes('answer') || !context.toolFields || context.toolFields.length === 0) return undefined;
  const asked = isRecord(call.args) ? call.args : {};
  const shown = isRecord(shownArgs) ? shownArgs : {};
  const values: Record<string, unknown> = {};
  for (const field of context.toolFields) {
    // A value the redaction changed is sensitive: the page gets nothing of it and asks for it again.
    if (field.name in asked && JSON.stringify(asked[field.name]) === JSON.stringify(shown[field.name])) {
      values[field.name] = asked[field.name];
    }
  }
  return { fields: context.toolFields, values };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
