import type { Answer } from '../results/wire';
import { answerAsPrincipal, type AnswerAsOptions, type AnsweredOf, type AnsweredRunOf } from '../suspension/answer-as';
import type { ResumeCoordinator } from '../suspension/coordinator';
import type { AgentRunner } from './agent-runner';
import type { RunResult } from './core/types';

export type { AnswerAsOptions } from '../suspension/answer-as';

/** Where the run a call belongs to stands after {@link answerAs}: `result` is the run's, when this process continued it. */
export type AnsweredRun = AnsweredRunOf<RunResult>;

/** What {@link answerAs} did: whether this principal's answer won, the call as stored afterwards, its outcome, and the run. */
export type Answered = AnsweredOf<RunResult>;

/**
 * Answers a suspension as a principal: the one operation every front end that answers
 * (the inbox, the CLI, MCP, a plain API call) goes through (docs/design.md, "the path of an
 * answer"). It settles the call exactly once with the audit data (who, and why) and, given an
 * {@link AgentRunner}, continues the run that halted on it, once, in this process, chains
 * included and whichever process answered the chain's earlier links. Given only a
 * {@link ResumeCoordinator}, it settles the call and says the run is left for a process with its runner.
 * A front end that read the call already passes it (`options.call`): it is not read again.
 * The work is the suspension layer's (`src/suspension/answer-as.ts`); this names the runner's types.
 *
 * Whoever answered first wins, found the same way for every front end: the call's recorded
 * `answeredBy`. A later answer from someone else is `won: false` with the `winner`, never an error.
 *
 * @example
 * ```ts
 * const answered = await answerAs(runner, { id, ok: true }, { by: { id: 'alice' }, comment: 'PO 2291' })
 * if (!answered.won) console.log(`already answered by ${answered.winner?.id}`)
 * ```
 *
 * @throws {@link UnknownSuspensionError} no store holds the id.
 * @throws {@link AlreadyResolvedError} this principal's earlier answer to the call was another one.
 * @throws {@link InvalidArgumentError} `options.call` is not the call the answer names.
 * @throws what {@link ResumeCoordinator.resolve} and {@link AgentRunner.resume} throw otherwise (an invalid answer, a changed call, a tool not registered here).
 */
export function answerAs(host: AgentRunner | ResumeCoordinator, answer: Answer, options: AnswerAsOptions): Promise<Answered> {
  return answerAsPrincipal<RunResult>(host, answer, options);
}
