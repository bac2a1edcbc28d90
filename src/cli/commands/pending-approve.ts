import { InvalidArgumentError } from '../../errors';
import { parseData, settleFromCli } from '../answer';
import { STORE_OPTIONS, type CliCommand } from '../command';
import { EXIT } from '../exit-codes';
import { CliProblem } from '../target';

/** `pending approve ID`: answers yes and replays the call once, here; needs `--tools`. */
export const pendingApprove: CliCommand = {
  path: ['pending', 'approve'],
  summary: 'approve: replays the call once in this process (needs --tools)',
  usage: 'ID [--reason R] [--data JSON]',
  options: { ...STORE_OPTIONS, reason: { type: 'string' }, data: { type: 'string' } },
  positionals: 1,
  async run(input) {
    let data;
    try {
      data = parseData(input.values.data);
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new CliProblem(error.message, EXIT.usage);
      throw error;
    }
    return settleFromCli(input, 'approve', data);
  },
};
