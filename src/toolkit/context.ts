import type { Answer, AnsweredRequest, PendingRequest } from '../results/wire';

/**
 * What a replay knows about the answer it carries: which request it answers (and so what
 * kind of thing was asked), the earlier links of the same call's chain, and, on a durable
 * replay, the claim's fencing number.
 */
export interface ReplayInfo {
  /** The request `ctx.answer` answers. `request.id` is the suspension id. */
  request: PendingRequest;
  /** Earlier requests of this call with the answers that replayed them, oldest first. */
  chain: AnsweredRequest[];
  /**
   * The fencing number of the claim this replay runs under (durable replays only). It grows
   * with every takeover, so a side effect keyed on `(request.id, fence)` can refuse a
   * holder that was paused past its lease and woke up after another took over.
   */
  fence?: number;
}

/**
 * The optional, opaque context a tool's `run` receives as its second argument.
 * The Toolkit and the ResumeCoordinator add only what a replay needs (`answer`, `replay`)
 * and, for a tool that requires approval, the approval (`approval`). Everything else is the host's.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
export type ToolContext<TState extends object = {}> = {
  /** Cancellation. */
  signal?: AbortSignal;
  /** This call's deadline in milliseconds. */
  timeout?: number;
  /** Present only on the replay after a suspension resolved. */
  answer?: Answer;
  /** Present with `answer`: what it answers and the chain so far. */
  replay?: ReplayInfo;
  /**
   * The answer that approved this call: its declared approval's, or, for a tool that asks for
   * approval itself, the latest ok answer to one of its `approval` requests. A quorum's carries
   * every signer (`signatures`).
   */
  approval?: Answer;
  /**
   * A key for this call's side effect that stays the same on its first execution, every
   * replay, a retry after a lease takeover and a crash recovery: pass it to a payment API's
   * idempotency header (docs/who-may-answer.md, "Idempotency key"). Present when the call has
   * a run and a call id: every call of an agent run, and `execute` given `runId` and `callId`.
   */
  idempotencyKey?: string;
  /**
   * Records what the downstream system answered (a **receipt**: docs/tools.md, "Idempotency keys
   * and receipts"), written at once to the claimed call in the store, so it survives a crash
   * before the outcome, and kept with the outcome. Present when the call runs under a durable
   * claim (the replay of a suspended call); call it as `await ctx.receipt?.(…)`.
   */
  receipt?: (receipt: ReceiptInit) => Promise<void>;
  /**
   * The receipts earlier attempts of this call recorded (a replay after a crash, or the replay a
   * `recovery` request's approval runs), oldest first: check them before acting again.
   */
  receipts?: readonly Receipt[];
  /**
   * Reports how far a long call has come, to a host that shows it (an MCP client's
   * `notifications/progress`). Present only when someone listens: call it as `ctx.progress?.(…)`.
   */
  progress?: (progress: number, total?: number, message?: string) => void;
  /**
   * Sends a log line to the host (an MCP client's `notifications/message`). Present only when
   * someone listens: call it as `ctx.log?.(…)`.
   */
  log?: (level: ToolLogLevel, message: string, data?: unknown) => void;
} & TState;

/**
 * What a tool records of a downstream system's answer (`ctx.receipt`): which system, its id for
 * what it did, and its status in its own words. Shown to people (inbox, CLI, audit, a recovery
 * request), so never a secret.
 */
export interface ReceiptInit {
  /** The system that answered: `stripe`, `adyen`, a host name. At most 100 characters. */
  system: string;
  /** Its id of what it did: a charge id, a request id. At most 200 characters. */
  id: string;
  /** Its status in its own words: `succeeded`, `HTTP 201`. At most 100 characters. */
  status: string;
  /** A few more facts worth showing (an amount, a currency): at most 20 scalar values. */
  detail?: Record<string, string | number | boolean | null>;
}

/** A recorded {@link ReceiptInit}: when, and under which claim (the attempt), it was recorded. */
export interface Receipt extends ReceiptInit {
  /** RFC 3339, by the recording process's clock. */
  at: string;
  /** The fencing number of the claim it was recorded under: 1 for the first attempt, more after a takeover. */
  attempt: number;
}

/** Severity of a {@link ToolContext.log} line (the syslog levels MCP uses). */
export type ToolLogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/**
 * The ok answer this call got to a request of `kind`, on this replay or an earlier link of
 * its chain; `undefined` if none. Use it instead of testing `ctx.answer` alone, which would
 * take a login answer for an approval:
 *
 * ```ts
 * if (!answerFor(ctx, 'approval')) return pending({ kind: 'approval', prompt: 'Refund 999 €?' })
 * ```
 */
export function answerFor(ctx: ToolContext | undefined, kind: string): Answer | undefined {
  const replay = ctx?.replay;
  if (!replay || !ctx.answer) return undefined;
  if (replay.request.kind === kind && ctx.answer.ok && ctx.answer.id === replay.request.id) return ctx.answer;
  for (let i = replay.chain.length - 1; i >= 0; i--) {
    const link = replay.chain[i] as AnsweredRequest;
    if (link.request.kind === kind && link.answer.ok && link.answer.id === link.request.id) return link.answer;
  }
  return undefined;
}
