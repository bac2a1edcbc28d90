import { pageStart } from '../../suspension/pages';
import type { SettledPageQuery } from '../../suspension/store';
import { SUSPENSION_COLUMNS } from './columns';

/**
 * The statement of one settled page (`PostgresStore.settledPage`): oldest settlement first
 * along the settled index, walked backwards from the cursor (the `>= $3` bound is what lets the
 * index start there rather than at `since`), one more row than asked, whose presence says a
 * next page exists (docs/operating.md, "Decisions as evaluation data").
 */
export function settledPageStatement(suspensions: string, query: SettledPageQuery): { text: string; values: unknown[] } {
  const start = pageStart(query);
  return {
    text: `SELECT ${SUSPENSION_COLUMNS}, seq FROM ${suspensions}
      WHERE status IN ('resolved', 'declined', 'expired', 'cancelled')
        AND updated_at COLLATE "C" >= $1 AND ($2::text IS NULL OR updated_at COLLATE "C" < $2)
        AND updated_at COLLATE "C" >= $3 AND (updated_at COLLATE "C" > $3 OR (updated_at = $3 AND seq > $4::bigint))
        AND ($5::text[] IS NULL OR tool = ANY($5::text[]))
      ORDER BY updated_at COLLATE "C" ASC NULLS FIRST, seq ASC LIMIT $6::bigint`,
    values: [query.since, query.until ?? null, start.at, start.seq, query.tools ?? null, query.limit + 1],
  };
}
