import { MissingPeerError } from './index';

/**
 * Loads the optional peer an entry wraps (an adapter's framework, the skills entry's YAML parser), when that entry is loaded (never from the
 * root). Without the peer the error names the command that installs it; any other failure (a
 * peer installed but broken) is passed on unchanged.
 *
 * `load` is a thunk around a literal `require`, so bundlers still see which module it is.
 */
export function loadPeer<T>(load: () => unknown, entry: string, peer: string, install: string): T {
  try {
    return load() as T;
  } catch (error) {
    if (isMissing(error, peer)) throw new MissingPeerError(entry, peer, install, { cause: error });
    throw error;
  }
}

function isMissing(error: unknown, peer: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${peer}`);
}
