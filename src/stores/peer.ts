import { StoreError } from '../errors';

/**
 * Loads an optional peer dependency (a database driver) when a store is built, not when the
 * package is imported. When the driver is not installed, the error names the command that
 * installs it; any other failure (a driver installed but broken) is passed on unchanged.
 *
 * `load` is a thunk around a literal `require`, so bundlers still see which module it is.
 */
export function loadOptionalPeer<T>(load: () => unknown, name: string, install: string, user: string): T {
  try {
    return load() as T;
  } catch (error) {
    if (isMissingModule(error, name)) {
      throw new StoreError(
        `${user} needs the package "${name}", an optional peer dependency of toolnexus-ts that is not installed: run \`${install}\``,
        { cause: error },
      );
    }
    throw error;
  }
}

function isMissingModule(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${name}'`);
}
