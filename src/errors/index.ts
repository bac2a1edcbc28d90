/**
 * Every error this library throws, each with a stable `code`.
 *
 * Codes: every class declares `readonly code`, an own property set by a field initializer:
 * `TOOLNEXUS_` plus the class's meaning in SCREAMING_SNAKE_CASE. Match on `code`, not on `name` or
 * the class: a minifier renames classes, and two copies of the package fail each other's
 * `instanceof`. A code is never changed or reused once released. Subclasses inherit their parent's
 * code unless they declare their own; leaf classes type it as its literal, the three with subclasses
 * (`ToolRegistrationError`, `StoreError`, `ModelError`) as `string`.
 */

/** Base class of every error this library throws. */
export class ToolnexusError extends Error {
  /** What went wrong, for programs: stable across releases and minification (see the file header). */
  readonly code: string = 'TOOLNEXUS_ERROR';

  /** `options.cause` is kept as the standard `cause`, the error this one explains. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A programmer error found while registering a tool: no `@Tool`, no `run`, a duplicate name. */
export class ToolRegistrationError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_TOOL_REGISTRATION';
}

/**
 * A DTO property whose schema and validation would disagree, refused at registration
 * (docs/tools.md, "One rule for schema and validation"): a property with no class-validator
 * decorator, `each: true` without `@IsArray()`, `@IsDate()` without `@Type(() => Date)`, a
 * `@Matches` with flags JSON Schema cannot say. The message names the decorator to add.
 */
export class DtoRuleError extends ToolRegistrationError {
  override readonly code = 'TOOLNEXUS_DTO_RULE';

  constructor(
    /** `Class.property`, the property refused. */
    readonly property: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A tool's `args` is a Standard Schema this library cannot use, refused at registration: it
 * has no `~standard.jsonSchema` (so the model would be shown nothing of what validation
 * checks), its JSON Schema conversion threw, or that schema is not of an object.
 */
export class StandardSchemaError extends ToolRegistrationError {
  override readonly code = 'TOOLNEXUS_STANDARD_SCHEMA';
}

/** An answer names a suspension that no store knows (stale, forged or misrouted). */
export class UnknownSuspensionError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_UNKNOWN_SUSPENSION';

  constructor(readonly id: string) {
    super(`unknown suspension: ${id}`);
  }
}

/** An answer arrives for a suspension whose outcome is already settled differently. */
export class AlreadyResolvedError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_ALREADY_RESOLVED';

  constructor(
    readonly id: string,
    readonly status: string,
    /** The agent run the suspension belongs to, when it belongs to one. */
    readonly runId?: string,
  ) {
    super(`suspension ${id}${runId === undefined ? '' : ` of run ${runId}`} is already ${status}`);
  }
}

/** A programmer passed an option or argument the API cannot accept (a negative lease, an unknown status). */
export class InvalidArgumentError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_INVALID_ARGUMENT';
}

/** An answer that is not `Answer`-shaped (no string `id`, no boolean `ok`, `data` not an object). */
export class InvalidAnswerError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_INVALID_ANSWER';
}

/** A store was given a suspension whose id it already holds: suspension ids must be unique. */
export class DuplicateSuspensionError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_DUPLICATE_SUSPENSION';

  constructor(readonly id: string) {
    super(`a suspension with id ${id} is already recorded`);
  }
}

/** A recorded suspension names a tool this process has not registered, so it cannot be replayed here. */
export class UnregisteredToolError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_UNREGISTERED_TOOL';

  constructor(
    readonly id: string,
    readonly tool: string,
  ) {
    super(`cannot resolve ${id}: tool "${tool}" is not registered in this process`);
  }
}

/** A store failed to read or write, is closed, or holds data it cannot understand. */
export class StoreError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_STORE';
}

/** Base of every failure talking to a chat model provider; `provider` names it (`openai`, `anthropic`, ...). */
export class ModelError extends ToolnexusError {
  override readonly code: string = 'TOOLNEXUS_MODEL';

  constructor(
    readonly provider: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The provider answered with an HTTP error. 400 / 401 / 402 / 403 (and any other 4xx but
 * 408 / 429) fail at once; 408 / 429 / 5xx are retried first, and `attempts` says how often.
 */
export class ModelHttpError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_HTTP';

  constructor(
    provider: string,
    readonly status: number,
    /** The provider's own explanation, taken from its error body. */
    readonly providerMessage: string,
    readonly attempts: number,
  ) {
    super(provider, `${provider} returned HTTP ${status}: ${providerMessage}${afterAttempts(attempts)}`);
  }
}

/** The provider did not answer (or stopped sending) within the call's timeout. */
export class ModelTimeoutError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_TIMEOUT';

