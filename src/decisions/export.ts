import { InvalidArgumentError } from '../errors';
import type { RunStore } from '../runner/core/store';
import { Redactor } from '../suspension/redact';
import type { SuspensionStore } from '../suspension/store';
import { Toolkit } from '../toolkit/toolkit';
import { ContextReader, DEFAULT_CONTEXT_CHARS, DEFAULT_CONTEXT_MESSAGES, type ContextBound } from './context';
import { inFormat, isDecisionFormat, type DecisionFormat, type DecisionRows } from './formats';
import { decisionRowOf } from './row';

/** How many settled calls one page reads, by default. */
export const DEFAULT_DECISION_PAGE_SIZE = 100;
/** The largest page `pageSize` may ask for: memory holds one page (and one checkpoint) at a time. */
export const MAX_DECISION_PAGE_SIZE = 1000;

/** Options of {@link exportDecisions}. */
export interface ExportDecisionsOptions<F extends DecisionFormat = 'toolnexus'> {
  /** The earliest settlement exported (RFC 3339 or a Date). */
  since: string | Date;
  /** Settlements at or after it are left out. Default: up to the last one. */
  until?: string | Date;
  /** Only requests of these tools. Default: every tool. */
  tools?: readonly string[];
  /** The row shape (docs/operating.md, "Decisions as evaluation data"). Default `toolnexus`, the published JSON Schema's. */
  format?: F;
  /**
   * The toolkit whose DTOs say which fields are `@Sensitive` (the one the coordinator runs).
   * Without it every call's arguments are redacted whole, as the CLI shows them without `--tools`.
   */
  toolkit?: Toolkit;
  /** The bound on each row's context, or `false` to read no checkpoints. Default: 20 messages, 16 384 characters. */
  context?: ContextBound | false;
  /** Settled calls read per page, 1 to {@link MAX_DECISION_PAGE_SIZE}. Default {@link DEFAULT_DECISION_PAGE_SIZE}. */
  pageSize?: number;
}

/** A checked RFC 3339 instant, normalised as `Date.toISOString` writes it (what the stores keep). */
function instantOf(value: unknown, name: string): string {
  const ms = value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms)) throw new InvalidArgumentError(`exportDecisions: ${name} must be an RFC 3339 instant or a Date`);
  return new Date(ms).toISOString();
}

function positiveWhole(value: number | undefined, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max)
    throw new InvalidArgumentError(`exportDecisions: ${name} must be a whole number from 1 to ${max}`);
  return value;
}

/**
 * Streams one row per settled request of `store` (docs/operating.md, "Decisions as evaluation
 * data"): the call redacted as everywhere else, the transcript that led to it (from its run's
 * checkpoint, bounded), who answered and how, quorum signatures and timings, in `format`. The
 * store is read a page at a time (`settledPage`), oldest settlement first, so memory holds one
 * page and one checkpoint whatever the table's size; rows are produced as they are iterated.
 *
 * @throws {@link InvalidArgumentError} at once, for malformed options or a store without `settledPage`.
 *
 * @example
 * ```ts
 * for await (const row of exportDecisions(store, { since: '2026-11-01T00:00:00Z', toolkit, format: 'langsmith' }))
 *   process.stdout.write(`${JSON.stringify(row)}\n`);
 * ```
 */
export function exportDecisions<F extends DecisionFormat = 'toolnexus'>(
  store: SuspensionStore & Partial<Pick<RunStore, 'loadRun'>>,
  options: ExportDecisionsOptions<F>,
): AsyncIterable<DecisionRows[F]> {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('exportDecisions: options { since, ... } are required');
  if (typeof store?.settledPage !== 'function')
    throw new InvalidArgumentError(
      'exportDecisions: the store has no settledPage (a paged read of settled calls), so it cannot be exported',
    );
  const since = instantOf(options.since, 'since');
  const until = options.until === undefined ? undefined : instantOf(options.until, 'until');
  const format = (options.format ?? 'toolnexus') as F;
  if (!isDecisionFormat(format))
    throw new InvalidArgumentError('exportDecisions: format must be toolnexus, evalite, langsmith or braintrust');
  const tools = options.tools;
  if (tools !== undefined && !(Array.isArray(tools) && tools.every((tool) => typeof tool === 'string')))
    throw new InvalidArgumentError('exportDecisions: tools must be an array of tool names');
  const limit = positiveWhole(options.pageSize, 'pageSize', DEFAULT_DECISION_PAGE_SIZE, MAX_DECISION_PAGE_SIZE);
  const toolkit = options.toolkit ?? new Toolkit();
  if (!(toolkit instanceof Toolkit)) throw new InvalidArgumentError('exportDecisions: toolkit must be a Toolkit');
  const bound = options.context;
  const loadRun = bound === false ? undefined : store.loadRun?.bind(store);
  const runs = loadRun === undefined ? undefined : { loadRun };
  const reader = new ContextReader(runs, toolkit, {
    maxMessages: positiveWhole(bound === false ? undefined : bound?.maxMessages, 'context.maxMessages', DEFAULT_CONTEXT_MESSAGES),
    maxChars: positiveWhole(bound === false ? undefined : bound?.maxChars, 'context.maxChars', DEFAULT_CONTEXT_CHARS),
  });
  const redactor = new Redactor(toolkit);
  const query = { since, ...(until === undefined ? {} : { until }), ...(tools === undefined ? {} : { tools: [...tools] }), limit };
  const settledPage = store.settledPage.bind(store);
  return {
    async *[Symbol.asyncIterator]() {
      let after: string | undefined;
      do {
        const page = await settledPage(after === undefined ? query : { ...query, after });
        for (const call of page.calls) {
          const context = await reader.contextOf(call.runId, call.callId);
          yield inFormat(decisionRowOf(call, redactor, context), format);
        }
        after = page.next;
      } while (after !== undefined);
    },
  };
}
