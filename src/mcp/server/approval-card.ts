import { AnswerRefusedError } from '../../errors';
import { messageOf } from '../../errors/message';
import type { Answer, ToolResult } from '../../results/wire';
import { answerAs } from '../../runner/answer-as';
import type { Principal } from '../../suspension/audit';
import type { ResumeCoordinator } from '../../suspension/coordinator';
import { approvalsOf, quorumOf } from '../../suspension/quorum';
import { Redactor } from '../../suspension/redact';
import type { SuspendedCall } from '../../suspension/store';
import { formSchemaOf, type FormField } from './elicitation';
import { APPROVAL_CARD_HTML } from './approval-card-page';
import type { McpCallResult } from './results';
import type { McpToolContext } from './types';

/** The `ui://` resource of the approval card (MCP Apps, SEP-1865): one static card for every tool. */
export const APPROVAL_CARD_URI = 'ui://toolnexus/approval-card';
/** The MIME type MCP Apps hosts render (`RESOURCE_MIME_TYPE` of `@modelcontextprotocol/ext-apps`). */
export const APPROVAL_CARD_MIME = 'text/html;profile=mcp-app';
/** The app-only tool the card reads a call through. */
export const CARD_STATUS_TOOL = 'toolnexus_approval_status';
/** The app-only tool the card answers through: an answer as the caller, like every door's. */
export const CARD_ANSWER_TOOL = 'toolnexus_answer_approval';
/** The MCP Apps extension, as a client (host) declares it in its capabilities. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';

/** What `tools/list` adds for the card: the two app-only tools (hidden from the model by MCP Apps hosts). */
export function cardToolListings(): Array<{
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required: string[] };
  _meta: Record<string, unknown>;
}> {
  const app = { ui: { resourceUri: APPROVAL_CARD_URI, visibility: ['app'] } };
  return [
    {
      name: CARD_STATUS_TOOL,
      description:
        'The approval card reads a waiting call, by its id or by the tool and arguments of the call it was shown for: the call redacted, who may answer, quorum, expiry, whether the caller may answer',
      inputSchema: {
        type: 'object',
        properties: { id: { type: 'string', maxLength: 200 }, tool: { type: 'string', maxLength: 200 }, arguments: { type: 'object' } },
        required: [],
      },
      _meta: app,
    },
    {
      name: CARD_ANSWER_TOOL,
      description: 'The approval card answers a waiting call as the caller, judged by the answer policy',
      inputSchema: {
        type: 'object',
        properties: {
          id: { type: 'string', maxLength: 200 },
          decision: { type: 'string', enum: ['approve', 'decline'] },
          args: { type: 'object' },
        },
        required: ['id', 'decision'],
      },
      _meta: app,
    },
  ];
}

/** The `_meta` of a served tool that needs approval: where an MCP Apps host finds its card. */
export function cardToolMeta(): Record<string, unknown> {
  return { ui: { resourceUri: APPROVAL_CARD_URI } };
}

/** The card's resource as `resources/list` shows it. */
export function cardResourceListing(): { uri: string; name: string; description: string; mimeType: string } {
  return {
    uri: APPROVAL_CARD_URI,
    name: 'approval_card',
    description: 'The approval card: a waiting call, who may answer it, and its approve and decline buttons',
    mimeType: APPROVAL_CARD_MIME,
  };
}

/** The card's `resources/read` contents: self-contained HTML (no network: the host's default CSP applies). */
export function cardContents(): Array<{ uri: string; mimeType: string; text: string; _meta: Record<string, unknown> }> {
  return [{ uri: APPROVAL_CARD_URI, mimeType: APPROVAL_CARD_MIME, text: APPROVAL_CARD_HTML, _meta: { ui: { prefersBorder: true } } }];
}

/** Whether a `tools/call` is one of the card's own tools. */
export function isCardTool(name: string): boolean {
  return name === CARD_STATUS_TOOL || name === CARD_ANSWER_TOOL;
}

/** Whether a client declared it renders MCP Apps HTML (the `io.modelcontextprotocol/ui` extension). */
export function rendersApps(capabilities: Record<string, unknown> | undefined): boolean {
  const extensions = capabilities?.extensions as Record<string, unknown> | undefined;
  const ui = extensions?.[UI_EXTENSION] as { mimeTypes?: unknown } | undefined;
  return Array.isArray(ui?.mimeTypes) && ui.mimeTypes.includes(APPROVAL_CARD_MIME);
}

