import { SuspensionMismatchError } from '../../errors';
import { sameJson } from '../binding';
import type { SuspendedCall } from '../store';
import type { ExpectedCall, ResolutionSettings } from './types';

/*
 * The identify stage of the path of an answer (docs/design.md): the stored call as read is
 * the call that was recorded (its binding) and, when the caller knows which call it answers,
 * that call. Nothing is judged yet, and nothing is written.
 */

/**
 * The one check of a stored call before an answer claims it: it is the call that was
 * recorded (its binding), and, when the caller knows which call it answers (an agent run's
 * transcript), that call: same tool, call id, run and arguments as the Toolkit parses them.
 * @throws {@link SuspensionMismatchError} on any difference (nothing is claimed).
 */
export async function identify(settings: ResolutionSettings, call: SuspendedCall, expected: ExpectedCall | undefined): Promise<void> {
  const problem = settings.binding.problem(call);
  if (problem) throw new SuspensionMismatchError(call.request.id, problem);
  if (!expected) return;
  const differs: string[] = [];
  if (call.tool !== expected.tool) differs.push(`tool ${JSON.stringify(call.tool)} ≠ ${JSON.stringify(expected.tool)}`);
  if (call.callId !== expected.callId) differs.push(`callId ${JSON.stringify(call.callId)} ≠ ${JSON.stringify(expected.callId)}`);
  if (call.runId !== expected.runId) differs.push(`runId ${JSON.stringify(call.runId)} ≠ ${JSON.stringify(expected.runId)}`);
  if (differs.length === 0 && !(await sameArguments(settings, call, expected))) differs.push('arguments differ from the transcript');
  if (differs.length > 0)
    throw new SuspensionMismatchError(call.request.id, `the run's transcript has another call (${differs.join('; ')})`);
}

/**
 * The stored arguments are the Toolkit's parse of the expected ones: the value `execute`
 * stored. A call recorded before the coordinator stored that parse is parsed the same way
 * first. A tool not registered here cannot run, so only its other parts are compared.
 */
async function sameArguments({ toolkit }: ResolutionSettings, call: SuspendedCall, expected: ExpectedCall): Promise<boolean> {
  if (!toolkit.has(expected.tool)) return true;
  const parsed = await toolkit.prepare(expected.tool, expected.args);
  if (!parsed.ok) return false;
  if (sameJson(call.args, parsed.args)) return true;
  const stored = await toolkit.prepare(call.tool, call.args);
  return stored.ok && sameJson(stored.args, parsed.args);
}
