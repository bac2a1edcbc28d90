import type { IncomingMessage } from 'node:http';
import { AlreadyResolvedError, AnswerRefusedError, InvalidAnswerError, RunNotFoundError, UnknownSuspensionError } from '../errors';
import { cancelRun } from '../runner/core/cancel';
import { runStoreOf } from '../runner/durability/memory';
import type { RunStore } from '../runner/core/store';
import type { Answer } from '../results/wire';
import type { AgentRunner } from '../runner/agent-runner';
import { answerAs } from '../runner/answer-as';
import type { RunResult } from '../runner/core/types';
import { MAX_COMMENT_LENGTH, type Principal } from '../suspension/audit';
import type { ResumeCoordinator } from '../suspension/coordinator';
import { isSettled, isSuspensionStatus } from '../suspension/status';
import type { SuspendedCall, SuspensionStatus } from '../suspension/store';
import {
  AnsweredByOtherError,
  InboxBadRequestError,
  InboxError,
  InboxForbiddenError,
  InboxInvalidInputError,
  InboxNotFoundError,
  SuspensionExpiredError,
} from './errors';
import { declaredFields, inputFields, inputProblems } from './input-schema';
import type { InboxLogEntry, InboxOptions } from './options';
import type { AnswerAction } from '../suspension/policy';
import { Redactor, viewOf, type SuspensionView } from './view';
import type { Grant } from '../suspension/grants';
import type { InputField } from './input-schema';
import { deliveryViewsOf } from '../deliveries/view';

/** The most deliveries one suspension's view lists (a route names a few places; this bounds a bad one). */
const MAX_VIEWED_DELIVERIES = 50;

/** A standing grant as the inbox shows it, with whether the viewer may revoke it. */
export interface GrantView extends Grant {
  mayRevoke: boolean;
}

/** Which suspensions a list shows: `open` (pending and resolving), `settled` (the history), or one status. */
export type InboxStatusFilter = 'open' | 'settled' | SuspensionStatus;

/** A list query. */
export interface InboxQuery {
  status: InboxStatusFilter;
  kind?: string;
  runId?: string;
  limit: number;
}

/** What answering returned: the suspension afterwards and, for a run's suspension, where the run is. */
export interface AnswerOutcome {
  suspension: SuspensionView;
  run?: { runId: string; status: RunResult['status']; text: string };
}

/** What the inbox does, HTTP aside: list, show, answer and cancel for one principal. */
export class InboxService {
  readonly coordinator: ResumeCoordinator;
  private readonly runner?: AgentRunner;
  private readonly redactor: Redactor;
  private readonly context: InboxOptions['context'];
  private readonly log: InboxOptions['log'];
  private readonly now: () => number;

  constructor(
    options: Pick<InboxOptions, 'runner' | 'coordinator' | 'context' | 'log' | 'clock'>,
    private readonly announce: () => void,
  ) {
    this.now = options.clock ?? Date.now;
    this.runner = options.runner;
    this.coordinator = (options.runner?.coordinator ?? options.coordinator) as ResumeCoordinator;
    this.redactor = new Redactor(this.coordinator.toolkit);
    this.context = options.context;
    this.log = options.log;
  }

  /** Newest first: open calls by when they were asked, settled ones by when they settled. */
  async list(principal: Principal, query: InboxQuery): Promise<SuspensionView[]> {
    const where = { ...(query.kind ? { kind: query.kind } : {}), ...(query.runId ? { runId: query.runId } : {}) };
    let calls: SuspendedCall[];
    if (query.status === 'settled' || (query.status !== 'open' && isSettled(query.status))) {
      const status = query.status === 'settled' ? {} : { status: query.status };
      calls = await this.coordinator.history({ ...where, ...status, limit: query.limit });
    } else {
      const statuses: SuspensionStatus[] = query.status === 'open' ? ['pending', 'resolving'] : [query.status];
      calls = (await Promise.all(statuses.map((status) => this.coordinator.list({ status, ...where })))).flat();
      calls.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
      calls = calls.slice(0, query.limit);
    }
    return Promise.all(calls.map(async (call) => this.view(principal, call)));
  }