/** A waiting call as the card shows it: every value redacted, and what the viewer may do. */
export interface ApprovalCardView {
  id: string;
  tool: string;
  title?: string;
  kind: string;
  prompt: string;
  status: string;
  /** The call's arguments, `@Sensitive` values `[redacted]`. */
  args: unknown;
  requestedBy?: string;
  /** Whether the viewer may approve or decline it now (the answer policy's decision; judged again on the answer). */
  mayAnswer: boolean;
  /** Why the viewer may not, when the policy refused. */
  refused?: string;
  /** Who may answer, when the request names them (a quorum's `from`, an escalation's `to`). */
  answerers?: string[];
  quorum?: { of: number; approvals: string[] };
  expiresAt?: string;
  /** The edit form (from the DTO's schema) of an editable approval the viewer may give; sensitive values left out. */
  edit?: { fields: Record<string, FormField>; required?: string[]; values: Record<string, unknown> };
  /** Who gave the answer that settled it. */
  answeredBy?: string;
  outcome?: { isError: boolean; output: string };
}

/**
 * Serves one call of the card's tools as the request's authenticated principal `by` (serveMcp's
 * `authorize`, never a name the client gives itself). The status is read from the store; an
 * answer goes through `answerAs`, the path of every door's answers: the answer policy judges
 * `by`, a refused answer is an error result and changes nothing, an allowed one claims the
 * call and replays it exactly once.
 */
export async function serveCardTool(
  coordinator: ResumeCoordinator,
  name: string,
  args: Record<string, unknown>,
  by: Principal,
  ctx: McpToolContext,
): Promise<McpCallResult> {
  try {
    // At 2026-07-28 the host gives the card no result while the call waits (it answers input_required):
    // the card asks by the tool and arguments MCP Apps hands every view (hostContext.toolInfo, tool-input).
    if (name === CARD_STATUS_TOOL && args.id === undefined && typeof args.tool === 'string' && isRecord(args.arguments)) {
      const found = await waitingFor(coordinator, args.tool.slice(0, 200), args.arguments, by);
      if (!found) return problem(`no waiting approval of ${args.tool.slice(0, 200)} with these arguments`);
      const view = await viewOf(coordinator, found, by);
      return { content: [{ type: 'text', text: `${view.prompt} (${view.status})` }], structuredContent: { ...view } };
    }
    const id = args.id;
    if (typeof id !== 'string' || id === '' || id.length > 200) return problem('id must be a suspension id');
    const stored = await coordinator.get(id);
    // One answer for "no such call", "not an approval" and "not yours to see": ids cannot be probed.
    if (!stored || stored.request.kind !== 'approval' || !(await mayView(coordinator, stored, by))) return problem(`no approval ${id}`);
    if (name === CARD_STATUS_TOOL) {
      const view = await viewOf(coordinator, stored, by);
      return { content: [{ type: 'text', text: `${view.prompt} (${view.status})` }], structuredContent: { ...view } };
    }
    const decision = args.decision;
    if (decision !== 'approve' && decision !== 'decline') return problem('decision must be approve or decline');
    // Settled already (a double click, a replayed post): the stored outcome, and nothing runs.
    if (stored.outcome && stored.status !== 'pending' && stored.status !== 'resolving')
      return shownOutcome(coordinator, stored, stored.outcome);
    const answer: Answer =
      decision === 'decline'
        ? { id, ok: false, reason: 'declined' }
        : isRecord(args.args)
          ? { id, ok: true, args: args.args }
          : { id, ok: true };
    const answered = await answerAs(coordinator, answer, { by, context: ctx, signal: ctx.signal });
    if (answered.call.status === 'pending') {
      const view = await viewOf(coordinator, answered.call, by);
      return {
        content: [{ type: 'text', text: `signed: ${view.quorum?.approvals.length ?? 0} of ${view.quorum?.of ?? 1}` }],
        structuredContent: { ...view },
      };
    }
    return shownOutcome(coordinator, answered.call, answered.outcome ?? { output: `the call is ${answered.call.status}`, isError: true });
  } catch (error) {
    if (error instanceof AnswerRefusedError) return problem(error.message);
    return problem(messageOf(error));
  }
}

/**
 * The waiting approval a card shown for `tool` with `args` is about, as `by` may see it: `by`'s
 * own call with those arguments (the newest: the one the host just made), else the oldest such
 * call `by` may see (one `by` may approve). The answer is still given by id and judged as any.
 */
async function waitingFor(
  coordinator: ResumeCoordinator,
  tool: string,
  args: Record<string, unknown>,
  by: Principal,
): Promise<SuspendedCall | undefined> {
  const wanted = canonical(args);
  const matching = (await coordinator.list({ status: 'pending', kind: 'approval' })).filter(
    (call) => call.tool === tool && canonical(call.args) === wanted,
  );
  const own = matching.filter((call) => call.requestedBy?.id === by.id);
  if (own.length > 0) return own[own.length - 1];
  for (const call of matching) if (await mayView(coordinator, call, by)) return call;
  return undefined;
}

