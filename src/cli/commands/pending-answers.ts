import { InvalidArgumentError } from '../../errors';
import { parseData, settleFromCli, type Verdict } from '../answer';
import { storeCommand, type CliCommand, type CommandInput } from '../command';
import { EXIT } from '../exit-codes';
import { CliProblem } from '../target';

/** What one answering command reads from its line besides the verdict. */
interface AnswerRead {
  data?: Record<string, unknown>;
  args?: Record<string, unknown>;
}

/**
 * The `pending` commands that answer one request differ only in their words, their verdict and
 * what JSON they read: each is this one shape, so a change to how the CLI answers (the answer
 * policy, the exit codes, `--json`) is made in `settleFromCli` alone.
 */
function answering(
  word: string,
  summary: string,
  usage: string,
  verdict: Verdict,
  read?: { option: 'data' | 'args'; required?: string },
): CliCommand {
  return storeCommand({
    path: ['pending', word],
    summary,
    usage,
    options: { reason: { type: 'string' }, ...(read ? { [read.option]: { type: 'string' } } : {}) },
    positionals: 1,
    async run(input: CommandInput) {
      const answer: AnswerRead = {};
      if (read) {
        let value;
        try {
          value = parseData(input.values[read.option], `--${read.option}`);
        } catch (error) {
          if (error instanceof InvalidArgumentError) throw new CliProblem(error.message, EXIT.usage);
          throw error;
        }
        if (!value && read.required) throw new CliProblem(read.required, EXIT.usage);
        answer[read.option] = value;
      }
      return settleFromCli(input, verdict, answer.data, answer.args);
    },
  });
}

/** `pending approve ID`: answers yes and replays the call once, here; needs `--tools`. */
export const pendingApprove = answering(
  'approve',
  'approve: replays the call once in this process (needs --tools)',
  'ID [--reason R] [--data JSON]',
  'approve',
  { option: 'data' },
);

/**
 * `pending edit ID --args JSON`: approves with edited arguments, where the request allows it;
 * the tool's DTO checks them first (docs/who-may-answer.md, "Edit"). Needs `--tools`.
 */
export const pendingEdit = answering(
  'edit',
  'approve with edited arguments, checked by the tool (needs --tools)',
  'ID --args JSON [--reason R]',
  'approve',
  { option: 'args', required: 'pending edit needs --args JSON: the arguments to run with' },
);

/**
 * `pending sign ID`: one approval of a quorum request (docs/who-may-answer.md, "Quorum"): a
 * signature, until the last one needed, which replays the call here. Needs `--tools`.
 */
export const pendingSign = answering(
  'sign',
  'sign a quorum approval: the last signature needed replays the call (needs --tools)',
  'ID [--reason R]',
  'approve',
);

/** `pending decline ID`: answers no; the tool does not run, so no `--tools` are needed. */
export const pendingDecline = answering(
  'decline',
  'decline: settles without running the tool; the reason is told to the model',
  'ID [--reason R]',
  'decline',
);

/** `pending cancel ID`: withdraws the question; the tool does not run. */
export const pendingCancel = answering('cancel', 'cancel: withdraws the question without running the tool', 'ID [--reason R]', 'cancel');
