import { loadPeer } from '../errors/peer';

export type DbosSdk = typeof import('@dbos-inc/dbos-sdk');

// eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
const load = (): unknown => require('@dbos-inc/dbos-sdk');

/** `@dbos-inc/dbos-sdk`, loaded when this entry is used (never from the root); without it, a `MissingPeerError`. */
export function dbosSdk(): DbosSdk {
  return loadPeer<DbosSdk>(load, 'toolnexus-ts/dbos', '@dbos-inc/dbos-sdk', 'npm install @dbos-inc/dbos-sdk');
}
