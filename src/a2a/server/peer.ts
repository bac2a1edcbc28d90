import { loadPeer } from '../../errors/peer';

/**
 * Loads `@a2a-js/sdk` once, before anything of the entry needs it: without it, loading
 * `toolnexus-ts/a2a` throws a `MissingPeerError` naming `npm install @a2a-js/sdk`, not the
 * resolver's bare MODULE_NOT_FOUND from deep inside the entry.
 */
export function a2aSdk(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded when the entry is
  loadPeer(() => require('@a2a-js/sdk'), 'toolnexus-ts/a2a', '@a2a-js/sdk', 'npm install @a2a-js/sdk');
}
