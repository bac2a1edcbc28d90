import { SdkHttpError } from '@modelcontextprotocol/client';
import { messageOf } from '../../errors/message';

const MAX_ERROR_CHARS = 2000;

/** What a server's failure says, with its HTTP status, cut to a length a message can carry (a hostile body may be huge). */
export function said(error: unknown): string {
  const status = error instanceof SdkHttpError && error.status > 0 ? `HTTP ${error.status}: ` : '';
  const text = `${status}${messageOf(error)}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… (cut)` : text;
}

/** The server forgot the session (it restarted) and said so: nothing ran. */
export function isDroppedSession(error: unknown): boolean {
  return error instanceof SdkHttpError && error.status === 404;
}

/** fetch's own failure: the socket closed or was refused, with no HTTP answer. */
export function isConnectionLost(error: unknown): boolean {
  // By name, not instanceof: fetch's TypeError comes from Node's own realm, not a sandbox's (jest's).
  return (
    typeof error === 'object' && error !== null && (error as Error).name === 'TypeError' && (error as Error).message === 'fetch failed'
  );
}
