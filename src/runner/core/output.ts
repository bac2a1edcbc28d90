import { InvalidArgumentError, InvalidResumeError } from '../../errors';
import type { ClassType } from '../../decorators/types';
import { planForClass, type ArgumentsPlan } from '../../toolkit/arguments';
import type { ChatModel, ModelTool, OutputFormat, ToolCall } from '../../models/types';

/** The name of the tool a model without native structured output gives its typed answer through. */
export const FINAL_ANSWER_TOOL = 'final_answer';

/** Repair rounds a typed answer gets by default. */
export const DEFAULT_OUTPUT_REPAIRS = 2;

/** How much of a rejected answer an error keeps. */
const MAX_KEPT_ANSWER = 2000;

/**
 * A typed final answer while a run asks for one: the DTO's plan (the same schema and
 * class-validator path a tool's arguments take, built once per class), how it is asked
 * for, and the repair rounds used so far.
 */
export interface OutputRun {
  dto: ClassType;
  plan: ArgumentsPlan;
  format: OutputFormat;
  /** True: the provider's structured output; false: the {@link FINAL_ANSWER_TOOL} tool. */
  native: boolean;
  maxRepairs: number;
  repairs: number;
  /** The validated answer, as plain JSON (what a checkpoint keeps) and as the DTO instance. */
  value?: { plain: unknown; instance: object };
}

/** What a checkpoint keeps of a typed answer: the class can't be stored, so it is named, and given again on resume. */
export interface OutputState {
  name: string;
  repairs: number;
  maxRepairs: number;
  /** The validated answer once there is one. */
  value?: unknown;
}

/** The output format's name for a DTO class: its class name, as a provider accepts names. */
export function outputName(dto: ClassType): string {
  const name = (dto.name || 'Output').replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return name === '' ? 'Output' : name;
}

/** Starts a typed answer for a run, or says clearly why the option cannot be used. */
export function startOutput(dto: unknown, maxRepairs: number, model: ChatModel, tools: readonly ModelTool[]): OutputRun {
  if (typeof dto !== 'function') throw new InvalidArgumentError('output must be a DTO class (decorated with class-validator)');
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0)
    throw new InvalidArgumentError(`maxOutputRepairs must be an integer >= 0, got ${String(maxRepairs)}`);
  const native = model.structuredOutput === true;
  if (!native && tools.some((tool) => tool.name === FINAL_ANSWER_TOOL))
    throw new InvalidArgumentError(
      `a typed answer is asked for through a tool named ${FINAL_ANSWER_TOOL}, and the toolkit already has one: rename that tool`,
    );
  const plan = planForClass(dto as ClassType);
  return {
    dto: dto as ClassType,
    plan,
    format: { name: outputName(dto as ClassType), schema: plan.schema },
    native,
    maxRepairs,
    repairs: 0,
  };
}

/** Restores a checkpoint's typed answer with the class the resuming caller gave. */
export function resumeOutput(
  runId: string,
  state: OutputState | undefined,
  dto: unknown,
  model: ChatModel,
  tools: readonly ModelTool[],
): OutputRun | undefined {
  if (state === undefined) {
    if (dto !== undefined)
      throw new InvalidResumeError(`run ${runId} was started without a typed answer: resume it without output, or start a new run`);
    return undefined;
  }
  if (typeof dto !== 'function')
    throw new InvalidResumeError(`run ${runId} asks for a typed answer (${state.name}): pass { output: ${state.name} } to resume it`);
  const output = startOutput(dto, state.maxRepairs, model, tools);
  if (output.format.name !== state.name)
    throw new InvalidResumeError(`run ${runId} asks for a typed answer of ${state.name}, not ${output.format.name}`);
  output.repairs = state.repairs;
  return output;
}

/** What a checkpoint keeps of it. */
export function outputState(output: OutputRun): OutputState {
  const state: OutputState = { name: output.format.name, repairs: output.repairs, maxRepairs: output.maxRepairs };
  if (output.value) state.value = output.value.plain;
  return state;
}

/** The tools a run offers: the toolkit's, plus the final-answer tool when the answer goes through one. */
export function offeredTools(tools: readonly ModelTool[], output: OutputRun | undefined): readonly ModelTool[] {
  if (!output || output.native) return tools;
  const final: ModelTool = {
    name: FINAL_ANSWER_TOOL,
    description:
      'Give your final answer by calling this tool, with the answer as its arguments. Call it on its own, once every other tool result is in; do not answer in text.',
    inputSchema: output.format.schema,
  };
  return [...tools, final];
}

/** The feedback that asks the model to correct its answer. */
export function repairPrompt(output: OutputRun, problem: string): string {
  return output.native
    ? `Your answer is not valid ${output.format.name} JSON: ${problem}. Answer again with only the corrected JSON object.`
    : `Your ${FINAL_ANSWER_TOOL} arguments are not a valid ${output.format.name}: ${problem}. Call ${FINAL_ANSWER_TOOL} again with corrected arguments.`;
}

/** The feedback to a model that answered in text where the final-answer tool was expected. */
export function textReminder(): string {
  return `Give your final answer by calling ${FINAL_ANSWER_TOOL} with it as the arguments; a text answer is not taken.`;
}

/** Validates an answer (JSON text or parsed arguments); the instance on success, the problem otherwise. */
export async function checkOutput(
  output: OutputRun,
  answer: string,
): Promise<{ ok: true; plain: unknown; instance: object } | { ok: false; problem: string }> {
  const text = output.native ? stripFence(answer) : answer;
  if (text.trim() === '') return { ok: false, problem: 'the answer is empty' };
  const parsed = await output.plan.parse(text);
  if (!parsed.ok) return parsed;
  return { ok: true, plain: JSON.parse(text) as unknown, instance: parsed.value };
}

/** A kept rejected answer, cut to size. */
export function keptOutput(answer: string): string {
  return answer.length > MAX_KEPT_ANSWER ? `${answer.slice(0, MAX_KEPT_ANSWER)}...` : answer;
}

/** Some servers wrap JSON in a Markdown fence even when asked for a schema. */
function stripFence(text: string): string {
  const match = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text);
  return match ? (match[1] as string) : text;
}

/** True when the model's response is the typed answer: text (no calls), or the one final-answer call. */
export function answersNow(output: OutputRun, calls: readonly ToolCall[]): boolean {
  return calls.length === 0 || (!output.native && calls.length === 1 && calls[0]?.name === FINAL_ANSWER_TOOL);
}