  async get(principal: Principal, id: string): Promise<SuspensionView> {
    return this.view(principal, await this.call(id));
  }

  /**
   * Answers a suspension as `principal`, recording them (and `comment`) with the claim. A
   * run's suspension resumes its run here when the inbox has the runner.
   */
  async answer(request: IncomingMessage, principal: Principal, id: string, body: Record<string, unknown>): Promise<AnswerOutcome> {
    const comment = commentOf(body.comment);
    const answer = answerOf(id, body);
    return this.give(request, principal, answer, comment, 'answer');
  }

  /** Cancels a pending suspension as `principal`: the call never runs, and its run (if any) is told so. */
  async cancel(request: IncomingMessage, principal: Principal, id: string, body: Record<string, unknown>): Promise<AnswerOutcome> {
    const reason = commentOf(body.reason);
    const answer: Answer =
      reason === undefined ? { id, ok: false, reason: 'cancelled' } : { id, ok: false, reason: 'cancelled', data: { reason } };
    return this.give(request, principal, answer, reason, 'cancel');
  }

  /**
   * Cancels a run as `principal` (docs/agents.md, "Cancel"): its open requests settle
   * `cancelled` under the answer policy, and nothing continues it. Through the inbox's runner
   * when it has one (a run it drives now is aborted), else with the stores alone.
   */
  async cancelRun(principal: Principal, runId: string, body: Record<string, unknown>): Promise<{ runId: string; status: string }> {
    const reason = commentOf(body.reason);
    const options = { ...(reason === undefined ? {} : { reason }), audit: { by: principal } };
    const runs = runStoreOf(this.coordinator.store);
    if (!this.runner && (typeof runs?.loadRun !== 'function' || typeof runs.saveRun !== 'function'))
      throw new InboxBadRequestError('this inbox has no run store to cancel runs in');
    let result: RunResult;
    try {
      result = this.runner ? await this.runner.cancel(runId, options) : await cancelRun(this.coordinator, runs as RunStore, runId, options);
    } catch (error) {
      if (error instanceof RunNotFoundError) throw new InboxNotFoundError(`no run ${runId}`);
      throw error;
    }
    this.announce();
    return { runId, status: result.status };
  }

  private async give(
    request: IncomingMessage,
    principal: Principal,
    answer: Answer,
    comment: string | undefined,
    action: AnswerAction,
  ): Promise<AnswerOutcome> {
    const before = await this.call(answer.id);
    try {
      // Who may answer is the coordinator's policy, judged on the answer's path (docs/who-may-answer.md).
      this.checkStillOpen(before, principal);
      if (answer.ok) this.checkInput(before, answer);
      const run = await this.apply(request, principal, answer, comment, before);
      const after = await this.call(answer.id);
      this.checkWinner(after, principal);
      if (after.status === 'expired') throw new SuspensionExpiredError(answer.id);
      this.announce();
      this.record(action === 'cancel' ? 'cancelled' : 'answered', after, principal, after.status);
      const outcome: AnswerOutcome = { suspension: await this.view(principal, after) };
      // The run's text may quote an argument: redacted like everything else the inbox shows.
      if (run) outcome.run = { runId: run.runId, status: run.status, text: this.redactor.forCall(after).redact(run.text) };
      return outcome;
    } catch (error) {
      this.record(
        'refused',
        before,
        principal,
        error instanceof InboxError || error instanceof AlreadyResolvedError || error instanceof AnswerRefusedError ? error.code : 'error',
      );
      throw error;
    }
  }

  private async apply(
    request: IncomingMessage,
    principal: Principal,
    answer: Answer,
    comment: string | undefined,
    before: SuspendedCall,
  ): Promise<RunResult | undefined> {
    const context = this.context?.(request, principal);
    // The one "answer as a principal" operation the CLI and MCP use too (docs/design.md), given
    // the call as just read, so the path of the answer does not read it again before its claim.
    const answered = await answerAs(this.runner ?? this.coordinator, answer, {
      by: principal,
      call: before,
      ...(comment === undefined ? {} : { comment }),
      ...(context ? { context } : {}),
    });
    if (!answered.won) throw new AnsweredByOtherError(answer.id, answered.call.status, answered.winner);
    return answered.run?.result;
  }

