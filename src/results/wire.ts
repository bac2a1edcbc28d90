/**
 * The wire shapes every implementation of the tool contract exchanges. Their keys are
 * fixed: they cross processes and languages byte-for-byte.
 */

/** What a tool call produced. A suspension is a result whose `metadata.pending` is set. */
export interface ToolResult {
  output: string;
  isError: boolean;
  metadata?: Record<string, unknown>;
}

/** A question a suspended tool call asks a human (approve, log in, type a value). */
export interface PendingRequest {
  /** Unique per suspension: the correlation key an {@link Answer} echoes. */
  id: string;
  /** `"authorization" | "approval" | "input" | "question"` or any other kind (open). */
  kind: string;
  /** What is asked, in human words. */
  prompt: string;
  /** Where the action happens, when it happens at a link. */
  url?: string;
  /** Kind-specific payload; `data.schema` may describe the expected `Answer.data`. */
  data?: Record<string, unknown>;
  /** RFC 3339 instant after which the request is stale. */
  expiresAt?: string;
}

/** Why an answer did not satisfy its request; advisory. */
export type AnswerReason = 'declined' | 'cancelled' | 'expired';

/** A human's reply to a {@link PendingRequest}. */
export interface Answer {
  /** Echoes `PendingRequest.id`. */
  id: string;
  /** Satisfied, versus declined / cancelled / expired. */
  ok: boolean;
  /** The payload: the value typed, the choice made, claims. */
  data?: Record<string, unknown>;
  /** Only when `ok` is false. */
  reason?: AnswerReason;
  /**
   * Approved with these arguments instead of the call's, where the request allows edits
   * (`data.editable`): validated by the tool's DTO before anything is stored, and what the
   * replay runs with (docs/who-may-answer.md, "Edit").
   */
  args?: Record<string, unknown>;
  /**
   * Who gave the answer, as the coordinator recorded it with the claim (`answeredBy` of the
   * stored call): set on the answer a replay sees (`ctx.answer`, `ctx.approval`, the chain's
   * links), whichever front end answered. Never read from an answer given to `resolve`.
   */
  answeredBy?: { id: string; name?: string };
  /**
   * Every approval of a quorum request (docs/who-may-answer.md, "Quorum"), in the order they
   * were recorded: set on the answer the replay sees, never read from an answer given to `resolve`.
   */
  signatures?: Signature[];
}

/**
 * One approval of a quorum request: who gave it, when (the store's clock, RFC 3339), in which
 * words; or, with `declined`, one decline of a quorum that takes several (`quorum.declines`).
 */
export interface Signature {
  by: { id: string; name?: string };
  at: string;
  comment?: string;
  /** A decline recorded toward `quorum.declines`, not an approval. */
  declined?: true;
}

/** A request of a call's chain together with the answer that replayed it. */
export interface AnsweredRequest {
  request: PendingRequest;
  answer: Answer;
}
