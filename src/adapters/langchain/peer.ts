import { loadPeer } from '../../errors/peer';

type Tools = typeof import('@langchain/core/tools');
type Messages = typeof import('@langchain/core/messages');
type LangGraph = typeof import('@langchain/langgraph');

/** The parts of `@langchain/core` and `@langchain/langgraph` this entry uses. */
export interface LangChainPeers {
  tools: Tools;
  messages: Messages;
  langgraph: LangGraph;
}

/** What installs both peers: the entry needs both, whichever one is missing. */
export const LANGCHAIN_INSTALL = 'npm install @langchain/core @langchain/langgraph';
const ENTRY = 'toolnexus-ts/langchain';
let loaded: LangChainPeers | undefined;

/** `@langchain/core` and `@langchain/langgraph`, loaded once, on the first use of this entry; without either, a {@link MissingPeerError}. */
export function langchain(): LangChainPeers {
  loaded ??= {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
    tools: loadPeer<Tools>(() => require('@langchain/core/tools'), ENTRY, '@langchain/core', LANGCHAIN_INSTALL),
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
    messages: loadPeer<Messages>(() => require('@langchain/core/messages'), ENTRY, '@langchain/core', LANGCHAIN_INSTALL),
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, required by this entry only
    langgraph: loadPeer<LangGraph>(() => require('@langchain/langgraph'), ENTRY, '@langchain/langgraph', LANGCHAIN_INSTALL),
  };
  return loaded;
}