  /** Refuses early what can no longer be answered by this principal, before anything is claimed. */
  private checkStillOpen(call: SuspendedCall, principal: Principal): void {
    if (call.status === 'expired') throw new SuspensionExpiredError(call.request.id);
    if (call.status !== 'pending') this.checkWinner(call, principal);
  }

  /** A call claimed or settled by someone else is theirs: 409 naming them. The same principal again is a retry. */
  private checkWinner(call: SuspendedCall, principal: Principal): void {
    if (call.status === 'pending') return;
    const winner = answeredByOf(call);
    if (winner === undefined || winner.id !== principal.id) throw new AnsweredByOtherError(call.request.id, call.status, winner);
  }

  private checkInput(call: SuspendedCall, answer: Answer): void {
    if (call.request.kind !== 'input' && call.request.kind !== 'question') return;
    const fields = inputFields(call.request.data) ?? [{ name: 'answer', type: 'string' as const, required: true }];
    const problems = inputProblems(fields, answer.data, declaredFields(call.request.data));
    if (problems.length > 0) throw new InboxInvalidInputError(call.request.id, problems);
  }

  private async call(id: string): Promise<SuspendedCall> {
    const call = await this.coordinator.get(id);
    if (!call) throw new UnknownSuspensionError(id);
    return call;
  }

  private async view(principal: Principal, call: SuspendedCall): Promise<SuspensionView> {
    const actions = await this.coordinator.actionsOf(principal, call);
    const toolFields = this.toolFields(call.tool);
    const view = viewOf(call, this.redactor, { actions, now: this.now(), ...(toolFields ? { toolFields } : {}) });
    // Delivery failures are visible where people answer (docs/channels.md, "What is stored"): on
    // an open call only (the page shows them on open cards, so settled history costs no query per
    // row), and the error's words (a platform's or mail transport's, which may hold URLs) only to
    // a viewer who may act on the call.
    if (call.status === 'pending' || call.status === 'resolving') {
      const shown = (await deliveryViewsOf(this.coordinator.store, call.request.id, MAX_VIEWED_DELIVERIES)) ?? [];
      if (actions.length === 0) for (const row of shown) delete row.error;
      if (shown.length > 0) view.deliveries = shown;
    }
    return view;
  }

  /** The fields of a tool's input schema the page can render as a form (the edit form's fields). */
  private toolFields(tool: string): InputField[] | undefined {
    const registered = this.coordinator.toolkit.get(tool);
    return registered ? inputFields({ schema: registered.inputSchema }) : undefined;
  }

  /** The live and past grants, newest first, each saying whether `principal` may revoke it. */
  async grants(principal: Principal): Promise<GrantView[]> {
    const grants = await this.coordinator.grants();
    const views = await Promise.all(grants.map(async (grant) => ({ ...grant, mayRevoke: await this.mayRevoke(principal, grant) })));
    return views.reverse();
  }

  /**
   * Revokes a grant as `principal`: allowed to the one who gave it and, under an answer policy,
   * to whoever the policy lets approve the grant's tool (without a policy, to anyone signed in,
   * as answering is). Revoking only takes an approval back, so no separation of duties applies.
   */
  async revoke(principal: Principal, grantId: string): Promise<GrantView> {
    const grant = (await this.coordinator.grants()).find((g) => g.id === grantId);
    if (!grant) throw new InboxNotFoundError(`no grant ${grantId}`);
    if (!(await this.mayRevoke(principal, grant))) {
      this.recordGrant('refused', grant, principal);
      throw new InboxForbiddenError(`${principal.name ?? principal.id} may not revoke grant ${grantId} (${grant.tool})`);
    }
    if (grant.revokedAt === undefined) await this.coordinator.revoke(grantId);
    this.announce();
    this.recordGrant('revoked', grant, principal);
    const after = (await this.coordinator.grants()).find((g) => g.id === grantId) ?? grant;
    return { ...after, mayRevoke: false };
  }

