import {
  A2AError,
  ERROR_INFO_TYPE,
  JsonRpcTransportError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
  type ErrorDetail,
} from '@a2a-js/sdk/errors';
import { ToolnexusError } from '../../errors';

/** Why an A2A request was refused, for programs (the `reason` of {@link A2ARequestError}). */
export type A2ARefusal =
  /** The message is not one this agent reads: no text, too many parts, a part of an unknown shape. */
  | 'bad_message'
  /** The reply to an `input-required` task does not answer its request (wrong shape, or invalid for its schema). */
  | 'bad_answer'
  /** The task's request was answered already (by another reply, maybe at the same instant), or it waits for nothing. */
  | 'not_pending'
  /** The answer policy refused this principal's answer (docs/who-may-answer.md). */
  | 'answer_refused'
  /** The context has a task in progress or waiting for input: reply on that task (its `taskId`). */
  | 'busy'
  /** Only a task waiting for input can be cancelled here. */
  | 'not_cancelable'
  /** A push notification URL this agent does not send to (docs/a2a.md, "Listing and push"). */
  | 'bad_push_url'
  /** The task is another principal's. */
  | 'not_yours';

/**
 * An A2A request refused before anything changed (docs/a2a.md, "Errors"). On the wire it is
 * the A2A error its `reason` maps to (`-32602` for a bad message or answer, `-32002` for a task
 * that cannot be cancelled, the authorization error, HTTP 403, for a refusal by the answer
 * policy, `-32004` otherwise), with `toolnexus_reason` in the error's `ErrorInfo.metadata`; an
 * unauthenticated request is answered 401 before it is read.
 */
export class A2ARequestError extends ToolnexusError {
  override readonly code = 'TOOLNEXUS_A2A_REQUEST';

  constructor(
    readonly reason: A2ARefusal,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What the SDK's transports send for a thrown value: an {@link A2ARequestError} as its A2A
 * error, an SDK error as it is, anything else as an internal error naming only its code (the
 * message of a store or tool error may quote what the client must not see).
 */
export function wireError(error: unknown): A2AError {
  if (error instanceof A2ARequestError) {
    if (error.reason === 'answer_refused')
      return new JsonRpcTransportError({
        jsonrpc: '2.0',
        id: null,
        error: { code: PERMISSION_DENIED_CODE, message: error.message, data: [permissionDenied(error.reason)] },
      });
    const options = { message: error.message, metadata: { toolnexus_reason: error.reason } };
    if (error.reason === 'bad_message' || error.reason === 'bad_answer' || error.reason === 'bad_push_url')
      return new RequestMalformedError(options);
    if (error.reason === 'not_yours') return new TaskNotFoundError(options);
    if (error.reason === 'not_cancelable') return new TaskNotCancelableError(options);
    return new UnsupportedOperationError(options);
  }
  if (error instanceof A2AError) return error;
  const code = error instanceof ToolnexusError ? error.code : 'an internal error';
  return new A2AError({ message: `the request failed: ${code}` });
}

/**
 * The JSON-RPC code of a refusal by the answer policy. The A2A spec's authorization error
 * (HTTP 403 Forbidden, gRPC `PERMISSION_DENIED`) has no A2A code in the JSON-RPC binding, only
 * "a custom error": so it is JSON-RPC's implementation-defined server error, sent with HTTP 403
 * and an `ErrorInfo` whose reason is `PERMISSION_DENIED`, as the other doors' 403 is.
 */
export const PERMISSION_DENIED_CODE = -32000;

/** The `ErrorInfo` of a refusal by the answer policy (the SDK's 1.0 transport drops custom details: `http.ts` puts it back). */
export function permissionDenied(reason: A2ARefusal = 'answer_refused'): ErrorDetail {
  return { '@type': ERROR_INFO_TYPE, reason: 'PERMISSION_DENIED', domain: 'toolnexus-ts', metadata: { toolnexus_reason: reason } };
}
