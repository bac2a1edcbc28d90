import { settleFromCli } from '../answer';
import { STORE_OPTIONS, type CliCommand } from '../command';

/** `pending cancel ID`: withdraws the question; the tool does not run. */
export const pendingCancel: CliCommand = {
  path: ['pending', 'cancel'],
  summary: 'cancel: withdraws the question without running the tool',
  usage: 'ID [--reason R]',
  options: { ...STORE_OPTIONS, reason: { type: 'string' } },
  positionals: 1,
  run: (input) => settleFromCli(input, 'cancel'),
};
