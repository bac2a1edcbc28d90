import type { ChatMessage, ModelResponse, ModelTool, OutputFormat } from '../../../models/types';

/**
 * The request about to be sent to the model, as `beforeModel` sees it: a copy, so a hook may
 * change it or return another. The run's transcript is never changed by it: what a hook
 * trims is left out of this one request only.
 */
export interface ModelCall {
  /** The run's id (the session's current run, in a chat). */
  readonly runId: string;
  /** The 1-based model call of the run this request makes. */
  readonly turn: number;
  system?: string;
  messages: ChatMessage[];
  tools: readonly ModelTool[];
  /** The typed answer asked for natively, when the run asks for one. */
  output?: OutputFormat;
}

/**
 * Rewrites the request about to be sent (trim, summarise, add context). Return the changed
 * copy, or nothing to send it as it is. Throwing fails the run as a model error would.
 */
export type BeforeModel = (call: ModelCall) => ModelCall | void | Promise<ModelCall | void>;

/**
 * Sees the model's answer before the run does: return a changed copy (filter text, drop a
 * call), or nothing. With streaming, text deltas have already been sent; this changes what
 * the transcript keeps and what runs.
 */
export type AfterModel = (response: ModelResponse, call: ModelCall) => ModelResponse | void | Promise<ModelResponse | void>;
