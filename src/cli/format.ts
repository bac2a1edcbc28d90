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

/** The pending calls table of `pending list`. */
export function callsTable(calls: SuspendedCall[]): string {
  if (calls.length === 0) return '(none)';
  return table(
    ['ID', 'STATUS', 'KIND', 'TOOL', 'RUN', 'AGE', 'EXPIRES', 'PROMPT'],
    calls.map((call) => [
      call.request.id,
      call.status,
      call.request.kind,
      call.tool,
      call.runId ?? '',
      age(call.createdAt),
      call.request.expiresAt ?? '',
      call.request.prompt,
    ]),
    [40, 10, 14, 24, 24, 5, 24, 60],
  );
}

/** The audit table of `pending history`. */
export function historyTable(calls: SuspendedCall[]): string {
  if (calls.length === 0) return '(none)';
  return table(
    ['ID', 'STATUS', 'TOOL', 'SETTLED', 'BY', 'COMMENT', 'OUTCOME', 'RECEIPTS'],
    calls.map((call) => [
      call.request.id,
      call.status,
      call.tool,
      call.updatedAt ?? '',
      call.answeredBy?.id ?? '',
      call.comment ?? '',
      call.outcome?.output ?? '',
      (call.receipts ?? []).map((receipt) => `${receipt.system} ${receipt.id} ${receipt.status}`).join('; '),
    ]),
    [40, 10, 24, 24, 24, 40, 60, 60],
  );
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
