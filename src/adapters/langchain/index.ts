/**
 * The `toolnexus-ts/langchain` entry: a Toolkit's tools as LangChain.js structured tools
 * (`@langchain/core`), a suspension inside LangGraph (`@langchain/langgraph`) raised as its
 * `interrupt()` and settled exactly once through the coordinator when the graph is resumed
 * with `new Command({ resume: answer })` (docs/interop.md). Both packages are optional peers.
 *
 * Loading this entry without either installed throws a `MissingPeerError` that names
 * `npm install @langchain/core @langchain/langgraph`.
 */
import 'reflect-metadata';
import { langchain } from './peer';

langchain();

export { langchainTools, LANGCHAIN_RUN_PREFIX } from './tools';
export type { LangChainTool, LangChainToolsOptions, LangChainInterruptValue } from './tools';
