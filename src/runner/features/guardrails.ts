import type { ModelResponse } from '../../models/types';
import type { Guardrails } from '../core/guardrails/check';
import type { HeldText } from '../core/guardrails/held-text';
import {
  checkAnswer,
  checkInput,
  checkToolInput,
  checkToolOutputs,
  heldTextOf,
  refusedAnswer,
  startInputCheck,
} from '../core/guardrails/stages';
import type { AgentParts, LiveRun } from '../core/live-run';
import { AGAIN, type NextStep } from '../core/next-step';
import type { RunFeature } from '../core/feature';

/**
 * Guardrails as a feature (docs/guardrails.md), composed only when the runner has some: the
 * input check before a new run's first model call (or beside it), a turn's text held back while
 * it streams and judged once answered, each tool call's arguments before it runs, the settled
 * results before the model sees them.
 */
export function guardrailsFeature(parts: AgentParts, guardrails: Guardrails): RunFeature {
  return {
    name: 'guardrails',
    beforeRun(live) {
      if (guardrails.input.length === 0) return undefined;
      // Before the first model call, unless the runner opts in to running them beside it.
      if (guardrails.parallelInput) {
        startInputCheck(parts, live);
        return undefined;
      }
      return checkInput(parts, live).then((said) => (typeof said === 'object' ? said : undefined));
    },
    beforeTurn(live) {
      // Messages steered in at this turn's start are judged as a new run's input is.
      const steered = live.steered;
      if (!steered) return undefined;
      live.steered = undefined;
      if (guardrails.input.length === 0) return undefined;
      return checkInput(parts, live, steered.map((message) => message.content).join('\n\n')).then((said) =>
        typeof said === 'object' ? said : undefined,
      );
    },
    watchTurn(live) {
      const held = heldTextOf(parts, live);
      return { emit: held?.events, judge: (response) => guarded(parts, live, response, held) };
    },
    beforeTool: (live, call) => checkToolInput(parts, live, call),
    checkResults: (live, calls, results) => checkToolOutputs(parts, live, calls, results),
  };
}

/**
 * The guardrails on a turn's answer: the input check that ran beside it (the first turn
 * of a `parallelInput` run), then the output guardrails on its text. Undefined: it passed.
 * A refused answer is withheld from the transcript, its calls never run.
 */
async function guarded(
  parts: AgentParts,
  live: LiveRun,
  response: ModelResponse,
  held: HeldText | undefined,
): Promise<NextStep | undefined> {
  const input = live.inputCheck;
  if (input) {
    live.inputCheck = undefined;
    const said = await input;
    if (typeof said === 'object') return { type: 'stop', stop: said };
    // The model answered an input it was to get feedback on: ask it again, with the feedback.
    if (said === 'feedback') return AGAIN;
  }
  const judgement = await checkAnswer(parts, live, response.text, response.toolCalls.length === 0, held);
  if (judgement.action === 'allow') return undefined;
  const stop = refusedAnswer(parts, live, judgement);
  if (!stop) return AGAIN;
  live.text = '';
  return { type: 'stop', stop };
}
