import { loadPeer } from '../../errors/peer';

export type A2ASdk = typeof import('@a2a-js/sdk');
export type A2ASdkClient = typeof import('@a2a-js/sdk/client');

const INSTALL = 'npm install @a2a-js/sdk';

/** The SDK's wire types and its client, loaded when an agent tool is made; without them, a `MissingPeerError`. */
export function a2aSdk(): { sdk: A2ASdk; client: A2ASdkClient } {
  return {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
    sdk: loadPeer<A2ASdk>(() => require('@a2a-js/sdk'), 'toolnexus-ts/a2a', '@a2a-js/sdk', INSTALL),
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
    client: loadPeer<A2ASdkClient>(() => require('@a2a-js/sdk/client'), 'toolnexus-ts/a2a', '@a2a-js/sdk', INSTALL),
  };
}
