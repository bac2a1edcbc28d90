/**
 * The CLI's exit codes (docs/operating.md, "CLI"): scripts branch on them, so they never
 * change meaning once released.
 */
export const EXIT = {
  /** Done. */
  ok: 0,
  /** Anything unexpected: the store cannot be reached, a tools module fails to load. */
  failed: 1,
  /** The command line is wrong: an unknown command or option, a missing argument. */
  usage: 2,
  /** No suspension has this id. */
  notFound: 3,
  /** The suspension was already settled (by someone else, or before): nothing was done. */
  alreadySettled: 4,
  /**
   * The coordinator refused: approving needs the tool (`--tools`), the stored call does not
   * match its binding (another `TOOLNEXUS_BINDING_KEY`), or the answer or reason is invalid.
   */
  refused: 5,
  /**
   * The answer policy refused this principal (`--as`, else the OS user, as `cli:<name>`): the
   * `--tools` module's coordinator has a policy that does not let them give this answer
   * (docs/who-may-answer.md). Nothing was done.
   */
  notAllowed: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];