  constructor(
    provider: string,
    readonly timeoutMs: number,
    readonly attempts: number,
  ) {
    super(provider, `${provider} did not answer within ${timeoutMs} ms${afterAttempts(attempts)}`);
  }
}

/** The provider could not be reached (connection refused or reset, DNS, TLS). */
export class ModelConnectionError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_CONNECTION';

  constructor(
    provider: string,
    readonly detail: string,
    readonly attempts: number,
    options?: ErrorOptions,
  ) {
    super(provider, `${provider} could not be reached: ${detail}${afterAttempts(attempts)}`, options);
  }
}

/** The provider answered 2xx with a body that is not the response it promised (not JSON, wrong shape). */
export class ModelResponseError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_RESPONSE';

  constructor(
    provider: string,
    readonly detail: string,
    /** The start of the body as received, to see what came instead. */
    readonly bodySnippet?: string,
  ) {
    super(
      provider,
      `${provider} sent an unreadable response: ${detail}${bodySnippet === undefined ? '' : ` (body starts: ${JSON.stringify(bodySnippet)})`}`,
    );
  }
}

/** `resume` names a run that has no checkpoint in the store. */
export class RunNotFoundError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_RUN_NOT_FOUND';

  constructor(readonly runId: string) {
    super(`no checkpoint for run ${runId}`);
  }
}

/** A run checkpoint could not be saved because another writer holds a conflicting version. */
export class RunConflictError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_RUN_CONFLICT';

  constructor(
    readonly runId: string,
    detail: string,
  ) {
    super(`run ${runId}: ${detail}`);
  }
}

/**
 * A run was cancelled (`AgentRunner.cancel`): the reason its signal aborts with, so its model
 * call and its tools (`ctx.signal.reason`) see why. The run itself ends `cancelled`, not with this.
 */
export class RunCancelledError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_RUN_CANCELLED';

  constructor(
    readonly runId: string,
    /** Why, as the canceller said it. */
    readonly reason?: string,
  ) {
    super(`run ${runId} was cancelled${reason === undefined ? '' : `: ${reason}`}`);
  }
}

/** A stored run checkpoint is not a state this runner can continue (corrupt or foreign). */
export class RunCheckpointError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_RUN_CHECKPOINT';

  constructor(
    readonly runId: string,
    detail: string,
  ) {
    super(`checkpoint of run ${runId} cannot be used: ${detail}`);
  }
}

/** `resume` was called with a set of answers it cannot apply (empty, duplicated ids, several runs). */
export class InvalidResumeError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_INVALID_RESUME';
}

function afterAttempts(attempts: number): string {
  return attempts > 1 ? ` (after ${attempts} attempts)` : '';
}

/**
 * A store's database could not be reached or dropped the connection mid-operation (a
 * restart, a failover, a network cut). What was already stored stays stored: retry the
 * operation once the database is back.
 */
export class StoreUnavailableError extends StoreError {
  override readonly code = 'TOOLNEXUS_STORE_UNAVAILABLE';
}

/**
 * A replay lost its claim (another process took the call over after its lease ran out):
 * its outcome is not stored, and the resolver waits for the new holder's. Thrown by
 * `resolve` only when the call has no outcome yet and nobody holds it: resolve again later.
 */
export class ClaimLostError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_CLAIM_LOST';
  constructor(
    readonly id: string,
    readonly fence: number,
  ) {
    super(
      `the claim on suspension ${id} (fence ${fence}) was lost before its replay finished; its outcome is not stored yet: resolve again`,
    );
  }
}

/**
 * An answer given with `ifClaimed: 'refuse'` did not win the call's claim: another resolver
 * holds it under a live lease, or settled it first. Nothing this answer carried was applied.
 */
export class ClaimHeldError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_CLAIM_HELD';
  constructor(readonly id: string) {
    super(`suspension ${id} is claimed or settled by another answer; this one was not applied`);
  }
}

/**
 * A stored suspension is not the call that made it: its tool, arguments, run or request
 * were changed in the store (or differ from the run's transcript). Nothing runs.
 */
export class SuspensionMismatchError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_SUSPENSION_MISMATCH';
  constructor(
    readonly id: string,
    readonly detail: string,
  ) {
    super(`suspension ${id} does not match the call that made it: ${detail}`);
  }
}