  private async mayRevoke(principal: Principal, grant: Grant): Promise<boolean> {
    if (grant.revokedAt !== undefined) return false;
    if (grant.by.id === principal.id || !this.coordinator.hasPolicy) return true;
    // Judged as an approval of a call of the grant's tool: who may approve it may take a standing approval of it back.
    const probe: SuspendedCall = {
      request: { id: `revoke-${grant.id}`, kind: 'approval', prompt: `revoke ${grant.id}` },
      tool: grant.tool,
      args: {},
      status: 'pending',
      createdAt: grant.createdAt,
    };
    return (await this.coordinator.actionsOf(principal, probe)).includes('answer');
  }

  private recordGrant(event: 'revoked' | 'refused', grant: Grant, principal: Principal): void {
    if (!this.log) return;
    try {
      const status = event === 'refused' ? 'TOOLNEXUS_INBOX_FORBIDDEN' : 'revoked';
      this.log({ event, id: grant.id, tool: grant.tool, kind: 'grant', principal: { ...principal }, status });
    } catch {
      // A failing logger must not turn a revocation that was applied into an error.
    }
  }

  private record(event: InboxLogEntry['event'], call: SuspendedCall, principal: Principal, status: string): void {
    if (!this.log) return;
    const { args } = this.redactor.forCall(call);
    try {
      this.log({ event, id: call.request.id, tool: call.tool, kind: call.request.kind, principal: { ...principal }, status, args });
    } catch {
      // A failing logger must not turn an answer that was applied into an error.
    }
  }
}

/** Reads a list query from URL search parameters. */
export function queryOf(params: URLSearchParams, historyLimit: number): InboxQuery {
  const status = params.get('status') ?? 'open';
  if (status !== 'open' && status !== 'settled' && !isSuspensionStatus(status)) {
    throw new InboxBadRequestError(`unknown status filter: ${JSON.stringify(status.slice(0, 40))} (open, settled, or a status)`);
  }
  const query: InboxQuery = { status, limit: historyLimit };
  const kind = params.get('kind');
  const runId = params.get('runId');
  if (kind) query.kind = kind.slice(0, 200);
  if (runId) query.runId = runId.slice(0, 512);
  const limit = params.get('limit');
  if (limit !== null) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1) throw new InboxBadRequestError('limit must be a positive integer');
    query.limit = Math.min(n, 500);
  }
  return query;
}

function answeredByOf(call: SuspendedCall | undefined): Principal | undefined {
  const by = call?.answeredBy;
  return by ? { ...by } : undefined;
}

function commentOf(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new InboxBadRequestError('comment and reason must be text');
  if (value.length > MAX_COMMENT_LENGTH)
    throw new InboxBadRequestError(`comment and reason must be at most ${MAX_COMMENT_LENGTH} characters`);
  return value;
}

/** The body as an Answer for `id`: `{ ok, data?, reason?, id? }`; an `id` other than the path's is refused. */
function answerOf(id: string, body: Record<string, unknown>): Answer {
  if (body.id !== undefined && body.id !== id) throw new InvalidAnswerError('the answer names another suspension than the URL');
  if (typeof body.ok !== 'boolean') throw new InvalidAnswerError('invalid answer: ok must be true or false');
  const answer: Answer = { id, ok: body.ok };
  if (body.data !== undefined) answer.data = body.data as Record<string, unknown>;
  if (body.reason !== undefined) answer.reason = body.reason as Answer['reason'];
  // Edited arguments: the coordinator checks them by the tool's DTO (docs/who-may-answer.md, "Edit").
  if (body.args !== undefined) answer.args = body.args as Record<string, unknown>;
  if (answer.ok && answer.reason !== undefined) throw new InvalidAnswerError('invalid answer: an ok answer has no reason');
  if (!answer.ok && answer.reason === undefined) answer.reason = 'declined';
  return answer;
}
