import { failure, pendingOf } from '../../../results/helpers';
import type { ToolResult } from '../../../results/wire';
import { systemAudit } from '../../../suspension/authority';
import type { ChatMessage, ToolCall } from '../../../models/types';
import type { AgentParts, Emit, LiveRun } from '../live-run';
import type { RunStop } from '../types';
import { blockedStop, judge, type Guardrails, type JudgedIn, type Judgement } from './check';
import { HeldText } from './held-text';
import { stoppingRefusal, type CallRefusal } from '../stops';
import type { GuardrailContext } from './types';

/** The run's records and context for one check. */
function judgedIn(parts: AgentParts, live: LiveRun, callId?: string, once?: boolean): JudgedIn {
  const context: GuardrailContext = { runId: live.runId, turn: live.turns, signal: live.signal, context: live.context };
  live.guardrails ??= [];
  const { telemetry, clock } = parts;
  return { context, records: live.guardrails, telemetry, clock, timeoutMs: parts.guardrails?.timeoutMs, callId, once };
}

/**
 * A feedback round is taken: true while the run has rounds left; the round that would
 * pass `maxFeedback` blocks instead.
 */
function spendFeedback(guardrails: Guardrails, live: LiveRun): boolean {
  live.feedbacks = (live.feedbacks ?? 0) + 1;
  return live.feedbacks <= guardrails.maxFeedback;
}

function spentStop(judgement: Judgement & { action: 'block' | 'feedback' }): RunStop {
  return blockedStop({ ...judgement, message: `feedback rounds spent: ${judgement.message}` });
}

/** The feedback as the model reads it, after the text it judged was withheld. */
function feedbackMessage(message: string): ChatMessage {
  return { role: 'user', content: `[guardrail] ${message}` };
}

/**
 * What the input guardrails say of the run's input (its last user message, or `text`: the
 * messages steered in at a turn's start): a stop when they block; `feedback` when
 * their feedback joined the transcript for the model to read; undefined: all passed.
 */
export async function checkInput(parts: AgentParts, live: LiveRun, text?: string): Promise<RunStop | 'feedback' | undefined> {
  const guardrails = parts.guardrails;
  if (!guardrails || guardrails.input.length === 0) return undefined;
  const last = text === undefined ? [...live.messages].reverse().find((message) => message.role === 'user') : undefined;
  const judgement = await judge(
    guardrails.input,
    { stage: 'input', text: text ?? (last?.role === 'user' ? last.content : ''), messages: live.messages },
    judgedIn(parts, live),
  );
  if (judgement.action === 'allow') return undefined;
  if (judgement.action === 'block') return blockedStop(judgement);
  if (!spendFeedback(guardrails, live)) return spentStop(judgement);
  live.messages.push(feedbackMessage(judgement.message));
  return 'feedback';
}

/**
 * Starts the input check of a run whose guardrails run beside its first model call; the
 * first turn waits for it (holding its text) before anything of the call is used.
 */
export function startInputCheck(parts: AgentParts, live: LiveRun): void {
  if (!parts.guardrails?.parallelInput || parts.guardrails.input.length === 0) return;
  const check = checkInput(parts, live);
  // Awaited by the first turn; a rejection is seen there.
  check.catch(() => undefined);
  live.inputCheck = check;
}

/**
 * How a turn's model call emits: through a {@link HeldText} when output guardrails hold
 * streamed text back, or while a parallel input check is open; else straight on.
 */
export function heldTextOf(parts: AgentParts, live: LiveRun): HeldText | undefined {
  const emit: Emit | undefined = live.emit;
  const guardrails = parts.guardrails;
  if (!emit || !guardrails) return undefined;
  const checked = guardrails.output.length > 0 && guardrails.holdBack !== 'none';
  if (!checked && !live.inputCheck) return undefined;
  const mode = checked && guardrails.holdBack === 'segments' ? 'segments' : 'turn';
  return new HeldText(
    mode,
    checked
      ? (text, segment, complete, final) =>
          judge(
            guardrails.output,
            { stage: 'output', text, segment, complete, final },
            judgedIn(parts, live, undefined, mode === 'segments'),
          )
      : () => Promise.resolve({ action: 'allow' }),
    emit,
  );
}

/**
 * What the output guardrails say of a turn's answered text: `held` is the stream's
 * (its judgement came while it streamed); otherwise the whole text is checked now.
 */
export async function checkAnswer(
  parts: AgentParts,
  live: LiveRun,
  text: string,
  final: boolean,
  held: HeldText | undefined,
): Promise<Judgement> {
  const guardrails = parts.guardrails;
  if (held) {
    const judgement = await held.end(final);
    if (judgement.action !== 'allow' || guardrails?.holdBack !== 'none') return judgement;
  }
  if (!guardrails || guardrails.output.length === 0 || text === '') return { action: 'allow' };
  return judge(guardrails.output, { stage: 'output', text, segment: text, complete: true, final }, judgedIn(parts, live));
}