/**
 * The provider sent more than the model accepts to read: a body over `maxResponseBytes`, or
 * a stream line or event over `maxEventBytes`. Reading stops there; it is not retried.
 */
export class ModelResponseTooLargeError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_RESPONSE_TOO_LARGE';

  constructor(
    provider: string,
    /** What was too large: `the response body`, `a stream event`... */
    readonly what: string,
    readonly limitBytes: number,
    /** The option that sets the limit. */
    readonly option: string,
  ) {
    super(provider, `${provider} sent ${what} larger than ${limitBytes} bytes (the ${option} limit); reading stopped`);
  }
}

/**
 * The provider answered with a redirect (3xx). Redirects are never followed: the request
 * carries the API key and the conversation. The error names the status and the target's
 * origin only, never its path or query. Not retried.
 */
export class ModelRedirectError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_REDIRECT';

  constructor(
    provider: string,
    readonly status: number,
    /** `https://host:port` of the `location` header, or `unknown` when it has none or cannot be parsed. */
    readonly targetOrigin: string,
  ) {
    super(
      provider,
      `${provider} answered HTTP ${status}, a redirect to ${targetOrigin}, which is not followed: point baseUrl at the final URL`,
    );
  }
}

/**
 * The request could not even be sent: `fetch` refused it locally (an invalid header value or
 * URL). Not a network failure, so not retried; the refused value is not quoted.
 */
export class ModelRequestError extends ModelError {
  override readonly code = 'TOOLNEXUS_MODEL_REQUEST';

  constructor(
    provider: string,
    readonly detail: string,
  ) {
    super(provider, `${provider} request could not be sent: ${detail}`);
  }
}

/**
 * A run asked for a typed answer (`output`) and the model's answers still failed
 * validation after every repair round. `problem` is the last validation failure, `answer`
 * the last answer's text (cut to 2 000 characters).
 */
export class OutputValidationError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_OUTPUT_INVALID';

  constructor(
    readonly runId: string,
    readonly outputName: string,
    readonly problem: string,
    readonly answer: string,
    readonly attempts: number,
  ) {
    super(`run ${runId}: the model's answer is not a valid ${outputName} after ${attempts} attempts: ${problem}`);
  }
}

/**
 * An entry of this package was loaded without the optional peer dependency it adapts (`ai`
 * for `toolnexus-ts/ai-sdk`...). `install` is the command that installs it.
 */
export class MissingPeerError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MISSING_PEER';

  constructor(
    readonly entry: string,
    readonly peer: string,
    readonly install: string,
    options?: ErrorOptions,
  ) {
    super(
      `${entry} needs the package "${peer}", an optional peer dependency of toolnexus-ts that is not installed: run \`${install}\``,
      options,
    );
  }
}

/**
 * A session is busy with another run (one running in some process, or one halted waiting
 * for answers): this request is refused before anything runs, so one thread is never
 * interleaved. Retry once `runId` has ended (docs/chat.md, "Sessions").
 */
export class SessionBusyError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_SESSION_BUSY';

  constructor(
    readonly sessionId: string,
    readonly runId: string,
    readonly phase: 'running' | 'halted',
  ) {
    super(
      phase === 'halted'
        ? `session ${sessionId} is waiting for answers to run ${runId}: answer them first`
        : `session ${sessionId} is busy with run ${runId}`,
    );
  }
}

/**
 * A session's thread is at its size bound (`maxSessionMessages` / `maxSessionBytes`): the run is
 * refused before anything runs, or, when the run's own turn alone is over the bound at write,
 * fails with the session left as it was (docs/chat.md, "Bounds").
 */
export class SessionFullError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_SESSION_FULL';

  constructor(
    readonly sessionId: string,
    detail: string,
  ) {
    super(`session ${sessionId} is full: ${detail}`);
  }
}

/**
 * An answer the coordinator's answer policy refused (docs/who-may-answer.md): the principal
 * may not give it, an answer came without a principal while a policy is set, or the
 * requester approved their own request (separation of duties). Nothing stored changed.
 * Front ends show it as 403 (HTTP), an MCP error, or CLI exit code 6.
 */
export class AnswerRefusedError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_ANSWER_REFUSED';

  constructor(
    /** The suspension the answer named. */
    readonly suspensionId: string,
    /** Why, in words fit for the person refused (never an argument value). */
    readonly reason: string,
    /** Who gave the answer, when anyone was named. */
    readonly principalId?: string,
  ) {
    super(`answer to ${suspensionId} refused: ${reason}`);
  }
}
