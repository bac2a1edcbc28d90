import { InvalidArgumentError } from '../../errors';
import { parseData, settleFromCli } from '../answer';
import { STORE_OPTIONS, type CliCommand } from '../command';
import { EXIT } from '../exit-codes';
import { CliProblem } from '../target';

/**
 * `pending edit ID --args JSON`: approves with edited arguments, where the request allows it;
 * the tool's DTO checks them first (docs/who-may-answer.md, "Edit"). Needs `--tools`.
 */
export const pendingEdit: CliCommand = {
  path: ['pending', 'edit'],
  summary: 'approve with edited arguments, checked by the tool (needs --tools)',
  usage: 'ID --args JSON [--reason R]',
  options: { ...STORE_OPTIONS, reason: { type: 'string' }, args: { type: 'string' } },
  positionals: 1,
  async run(input) {
    let args;
    try {
      args = parseData(input.values.args, '--args');
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new CliProblem(error.message, EXIT.usage);
      throw error;
    }
    if (!args) throw new CliProblem('pending edit needs --args JSON: the arguments to run with', EXIT.usage);
    return settleFromCli(input, 'approve', undefined, args);
  },
};
