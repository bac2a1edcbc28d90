import { ToolnexusError } from '../../errors';

/**
 * A catalog request that cannot be served: no resource at that URI, no such prompt, arguments
 * or template parameters that do not validate. `reason` says which, for the protocol's error code.
 */
export class McpCatalogError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_CATALOG';

  constructor(
    message: string,
    readonly reason: 'not-found' | 'invalid',
  ) {
    super(message);
  }
}

/** Why a `requestState` was refused: each names one check it failed. */
export type McpRequestStateProblem = 'malformed' | 'tampered' | 'expired' | 'foreign-principal' | 'foreign-request';

const STATE_PROBLEMS: Record<McpRequestStateProblem, string> = {
  malformed: 'it is not a requestState this server gave',
  tampered: 'its signature does not verify (it was changed, or signed with a key this server no longer has)',
  expired: 'it is past its TTL; call the tool again without it',
  'foreign-principal': 'it was given to another principal',
  'foreign-request': 'it belongs to another request (another tool or other arguments)',
};

/**
 * A `requestState` an MCP retry presented that this server refuses (docs/mcp.md, "A suspended
 * call over MCP"): changed, past its TTL, given to another principal or to another request.
 * Nothing was looked up or changed; the client gets a JSON-RPC `-32602` saying which.
 */
export class McpRequestStateError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_REQUEST_STATE';

  constructor(readonly problem: McpRequestStateProblem) {
    super(`requestState refused: ${STATE_PROBLEMS[problem]}`);
  }
}

/**
 * An `inputResponses` entry of an MCP retry that cannot be an answer: not an elicitation
 * result, or content the form did not ask for. Nothing was answered; the client gets a
 * JSON-RPC `-32602` saying why and may retry with a fitting answer.
 */
export class McpInputResponseError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_INPUT_RESPONSE';
}

/**
 * A `tasks/get`, `tasks/update` or `tasks/cancel` naming no task of the caller's: none by that
 * id, or another principal's (told apart from nothing, so ids cannot be probed). JSON-RPC `-32602`.
 */
export class McpTaskNotFoundError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_MCP_TASK_NOT_FOUND';

  constructor() {
    super('task not found');
  }
}
