import { OutputValidationError } from '../../errors';
import type { ModelResponse } from '../../models/types';
import { ask, assistantTurn } from './ask';
import type { TurnCalls } from './calls';
import { stopFailed, type AgentParts, type LiveRun } from './live-run';
import { AGAIN, FINAL, INCOMPLETE, nextStepOf, type NextStep } from './next-step';
import { answersNow, checkOutput, FINAL_ANSWER_TOOL, keptOutput, repairPrompt, textReminder, type OutputRun } from './output';
import { addUsage, copyUsage } from './usage';

/**
 * One turn of the loop: ask the model, record its answer, and run the calls it asked for
 * with the run's {@link TurnCalls}. Returns what the loop does next; the typed answer, a
 * handoff or a suspended call each shape that, never the loop itself.
 */
export async function turn(parts: AgentParts, live: LiveRun, calls: TurnCalls): Promise<NextStep> {
  // A feature's stop (a cancel, a spent budget) before the turn limit: a cancelled run says so.
  const stop = parts.features.beforeModel(live);
  if (stop) return { type: 'stop', stop };
  if (live.turns >= parts.maxTurns) return INCOMPLETE;
  // The turn boundary: what a feature adds before the model is asked (messages steered in), and its checks of it.
  const before = parts.features.beforeTurn(live);
  const stopped = before ? await before : undefined;
  if (stopped) return { type: 'stop', stop: stopped };
  const watch = parts.features.watchTurn(live);
  let response: ModelResponse;
  try {
    // The caller's signal (or a stream's consumer) abandoned the run: it rejects with that reason.
    if (live.latch.aborted) live.latch.signal.throwIfAborted();
    response = await ask(parts, live, watch?.emit ?? live.emit);
  } catch (error) {
    await stopFailed(parts, live, error);
    throw error;
  }
  live.turns++;
  const usage = copyUsage(response.usage);
  // (the agent that answered is the one that holds the conversation; a handoff below moves it)
  addUsage(live.usage, usage);
  live.turnUsage.push(usage);
  parts.features.afterModel(live, usage);
  const judged = watch ? await watch.judge(response) : undefined;
  if (judged) return judged;
  live.text = response.text;
  const asked = response.toolCalls;
  live.messages.push(assistantTurn(response));
  if (calls.record && asked.length > 0) await calls.record(live.turns, asked);
  if (live.output && answersNow(live.output, asked)) return (await answered(parts, live, live.output, response)) ? FINAL : AGAIN;
  if (asked.length === 0) return FINAL;
  if (live.emit) for (const call of asked) live.emit({ type: 'tool_call', call });
  const trace = live.trace;
  const results = await (trace ? trace.tracing.within(trace.context, () => calls.run(parts, live, asked)) : calls.run(parts, live, asked));
  return nextStepOf(parts, live, asked, results, live.turns);
}

/**
 * The model gave its typed answer (as text, or as the one final-answer call). True when it
 * validates; otherwise the problem goes back to the model for another round, until the
 * repairs run out.
 *
 * @throws {@link OutputValidationError} the last repair round failed too.
 */
async function answered(parts: AgentParts, live: LiveRun, output: OutputRun, response: ModelResponse): Promise<boolean> {
  const call = response.toolCalls[0];
  let problem: string;
  let answer: string;
  if (!output.native && call === undefined) {
    answer = response.text;
    problem = `it answered in text instead of calling ${FINAL_ANSWER_TOOL}`;
  } else {
    answer = call ? call.arguments : response.text;
    const checked = await checkOutput(output, answer);
    if (checked.ok) {
      output.value = { plain: checked.plain, instance: checked.instance };
      // The final call gets its result, so the transcript stays one any provider accepts.
      if (call) live.messages.push({ role: 'tool', callId: call.id, name: call.name, content: 'Answer accepted.', isError: false });
      return true;
    }
    problem = checked.problem;
  }
  // The feedback is kept even when the repairs are spent: a `recover` then asks again from it.
  const feedback = call || output.native ? repairPrompt(output, problem) : textReminder();
  if (call) live.messages.push({ role: 'tool', callId: call.id, name: call.name, content: feedback, isError: true });
  else live.messages.push({ role: 'user', content: feedback });
  if (output.repairs >= output.maxRepairs) {
    const error = new OutputValidationError(live.runId, output.format.name, problem, keptOutput(answer), output.repairs + 1);
    await stopFailed(parts, live, error);
    throw error;
  }
  output.repairs++;
  return false;
}
