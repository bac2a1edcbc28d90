import type { ChatMessage } from '../../../models/types';
import type { ToolResult } from '../../../results/wire';

/**
 * Where a guardrail looked: the user's input, a turn's text, a tool call's arguments, or its
 * result; named as the stage's list in {@link GuardrailOptions} is. (Checkpoints written before
 * issue 45 say `tool_input` / `tool_output`; they are read as these.)
 */
export type GuardrailStage = 'input' | 'output' | 'toolInput' | 'toolOutput';

/**
 * What a guardrail says of what it checked: `allow` (go on), `block` (the run ends `blocked`,
 * its own status), or `feedback` (the message goes back to the model and the run goes on,
 * for at most `maxFeedback` rounds a run). A message is shown to whoever runs the app and, for
 * feedback, to the model: write it so it holds no secret.
 */
export type GuardrailVerdict =
  | { readonly action: 'allow' }
  | { readonly action: 'block'; readonly message: string }
  | { readonly action: 'feedback'; readonly message: string };

/** The user's input, before the first model call of a run. */
export interface InputSubject {
  readonly stage: 'input';
  /** The last user message of the input. */
  readonly text: string;
  /** The whole input transcript (a session's thread included). */
  readonly messages: readonly ChatMessage[];
}

/**
 * A turn's text, before it leaves. Checked once when the turn's answer is whole (`complete`);
 * with `holdBack: 'segments'` also at each sentence end as it streams (`segment` is the new
 * text, `text` the turn's text up to it).
 */
export interface OutputSubject {
  readonly stage: 'output';
  readonly text: string;
  readonly segment: string;
  /** The turn's text is whole. */
  readonly complete: boolean;
  /** The text is the run's answer: complete, and the model asked for no tool. */
  readonly final: boolean;
}

/** A tool call's arguments, as the model wrote them (JSON text), before the call runs. */
export interface ToolInputSubject {
  readonly stage: 'toolInput';
  readonly tool: string;
  readonly callId: string;
  readonly arguments: string;
}

/** A tool call's result, before the model sees it (after any answer a suspension waited for). */
export interface ToolOutputSubject {
  readonly stage: 'toolOutput';
  readonly tool: string;
  readonly callId: string;
  readonly arguments: string;
  readonly result: ToolResult;
}

/** What any guardrail may be asked to check. */
export type GuardrailSubject = InputSubject | OutputSubject | ToolInputSubject | ToolOutputSubject;

/** Where a check happens: its run, its turn, the run's signal and the host's context. */
export interface GuardrailContext {
  readonly runId: string;
  /** The model calls made so far (0 before the first). */
  readonly turn: number;
  readonly signal?: AbortSignal;
  /** The run's `context` option, as tools get it. */
  readonly context?: object;
}

/**
 * A guardrail as a class (an instance, so a container can inject its services): its
 * `check` judges one subject. It is named by `name`, else by its class.
 */
export interface Guardrail<S extends GuardrailSubject = GuardrailSubject> {
  readonly name?: string;
  check(subject: S, context: GuardrailContext): GuardrailVerdict | Promise<GuardrailVerdict>;
}

/** A guardrail as a function, named by its function name. */
export type GuardrailFunction<S extends GuardrailSubject = GuardrailSubject> = (
  subject: S,
  context: GuardrailContext,
) => GuardrailVerdict | Promise<GuardrailVerdict>;

/** Either form of a guardrail. */
export type GuardrailCheck<S extends GuardrailSubject = GuardrailSubject> = Guardrail<S> | GuardrailFunction<S>;

/**
 * How streamed text waits for the output guardrails: `turn` holds a turn's text until its
 * whole text passes, `segments` releases it sentence by sentence as each passes, `none`
 * streams it at once (a block then ends the run after the user saw the text).
 */
export type HoldBack = 'turn' | 'segments' | 'none';

/** The runner's guardrails (docs/guardrails.md). */
export interface GuardrailOptions {
  /** On the user's input, before the first model call. */
  input?: ReadonlyArray<GuardrailCheck<InputSubject>>;
  /** On each turn's text, before it leaves. */
  output?: ReadonlyArray<GuardrailCheck<OutputSubject>>;
  /** On each tool call's arguments, before it runs. */
  toolInput?: ReadonlyArray<GuardrailCheck<ToolInputSubject>>;
  /** On each tool call's result, before the model sees it. */
  toolOutput?: ReadonlyArray<GuardrailCheck<ToolOutputSubject>>;
  /** Default `turn` (nothing unchecked leaves). */
  holdBack?: HoldBack;
  /**
   * Run the input guardrails beside the first model call rather than before it: faster, and
   * still safe: the call's text is held and no tool runs until they pass. Default false.
   */
  parallelInput?: boolean;
  /** Feedback rounds a run may take; one more blocks it. Default 3. */
  maxFeedback?: number;
  /**
   * How long one guardrail may take to give its verdict, in milliseconds on the runner's clock;
   * past it the guardrail blocks (`the guardrail NAME timed out after MS ms`): a check that
   * could not be made never lets anything through. Default 30 000.
   */
  timeoutMs?: number;
}

/** One check of a run, as its result and checkpoint keep it (segment checks that passed count once a turn). */
export interface GuardrailRecord {
  guardrail: string;
  stage: GuardrailStage;
  action: GuardrailVerdict['action'];
  message?: string;
  /** The turn it happened in (0: before the first model call). */
  turn: number;
  /** The tool call it judged, at the tool stages. */
  callId?: string;
}

/** A stage as a checkpoint may have stored it: the names before issue 45 read as today's. */
export function stageOf(stored: unknown): unknown {
  return stored === 'tool_input' ? 'toolInput' : stored === 'tool_output' ? 'toolOutput' : stored;
}
