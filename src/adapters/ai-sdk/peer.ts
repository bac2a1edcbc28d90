import { loadPeer } from '../../errors/peer';

type Ai = typeof import('ai');
let loaded: Ai | undefined;

/** The `ai` package, loaded once, on the first use of this entry; without it, a {@link MissingPeerError}. */
export function ai(): Ai {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
  loaded ??= loadPeer<Ai>(() => require('ai'), 'toolnexus-ts/ai-sdk', 'ai', 'npm install ai');
  return loaded;
}
