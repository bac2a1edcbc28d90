import { loadPeer } from '../../errors/peer';

type Agents = typeof import('@openai/agents');
let loaded: Agents | undefined;

/** The `@openai/agents` package, loaded once, on the first use of this entry; without it, a {@link MissingPeerError}. */
export function agents(): Agents {
  loaded ??= loadPeer<Agents>(
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
    () => require('@openai/agents'),
    'toolnexus-ts/openai-agents',
    '@openai/agents',
    'npm install @openai/agents',
  );
  return loaded;
}
