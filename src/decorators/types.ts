import type { JsonSchema } from '../results/json-schema';
import type { StandardSchemaWithJson } from './standard-schema';

/**
 * A class that can be constructed with `new` (the DTO or tool class itself). Its parameter
 * list is `any[]` because that is the constructor type tsyringe, InversifyJS and
 * class-transformer accept: with `unknown[]` or `never[]`, a resolver could not hand the
 * class to a container. The parameters are the resolver's business, never the Toolkit's.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the constructor type tsyringe, InversifyJS and class-transformer accept (see above)
export type ClassType<T = object> = new (...args: any[]) => T;

/** An abstract or concrete class; used where the class is only inspected, never built. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as ClassType: what containers accept
export type AnyClass<T = object> = abstract new (...args: any[]) => T;

/** Options of {@link Tool}. */
export interface ToolOptions {
  /** Defaults to the class name in snake_case with a trailing `Tool` dropped. Sanitized. */
  name?: string;
  /** What the tool does, for the model. Required. */
  description: string;
  /**
   * The arguments DTO: validated with class-validator and the source of the JSON Schema. Or
   * any Standard Schema with JSON Schema (zod 4, arktype, valibot with `toStandardJsonSchema`):
   * the model is shown its `jsonSchema.input`, and its `validate` checks the arguments
   * (docs/standard-schema.md). `@Sensitive` has no meaning there; `sensitive` lists its secrets.
   */
  args?: ClassType | StandardSchemaWithJson;
  /**
   * With a Standard Schema `args`: the top-level argument names whose values are secrets,
   * redacted wherever a call is shown, as `@Sensitive()` fields of a DTO are. Ignored with a DTO
   * (mark its fields `@Sensitive()`).
   */
  sensitive?: readonly string[];
  /** A raw JSON Schema for tools without a DTO. */
  inputSchema?: JsonSchema;
  /** Per-tool deadline in milliseconds. */
  timeoutMs?: number;
  /**
   * Calls need a human's approval before `run`: `true` for every call, a policy that
   * decides per call and words the question, or a function of the arguments that returns the
   * approval each call needs (a quorum above an amount) or `false`. The Toolkit asks (kind
   * `approval`) and calls `run` only after an ok answer to that very request; no other answer
   * (a login, say) can stand in for it. The approval is on `ctx.approval`.
   */
  approval?: boolean | ApprovalPolicy | ApprovalByArgs;
  /** A human-readable name for UIs (an MCP client shows it instead of `name`). */
  title?: string;
  /** Hints about what calls do, for clients that decide how carefully to call (MCP tool annotations). Advisory. */
  annotations?: ToolAnnotations;
  /**
   * The DTO class describing what `run` returns (a JSON object). Its JSON Schema is the tool's
   * output schema, and MCP clients get the returned object as `structuredContent`.
   */
  output?: ClassType;
  /**
   * Running a call again has no further effect (a lookup, an upsert keyed by the call).
   * An agent run with durable steps that lost its driver while this call ran runs it again
   * on recovery; a call of any other tool is put to an operator first (a `recovery` request).
   * Unlike `annotations.idempotentHint`, this changes what the runner does.
   */
  idempotent?: boolean;
  /**
   * The most calls of this tool that run at once through its Toolkit, from every run and
   * caller; the others wait their turn (docs/agents.md, "Limits"). Default: no limit.
   */
  concurrency?: number;
}

/**
 * Behaviour hints of a tool, as the Model Context Protocol names them. Clients treat them as
 * untrusted hints; they change nothing in how the Toolkit runs the tool.
 */
export interface ToolAnnotations {
  /** The tool does not modify its environment. */
  readOnlyHint?: boolean;
  /** The tool may perform destructive updates (meaningful when not read-only). */
  destructiveHint?: boolean;
  /** Calling it again with the same arguments has no additional effect. */
  idempotentHint?: boolean;
  /** The tool interacts with an open world of external entities (the web, say). */
  openWorldHint?: boolean;
}

/**
 * What one call's declared approval asks: the question, and who must answer it how. What an
 * {@link ApprovalByArgs} returns for a call; {@link ApprovalPolicy} is the same declared once for
 * every call.
 */
export interface DeclaredApproval {
  /** The question put to the approver. Default: `Approve <tool> <arguments as JSON>?`. */
  prompt?: string;
  /** The approval goes stale this long after it is asked. */
  expiresInMs?: number;
  /**
   * Needs `of` approvals, each a recorded signature, by distinct principals (of `from`, when
   * given) before the call runs: docs/who-may-answer.md, "Quorum". Asked as `data.quorum`.
   */
  quorum?: {
    of: number;
    from?: readonly string[];
    /**
     * How many distinct eligible principals' declines settle it declined (default 1: the first
     * decline does). Below that, a decline is recorded beside the approvals and it still waits.
     */
    declines?: number;
  };
  /**
   * The approver may approve with edited arguments (`{ ok: true, args }`), validated by the
   * tool's DTO; the call runs with them (docs/who-may-answer.md, "Edit"). Asked as `data.editable`.
   */
  editable?: boolean;
  /**
   * After `afterMs`, the principals in `to` may answer too (a manager when the team lead did not),
   * and sign a quorum: observers and webhooks are told when `ResumeCoordinator.sweep` sees it come
   * due. Asked as `data.escalation` (docs/who-may-answer.md, "Escalation"). With `expiresInMs`, the
   * request then settles `expired` when a sweep finds it past its deadline.
   */
  escalate?: { afterMs: number; to: readonly string[] };
}

/**
 * A declared approval that depends on the call: a function of the validated arguments (and the
 * call's context) returning the approval this call needs, `true` for the default one, or `false`
 * for none (docs/tools.md, "Approval"). The Toolkit asks what it returns; the stored request, its
 * binding and the answer policy see that, so what was asked is what is judged.
 *
 * @example
 * ```ts
 * @Tool({ description: 'Wires money', args: WireArgs,
 *   approval: (args: WireArgs) => args.cents > 1_000_000 ? { quorum: { of: 2, from: FINANCE } } : true })
 * ```
 */
// Method syntax (bivariant parameters), so a function typed with the tool's own DTO fits.
export type ApprovalByArgs = {
  bivarianceHack(args: object, ctx: object | undefined): boolean | DeclaredApproval | Promise<boolean | DeclaredApproval>;
}['bivarianceHack'];

/**
 * When and how a tool's calls are approved, declared once for every call. Everything is
 * optional: `{}` asks for every call. For an approval that depends on the call beyond `when`
 * and the prompt (a quorum above an amount), declare an {@link ApprovalByArgs}.
 *
 * @example
 * ```ts
 * @Tool({ description: 'Refund a payment', args: RefundArgs,
 *   approval: { when: (args: RefundArgs) => args.cents > 10_000, prompt: (args: RefundArgs) => `Refund ${args.cents} cents to ${args.customer}?` } })
 * ```
 */
export interface ApprovalPolicy extends Omit<DeclaredApproval, 'prompt'> {
  /** Whether this call needs approval (default: always). Return false to let it run at once. */
  // Method syntax on purpose: its parameters are bivariant, so a policy typed with the tool's
  // own DTO (`(args: RefundArgs) => ...`) fits, while this layer stays below the Toolkit's types.
  when?(args: object, ctx: object | undefined): boolean | Promise<boolean>;
  /** The question put to the approver. Default: `Approve <tool> <arguments as JSON>?`. */
  prompt?: string | { bivarianceHack(args: object): string }['bivarianceHack'];
}