/** JSON with object keys sorted: the same arguments, whatever order the host sent them in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    isRecord(inner)
      ? Object.fromEntries(
          Object.keys(inner)
            .sort()
            .map((key) => [key, inner[key]]),
        )
      : inner,
  );
}

/**
 * Who sees a call on the card: its requester, whoever answered or signed it, and while it waits
 * whoever the answer policy would let approve it. Anyone else is told there is no such approval.
 */
async function mayView(coordinator: ResumeCoordinator, stored: SuspendedCall, by: Principal): Promise<boolean> {
  if (!coordinator.hasPolicy || stored.requestedBy?.id === by.id || stored.answeredBy?.id === by.id) return true;
  if ((stored.signatures ?? []).some((signature) => signature.by.id === by.id)) return true;
  if (stored.status !== 'pending') return false;
  return (await coordinator.decide(by, stored, { id: stored.request.id, ok: true })) === 'allow';
}

async function viewOf(coordinator: ResumeCoordinator, stored: SuspendedCall, by: Principal): Promise<ApprovalCardView> {
  const shown = new Redactor(coordinator.toolkit).call(stored);
  const tool = coordinator.toolkit.get(stored.tool);
  const view: ApprovalCardView = {
    id: stored.request.id,
    tool: stored.tool,
    kind: stored.request.kind,
    prompt: shown.request.prompt,
    status: stored.status,
    args: shown.args ?? {},
    mayAnswer: false,
  };
  if (tool?.title !== undefined) view.title = tool.title;
  if (stored.requestedBy) view.requestedBy = stored.requestedBy.name ?? stored.requestedBy.id;
  if (stored.request.expiresAt !== undefined) view.expiresAt = stored.request.expiresAt;
  const quorum = quorumOf(stored.request);
  if (quorum) {
    view.quorum = { of: quorum.of, approvals: approvalsOf(stored.signatures).map((signature) => signature.by.id) };
    if (quorum.from) view.answerers = [...quorum.from];
  }
  const escalation = stored.request.data?.escalation as { to?: unknown } | undefined;
  if (Array.isArray(escalation?.to)) view.answerers = [...(view.answerers ?? []), ...escalation.to.filter((to) => typeof to === 'string')];
  if (stored.status === 'pending') {
    const decision = coordinator.hasPolicy ? await coordinator.decide(by, stored, { id: stored.request.id, ok: true }) : 'allow';
    view.mayAnswer = decision === 'allow';
    if (decision !== 'allow') view.refused = decision.deny;
  }
  const edit =
    view.mayAnswer && stored.request.data?.editable === true && !quorum ? editOf(tool?.inputSchema, stored.args, shown.args) : undefined;
  if (edit) view.edit = edit;
  if (stored.answeredBy) view.answeredBy = stored.answeredBy.name ?? stored.answeredBy.id;
  if (shown.outcome && stored.status !== 'pending' && stored.status !== 'resolving')
    view.outcome = { isError: shown.outcome.isError, output: shown.outcome.output };
  return view;
}

/** The edit form: the DTO's schema as flat form fields, with the asked values the redaction left as they were. */
function editOf(schema: unknown, asked: unknown, shown: unknown): ApprovalCardView['edit'] {
  const form = formSchemaOf(schema);
  if ('problem' in form) return undefined;
  const values: Record<string, unknown> = {};
  const askedArgs = isRecord(asked) ? asked : {};
  const shownArgs = isRecord(shown) ? shown : {};
  for (const name of Object.keys(form.schema.properties)) {
    // A value the redaction changed is sensitive: the card gets nothing of it and asks for it again.
    if (name in askedArgs && JSON.stringify(askedArgs[name]) === JSON.stringify(shownArgs[name])) values[name] = askedArgs[name];
  }
  return { fields: form.schema.properties, ...(form.schema.required ? { required: form.schema.required } : {}), values };
}

/** The tool's outcome as the card is told it: redacted like every shown copy. */
function shownOutcome(coordinator: ResumeCoordinator, call: SuspendedCall, outcome: ToolResult): McpCallResult {
  const shown = new Redactor(coordinator.toolkit).call({ ...call, outcome }).outcome ?? outcome;
  return { content: [{ type: 'text', text: shown.output }], ...(shown.isError ? { isError: true } : {}) };
}

function problem(text: string): McpCallResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