/**
 * A turn's text the output guardrails refused: a block stops the run; feedback (while rounds
 * are left) goes to the model, whose refused text is withheld from the transcript.
 */
export function refusedAnswer(
  parts: AgentParts,
  live: LiveRun,
  judgement: Judgement & { action: 'block' | 'feedback' },
): RunStop | undefined {
  if (judgement.action === 'block') return blockedStop(judgement);
  if (!spendFeedback(parts.guardrails as Guardrails, live)) return spentStop(judgement);
  live.messages.push(feedbackMessage(judgement.message));
  return undefined;
}

/**
 * The tool-input guardrails on one call: undefined to run it; else its result without
 * running: the feedback as a failure, or (a block) a failure that stops the run.
 */
export async function checkToolInput(parts: AgentParts, live: LiveRun, call: ToolCall): Promise<CallRefusal | undefined> {
  const guardrails = parts.guardrails;
  if (!guardrails || guardrails.toolInput.length === 0) return undefined;
  const judgement = await judge(
    guardrails.toolInput,
    { stage: 'toolInput', tool: call.name, callId: call.id, arguments: call.arguments },
    judgedIn(parts, live, call.id),
  );
  if (judgement.action === 'allow') return undefined;
  if (judgement.action === 'block') return blockedRefusal(blockedStop(judgement));
  if (!spendFeedback(guardrails, live)) return blockedRefusal(spentStop(judgement));
  return { result: failure(judgement.message) };
}

function blockedRefusal(stop: RunStop): CallRefusal {
  return stoppingRefusal(stop, 'not run: a guardrail stopped the run');
}

/**
 * The tool-output guardrails on a turn's settled results, before the model sees them: a
 * result given feedback is replaced by it; a block stops the run. Pending results are left
 * for when they settle.
 */
export async function checkToolOutputs(
  parts: AgentParts,
  live: LiveRun,
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
): Promise<{ results: ToolResult[]; stop?: RunStop }> {
  const guardrails = parts.guardrails;
  if (!guardrails || guardrails.toolOutput.length === 0) return { results: results.slice() };
  const judgements = await Promise.all(
    calls.map((call, i) => {
      const result = results[i] as ToolResult;
      if (pendingOf(result) !== undefined) return Promise.resolve<Judgement>({ action: 'allow' });
      return judge(
        guardrails.toolOutput,
        { stage: 'toolOutput', tool: call.name, callId: call.id, arguments: call.arguments, result },
        judgedIn(parts, live, call.id),
      );
    }),
  );
  const checked = results.slice();
  let stop: RunStop | undefined;
  judgements.forEach((judgement, i) => {
    if (judgement.action === 'allow') return;
    // What a guardrail refused is never kept: not in the transcript, the checkpoint, the
    // session's thread or a stream, where this run's model or a later run's would read it.
    if (judgement.action === 'block') {
      checked[i] = withheldResult(judgement);
      stop ??= blockedStop(judgement);
    } else if (stop === undefined && !spendFeedback(guardrails, live)) {
      checked[i] = withheldResult(judgement);
      stop = spentStop(judgement);
    } else checked[i] = failure(judgement.message);
  });
  // Held until now (see `showsToolResult`): each judged result is shown as it is kept.
  calls.forEach((call, i) => {
    const result = checked[i] as ToolResult;
    if (pendingOf(results[i]) === undefined) live.emit?.({ type: 'tool_result', callId: call.id, name: call.name, result });
  });
  return stop ? { results: checked, stop } : { results: checked };
}

/**
 * Whether a settled tool result is shown (a `tool_result` event) as soon as it comes: not when
 * tool-output guardrails are set, which judge it first; {@link checkToolOutputs} shows it then.
 */
export function showsToolResult(parts: Pick<AgentParts, 'guardrails'>): boolean {
  return (parts.guardrails?.toolOutput.length ?? 0) === 0;
}

/** What is kept of a result a guardrail blocked: that it was withheld, and by which guardrail, never its content. */
function withheldResult(judgement: Judgement & { action: 'block' | 'feedback' }): ToolResult {
  return failure(`withheld: the guardrail ${judgement.guardrail} blocked this result (${judgement.stage})`, {
    withheld: { guardrail: judgement.guardrail, stage: judgement.stage },
  });
}

/**
 * A stopped turn's calls still waiting for answers are cancelled (nothing will continue
 * them), and their results say so, so the transcript stays whole.
 */
export async function settleStopped(parts: AgentParts, results: readonly ToolResult[], stop: RunStop): Promise<ToolResult[]> {
  return Promise.all(
    results.map(async (result) => {
      const request = pendingOf(result);
      if (!request) return result;
      const reason = `the run was ${stop.status}`;
      await parts.coordinator.cancel(request.id, reason, systemAudit()).catch(() => undefined);
      return failure(`not run: ${reason}`);
    }),
  );
}
