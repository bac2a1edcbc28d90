import { settleFromCli } from '../answer';
import { STORE_OPTIONS, type CliCommand } from '../command';

/**
 * `pending sign ID`: one approval of a quorum request (docs/who-may-answer.md, "Quorum"): a
 * signature, until the last one needed, which replays the call here. Needs `--tools`.
 */
export const pendingSign: CliCommand = {
  path: ['pending', 'sign'],
  summary: 'sign a quorum approval: the last signature needed replays the call (needs --tools)',
  usage: 'ID [--reason R]',
  options: { ...STORE_OPTIONS, reason: { type: 'string' } },
  positionals: 1,
  run: (input) => settleFromCli(input, 'approve'),
};
