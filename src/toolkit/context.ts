import type { Answer } from '../results/wire';

/**
 * The optional, opaque context a tool's `run` receives as its second argument.
 * The Toolkit and the ResumeCoordinator add exactly one thing to it: `answer`, on the
 * replay that follows a resolved suspension. Everything else is the host's.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is the neutral element of `&`
export type ToolContext<TState extends object = {}> = {
  /** Cancellation. */
  signal?: AbortSignal;
  /** This call's deadline in milliseconds. */
  timeout?: number;
  /** Present only on the replay after a suspension resolved. */
  answer?: Answer;
} & TState;
