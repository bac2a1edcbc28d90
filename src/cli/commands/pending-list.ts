import { redactCall } from '../../suspension/redact';
import { isSuspensionStatus } from '../../suspension/status';
import type { SuspensionFilter } from '../../suspension/store';
import { storeCommand } from '../command';
import { EXIT } from '../exit-codes';
import { callsTable } from '../format';
import { CliProblem } from '../target';

/** `pending list`: open suspensions (or those of `--status`), oldest first. */
export const pendingList = storeCommand({
  path: ['pending', 'list'],
  summary: 'list open suspensions (pending and resolving), oldest first',
  usage: '[--status S|all] [--kind K] [--run R]',
  options: { status: { type: 'string' }, kind: { type: 'string' }, run: { type: 'string' } },
  async run({ values, io, open }) {
    const status = typeof values.status === 'string' ? values.status : undefined;
    if (status !== undefined && status !== 'all' && !isSuspensionStatus(status))
      throw new CliProblem(`--status must be all, pending, resolving, resolved, declined, expired or cancelled; got ${status}`, EXIT.usage);
    const filter: SuspensionFilter = {};
    if (status !== undefined && status !== 'all' && isSuspensionStatus(status)) filter.status = status;
    if (typeof values.kind === 'string') filter.kind = values.kind;
    if (typeof values.run === 'string') filter.runId = values.run;
    const session = await open();
    let calls = await session.coordinator.list(filter);
    if (status === undefined) calls = calls.filter((call) => call.status === 'pending' || call.status === 'resolving');
    const shown = calls.map((call) => redactCall(session.coordinator.toolkit, call));
    io.out(values.json ? JSON.stringify(shown) : callsTable(shown));
    return EXIT.ok;
  },
});
