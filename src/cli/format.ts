import type { DeliveryView } from '../deliveries/view';
import { receiptLine } from '../suspension/receipts';
import type { SuspendedCall } from '../suspension/store';

/** A control character or line break would let a stored value rewrite the operator's terminal. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex -- exactly what is being removed
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
}

function cut(text: string, width: number): string {
  const flat = plain(text);
  return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
}

/** Rows as an aligned text table under `headers`; cells are cut to their column's limit. */
export function table(headers: string[], rows: string[][], limits: number[]): string {
  const cells = [headers, ...rows].map((row) => row.map((cell, i) => cut(cell, limits[i] ?? 40)));
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** How long ago an instant was, roughly: `45s`, `12m`, `3h`, `2d`. */
export function age(iso: string | undefined, now = Date.now()): string {
  if (iso === undefined) return '';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** A column of a table of records: its header, its cell for one record, the most characters the cell shows. */
type Column<R> = readonly [header: string, cell: (record: R) => string, limit: number];

/** `records` as an aligned table of `columns`. */
function tableOf<R>(columns: ReadonlyArray<Column<R>>, records: readonly R[]): string {
  const rows = records.map((record) => columns.map(([, cell]) => cell(record)));
  return table(
    columns.map(([header]) => header),
    rows,
    columns.map(([, , limit]) => limit),
  );
}

const ID: Column<SuspendedCall> = ['ID', (call) => call.request.id, 40];
const STATUS: Column<SuspendedCall> = ['STATUS', (call) => call.status, 10];

/** The pending calls table of `pending list`. */
export function callsTable(calls: SuspendedCall[]): string {
  if (calls.length === 0) return '(none)';
  return tableOf(
    [
      ID,
      STATUS,
      ['KIND', (call) => call.request.kind, 14],
      ['TOOL', (call) => call.tool, 24],
      ['RUN', (call) => call.runId ?? '', 24],
      ['AGE', (call) => age(call.createdAt), 5],
      ['EXPIRES', (call) => call.request.expiresAt ?? '', 24],
      ['PROMPT', (call) => call.request.prompt, 60],
    ],
    calls,
  );
}

/** The audit table of `pending history`. */
export function historyTable(calls: SuspendedCall[]): string {
  if (calls.length === 0) return '(none)';
  return tableOf(
    [
      ID,
      STATUS,
      ['TOOL', (call) => call.tool, 24],
      ['SETTLED', (call) => call.updatedAt ?? '', 24],
      ['BY', (call) => call.answeredBy?.id ?? '', 24],
      ['COMMENT', (call) => call.comment ?? '', 40],
      ['OUTCOME', (call) => call.outcome?.output ?? '', 60],
      ['RECEIPTS', (call) => (call.receipts ?? []).map((receipt) => `${receipt.system} ${receipt.id} ${receipt.status}`).join('; '), 60],
    ],
    calls,
  );
}

/** Where a call went (docs/channels.md, "What is stored"), under `pending show`'s fields: the view the inbox shows. */
export function deliveriesText(deliveries: readonly DeliveryView[]): string {
  if (deliveries.length === 0) return 'deliveries:   (none)';
  const shown = tableOf<DeliveryView>(
    [
      ['PLATFORM', (d) => d.platform, 10],
      ['TARGET', (d) => d.target, 40],
      ['STATE', (d) => `${d.escalation ? 'escalation, ' : ''}${d.posted ? 'posted' : 'not posted'}${d.final ? ', final' : ''}`, 32],
      ['FAILURES', (d) => String(d.attempts), 8],
      ['NEXT', (d) => (d.nextAttemptAt === undefined ? '' : `${d.attempts > 0 ? 'try' : 'check'} ${d.nextAttemptAt}`), 32],
      ['ERROR', (d) => d.error ?? '', 80],
    ],
    deliveries,
  );
  return `deliveries:\n${shown
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')}`;
}

/** One call, field by field, as `pending show` prints it (arguments already redacted). */
export function callDetail(call: SuspendedCall): string {
  const lines: Array<[string, string | undefined]> = [
    ['id', call.request.id],
    ['status', call.status],
    ['kind', call.request.kind],
    ['prompt', call.request.prompt],
    ['tool', call.tool],
    ['arguments', JSON.stringify(call.args)],
    ['run', call.runId],
    ['call', call.callId],
    ['created', call.createdAt],
    ['expires', call.request.expiresAt],
    ['request data', call.request.data === undefined ? undefined : JSON.stringify(call.request.data)],
    ['chain', call.chain?.length ? `${call.chain.length} earlier request(s)` : undefined],
    ['answered by', call.answeredBy ? `${call.answeredBy.id}${call.answeredBy.name ? ` (${call.answeredBy.name})` : ''}` : undefined],
    ['answered at', call.answeredAt],
    ['comment', call.comment],
    ['answer', call.answer === undefined ? undefined : JSON.stringify(call.answer)],
    ['outcome', call.outcome === undefined ? undefined : `${call.outcome.isError ? 'error: ' : ''}${call.outcome.output}`],
    // What downstream systems answered each attempt (docs/tools.md, "Idempotency keys and receipts").
    ['receipts', call.receipts?.length ? call.receipts.map(receiptLine).join('; ') : undefined],
    ['next', call.next],
    ['updated', call.updatedAt],
  ];
  return lines
    .filter((line): line is [string, string] => line[1] !== undefined)
    .map(([label, value]) => `${`${label}:`.padEnd(14)}${cut(value, 2000)}`)
    .join('\n');
}
