import { redactCall } from '../../suspension/redact';
import { isSettled, isSuspensionStatus } from '../../suspension/status';
import type { HistoryFilter } from '../../suspension/audit';
import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';
import { historyTable } from '../format';
import { CliProblem } from '../target';

/** `pending history`: the audit trail, newest settlement first. */
export const pendingHistory = storeCommand({
  path: ['pending', 'history'],
  summary: 'settled suspensions, newest first: who answered, when, why, and the outcome',
  usage: '[--status S] [--kind K] [--run R] [--tool T] [--limit N]',
  options: {
    status: { type: 'string' },
    kind: { type: 'string' },
    run: { type: 'string' },
    tool: { type: 'string' },
    limit: { type: 'string' },
  },
  async run({ values, io, open }) {
    const filter: HistoryFilter = {};
    if (typeof values.status === 'string') {
      if (!isSuspensionStatus(values.status) || !isSettled(values.status))
        throw new CliProblem(`--status must be resolved, declined, expired or cancelled; got ${values.status}`, EXIT.usage);
      filter.status = values.status;
    }
    if (typeof values.kind === 'string') filter.kind = values.kind;
    if (typeof values.run === 'string') filter.runId = values.run;
    if (typeof values.tool === 'string') filter.tool = values.tool;
    if (typeof values.limit === 'string') {
      const limit = Number(values.limit);
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
        throw new CliProblem(`--limit must be a whole number from 1 to 1000; got ${values.limit}`, EXIT.usage);
      filter.limit = limit;
    }
    const session = await open();
    const calls = (await session.coordinator.history(filter)).map((call) => redactCall(session.coordinator.toolkit, call));
    io.out(values.json ? JSON.stringify(calls) : historyTable(calls));
    return EXIT.ok;
  },
});
