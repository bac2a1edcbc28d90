import { settleFromCli } from '../answer';
import { STORE_OPTIONS, type CliCommand } from '../command';

/** `pending decline ID`: answers no; the tool does not run, so no `--tools` are needed. */
export const pendingDecline: CliCommand = {
  path: ['pending', 'decline'],
  summary: 'decline: settles without running the tool; the reason is told to the model',
  usage: 'ID [--reason R]',
  options: { ...STORE_OPTIONS, reason: { type: 'string' } },
  positionals: 1,
  run: (input) => settleFromCli(input, 'decline'),
};
